"""The lab: what studies the bots and measures the server, apart from the site.

Nothing here runs when people play: the site (``game``, ``bots``, ``lobby``,
``spadesite``) never imports the lab, and the lab may import all of it (the
top layer of docs/architecture.md). A Django app only so that its management
commands (tournament, league, training, benchmarks) are found.
"""
