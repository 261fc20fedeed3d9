"""The move path below the table master: one move's step and statements, and the stores.

``move`` is a move: locked and read, stepped with no I/O, saved, as
statements (generators of ``rows`` queries); the quick move on the rows a
process's own moves left. ``rows`` writes those statements once from the
models' metadata and runs them on Django's connection; ``row_instances``
turns their rows back into model instances in the database's dialect.
``matches`` keeps a table's committed states and replays its log on a
miss. ``stores`` holds the master's stores, one per database (Django's
connection, SQLite's own transaction, PostgreSQL's asyncio connections on the
event loop). ``db`` is where the consumers' other database calls run (on the
event loop, a thread, a pool) and the asyncio transaction of the full path;
``sqlite_wal`` moves SQLite's log checkpoints off the event loop.
"""
