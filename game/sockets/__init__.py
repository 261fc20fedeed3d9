"""The table's websockets and the channel layer.

``consumers`` is the table socket: it checks each frame (``limits``: rate
limits; ``client_frames``: every field), hands a move to the table master
(``game.master``) and chat to ``talk``, and sends each seat its own state
(``frames``). The broadcast of a committed move is one group message
(``events``: the announcer the master is handed; ``memory_layer``: the
embedded default's in-memory layer; ``pubsub_layer``: the production
stack's Redis layer),
handed straight to this process's table sockets (``fanout``) and written to
each socket at once (``socket_writes``). ``watchers`` keeps who watches a
table, ``visits`` the players' periodic visits, ``auth`` and ``routing`` the
socket's user and URL.
"""
