"""A move's transaction on the SQLite connection itself (the embedded default).

On the embedded server a move's statements run on the event loop
(``game.db``), where Django's transaction and cursor layers (autocommit
switched off and on, the commit hooks, a wrapper per statement, the
async-safety check at each call) cost about as much as SQLite's own work for
the quick move's two statements (``bench_server --stacks embedded``). Here
the same statements (``game.rows``) run on the sqlite3 connection under
Django's: the same connection, so the same database, settings and errors.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

from django.db import connection

from game import rows
from game.db import Steps, drive
from game.rows import Query

T = TypeVar("T")


def own_sqlite_transaction() -> bool:
    """May :func:`run_sqlite_transaction` run now (SQLite, no transaction open)?"""
    return connection.vendor == "sqlite" and not connection.in_atomic_block


def run_sqlite_transaction(steps: Steps[T | None]) -> T | None:
    """Run the statements in a transaction of their own on the SQLite
    connection itself: committed if the generator returns a value, rolled
    back if it returns None or raises. Errors come out as Django's, as from
    a cursor (``wrap_database_errors``)."""
    connection.ensure_connection()
    raw = connection.connection

    def value_of(query: Query) -> Any:
        cursor = raw.execute(_qmark(query.sql), query.params)
        fetched = cursor.fetchall() if cursor.description else []
        return query.read(cursor.rowcount, fetched)

    with connection.wrap_database_errors:
        raw.execute("BEGIN")
        try:
            result = drive(steps, value_of)
        except BaseException:
            raw.execute("ROLLBACK")
            raise
        raw.execute("ROLLBACK" if result is None else "COMMIT")
    return result


@functools.lru_cache(maxsize=256)
def _qmark(sql: str) -> str:
    """A statement with Django's ``%s`` placeholders in SQLite's ``?`` style."""
    return rows.with_marks(sql, lambda _: "?")
