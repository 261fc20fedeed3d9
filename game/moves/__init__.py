"""The move path below the table master: one move's step and statements, and the stores.

``port`` holds the types the master is handed and hands a store (below
both: a store never imports the master). ``move`` is a move: locked and
read, stepped with no I/O, saved, as statements (generators of ``rows``
queries, ``game.sql`` values); the quick move on the rows a process's own
moves left. ``rows`` writes those statements once from the models'
metadata. ``matches`` keeps a table's committed states and replays its log
on a miss. ``stores`` holds the master's storage, one store per database
(Django's connection, SQLite's own transaction, PostgreSQL's asyncio
connections on the event loop). ``db`` is where the consumers' other
database calls run (on the event loop, a thread, a pool); ``sqlite_wal``
moves SQLite's log checkpoints off the event loop.
"""
