"""The default database's SQL dialect, for the statements the move path writes
itself (``game.rows``, ``game.row_instances``): quoting, value preparation,
converters.

Not ``django.db.connection``: on an event loop that is a different wrapper in
every asyncio task (asgiref's ``Local`` falls back to a context variable there),
each with its operations, features, creation and introspection objects, all in
reference cycles that only the garbage collector frees. A move on PostgreSQL
runs in a task of its own, so every move made and dropped one such wrapper; in
``bench_server``'s Redis stack they were most of Daphne's garbage, and the
collections that freed them paused the loop for 10-50 ms at a time. This one
is made once per process and never connected: it only speaks the dialect.
"""

from __future__ import annotations

from functools import cache

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper


@cache
def dialect() -> BaseDatabaseWrapper:
    """The default database's backend, never connected (its ``ops``, ``features``)."""
    return connections.create_connection(DEFAULT_DB_ALIAS)


def quote(name: str) -> str:
    return dialect().ops.quote_name(name)
