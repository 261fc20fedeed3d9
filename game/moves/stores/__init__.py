"""The master's stores: storage for moves, one class per database (``game.moves.port.Store``).

The master decides the move (quick or full); a store saves it: the quick
move's compare-and-swap (``game.moves.move.quick_save_steps``, or one
statement of the same effect) and the full path's statements, each in one
transaction, calling the master's ``on_commit`` once committed, never
before. They differ only in how they reach the database:

- :class:`DjangoStore`: Django's connection, ``transaction.atomic`` (any
  database; Celery workers, the bot threads, views). On the event loop its
  saves go through ``game.moves.db.db_call``.
- :class:`SqliteStore` (the embedded default): the quick save in a
  transaction on the sqlite3 connection itself, without Django's layers;
  :class:`SqliteLoopStore` when the consumers' calls run on the event loop,
  where a move never waits for the write lock.
- :class:`PostgresStore` (the production stack): the websockets' moves on
  the event loop over asyncio connections (the full path's transaction in
  ``asyncio_steps``), the quick save as one statement and one round trip.

``game.builder`` picks one from the settings.
"""

from game.moves.stores.django import DjangoStore
from game.moves.stores.postgres import PostgresStore
from game.moves.stores.sqlite import SqliteLoopStore, SqliteStore, WriteLockBusy

__all__ = ["DjangoStore", "PostgresStore", "SqliteLoopStore", "SqliteStore", "WriteLockBusy"]
