"""The master's stores: where a move's statements run, one class per database.

Every store runs the same statements (``game.moves.move``: the quick move's, and
the full path's load, step and save) in one transaction, and calls the
master's ``committed`` once the move is committed, never before. They differ
only in how they reach the database:

- :class:`DjangoStore`: Django's connection, ``transaction.atomic`` (any
  database; Celery workers, the bot threads, views). On the event loop its
  moves go through ``game.moves.db.db_call``.
- :class:`SqliteStore` (the embedded default): the quick move in a
  transaction on the sqlite3 connection itself, without Django's layers
  ; :class:`SqliteLoopStore` when the consumers'
  calls run on the event loop, where a move never waits for the write lock.
- :class:`PostgresStore` (the production stack): the websockets' moves on
  the event loop over asyncio connections , the quick
  move as one statement and one round trip .

``game.builder`` picks one from the settings.
"""

from game.moves.stores.django import DjangoStore
from game.moves.stores.postgres import PostgresStore
from game.moves.stores.sqlite import SqliteLoopStore, SqliteStore, WriteLockBusy

__all__ = ["DjangoStore", "PostgresStore", "SqliteLoopStore", "SqliteStore", "WriteLockBusy"]
