"""SQLite's stores (the embedded default): a move's transaction on the SQLite connection itself.

On the embedded server a move's statements run on the event loop
(``game.moves.db``), where Django's transaction and cursor layers (autocommit
switched off and on, the commit hooks, a wrapper per statement, the
async-safety check at each call) cost about as much as SQLite's own work for
the quick move's two statements (``bench_server --stacks embedded``). Here
the same statements (``game.moves.rows``) run on the sqlite3 connection under
Django's: the same connection, so the same database, settings and errors.

On the event loop a move must not wait for SQLite's write lock, which another
connection of the process holds now and then (the tally flush's thread, a bot
runner's move, a truncating checkpoint): SQLite's own wait sleeps in the
thread that asks, and there that is every socket's. :func:`run_sqlite_transaction`
can instead fail at once with :class:`WriteLockBusy`, having taken nothing,
and :func:`move_when_free` tries again after yielding the loop.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from django.db import connection

from game.moves import db, move
from game.moves.move import Outcome, Quick
from game.moves.port import OnCommit
from game.moves.stores.django import DjangoStore
from game.sql.statements import Query, Steps, drive, with_marks

T = TypeVar("T")


class WriteLockBusy(Exception):
    """Another connection holds SQLite's write lock: nothing was done; try again."""


# Seconds a move on the loop keeps trying without waiting, between tries
# doubling from the first to the last pause; then it waits in SQLite as before.
# A try refused costs the loop some 50 us; the last pause bounds how long a
# move waits past the lock's release (the tally flush holds it 1-7 ms).
PATIENCE, FIRST_PAUSE, LAST_PAUSE = 5.0, 0.0005, 0.002


async def move_when_free(call: Callable[[bool], Awaitable[T]]) -> T:
    """``call(wait=False)`` until it is not refused with :class:`WriteLockBusy`,
    yielding the loop between tries; past :data:`PATIENCE`, ``call(wait=True)``."""
    loop = asyncio.get_running_loop()
    give_up_at = loop.time() + PATIENCE
    pause = FIRST_PAUSE
    while loop.time() < give_up_at:
        try:
            return await call(False)
        except WriteLockBusy:
            await asyncio.sleep(pause)
            pause = min(2 * pause, LAST_PAUSE)
    return await call(True)


def begin_without_waiting(raw: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE`` (the write lock taken now), or :class:`WriteLockBusy`
    at once, with no transaction open, when another connection holds it."""
    timeout = int(raw.execute("PRAGMA busy_timeout").fetchone()[0])
    raw.execute("PRAGMA busy_timeout = 0")
    try:
        raw.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as e:
        if raw.in_transaction or "locked" not in str(e):
            raise
        raise WriteLockBusy from None
    finally:
        raw.execute(f"PRAGMA busy_timeout = {timeout}")


def begin_waiting(raw: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE``: the write lock taken now, waiting for it in SQLite
    (its busy timeout). Not a deferred ``BEGIN``: statements that read first
    would hold only a snapshot, and in WAL mode their first write fails at
    once with "database is locked", without waiting, if another connection
    committed since (a round's last card read its stand-in moves first)."""
    raw.execute("BEGIN IMMEDIATE")


def run_sqlite_transaction(steps: Steps[T | None], wait: bool = True) -> T | None:
    """Run the statements in a transaction of their own on the SQLite
    connection itself: committed if the generator returns a value, rolled
    back if it returns None or raises. Errors come out as Django's, as from
    a cursor (``wrap_database_errors``). Not ``wait``: :class:`WriteLockBusy`
    when another connection writes, the generator not started."""
    connection.ensure_connection()
    raw = connection.connection

    def value_of(query: Query) -> Any:
        cursor = raw.execute(_qmark(query.sql), query.params)
        fetched = cursor.fetchall() if cursor.description else []
        return query.read(cursor.rowcount, fetched)

    with connection.wrap_database_errors:
        if wait:
            begin_waiting(raw)
        else:
            begin_without_waiting(raw)
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
    return with_marks(sql, lambda _: "?")


class SqliteStore(DjangoStore):
    """SQLite: the quick move's save in a transaction of its own on the sqlite3
    connection (when the caller holds none); else, and for the full path,
    Django's."""

    def save_quick(self, quick: Quick, committed: OnCommit, wait: bool = True) -> bool:
        if connection.in_atomic_block:
            return super().save_quick(quick, committed)
        done = run_sqlite_transaction(move.quick_save_steps(quick), wait=wait)
        if done is None:
            return False  # nothing written: the full path
        committed(done)
        return True


class SqliteLoopStore(SqliteStore):
    """:class:`SqliteStore` with the consumers' calls on the event loop
    (``SPADES_DB_THREADS`` 0): a socket's move never waits there for the write
    lock; refused at once, it yields the loop and tries again. Both run in
    the context the loop's database calls share (``game.moves.db.db_call``):
    the same connection, and no thread."""

    async def save_quick_on_loop(self, quick: Quick, committed: OnCommit) -> bool:
        async def call(wait: bool) -> bool:
            return db.LOOP_CONTEXT.run(self.save_quick, quick, committed, wait)

        return await move_when_free(call)

    async def run_full_on_loop(
        self, steps: Callable[[], Steps[Outcome]], committed: OnCommit
    ) -> Outcome:
        return db.LOOP_CONTEXT.run(self.run_full, steps, committed)
