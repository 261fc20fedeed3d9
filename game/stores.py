"""The master's stores: where a move's statements run, one class per database.

Every store runs the same statements (``game.moves``: the quick move's, and
the full path's load, step and save) in one transaction, and calls the
master's ``committed`` once the move is committed, never before. They differ
only in how they reach the database:

- :class:`DjangoStore`: Django's connection, ``transaction.atomic`` (any
  database; Celery workers, the bot threads, views). On the event loop its
  moves go through ``game.db.db_call``.
- :class:`SqliteStore` (the embedded default): the quick move in a
  transaction on the sqlite3 connection itself, without Django's layers
  (``game.sqlite_moves``); :class:`SqliteLoopStore` when the consumers'
  calls run on the event loop, where a move never waits for the write lock.
- :class:`PostgresStore` (the production stack): the websockets' moves on
  the event loop over asyncio connections (``game.db``'s pool), the quick
  move as one statement and one round trip (``game.statement``).

``game.builder`` picks one from the settings.
"""

from __future__ import annotations

import asyncio

import psycopg
from django.db import connection, transaction
from django.utils import timezone

from game import db, moves, rows, sqlite_moves, statement, tally_flush
from game.master import Committed, Move
from game.move_step import Outcome, quick_step
from game.sqlite_moves import WriteLockBusy

__all__ = ["DjangoStore", "PostgresStore", "SqliteLoopStore", "SqliteStore", "WriteLockBusy"]


class DjangoStore:
    """Moves on Django's connection: the quick move's two statements, or the
    full path, in one ``transaction.atomic``; ``committed`` on its commit
    (the outermost one, should the caller hold a transaction)."""

    @property
    def flush_steps(self) -> tuple[int, float]:
        """(rounds, pause) of a live tally flush's steps (``game.tally_flush``)."""
        return tally_flush.LIVE_BATCH, tally_flush.LIVE_PAUSE

    def move(self, move: Move, committed: Committed, wait: bool = True) -> Outcome:
        with transaction.atomic():
            now = timezone.now()
            outcome = None
            if move.may_be_quick:
                outcome = db.run_steps(
                    moves.quick_move_steps(move.table_id, move.seat, move.action, move.version, now)
                )
            if outcome is None:
                outcome = db.run_steps(moves.move_steps(
                    move.table_id, move.seat, move.action, move.version, move.by_stand_in, now,
                    move.while_away,
                ))  # fmt: skip
            transaction.on_commit(lambda: committed(outcome))
        return outcome

    async def move_on_loop(self, move: Move, committed: Committed) -> Outcome:
        return await db.db_call(self.move)(move, committed)  # type: ignore[no-any-return]

    def warm_up(self) -> None:
        """Nothing to open ahead: Django opens its connections when asked."""


class SqliteStore(DjangoStore):
    """SQLite: the quick move in a transaction of its own on the sqlite3
    connection (when the caller holds none); else, and for the full path,
    Django's."""

    @property
    def flush_steps(self) -> tuple[int, float]:
        """Shorter steps: each holds the one write lock the moves wait for."""
        return tally_flush.SQLITE_BATCH, tally_flush.SQLITE_PAUSE

    def move(self, move: Move, committed: Committed, wait: bool = True) -> Outcome:
        if move.may_be_quick and not connection.in_atomic_block:
            steps = moves.quick_move_steps(
                move.table_id, move.seat, move.action, move.version, timezone.now()
            )
            done = sqlite_moves.run_sqlite_transaction(steps, wait=wait)
            if done is not None:
                committed(done)
                return done
            # None, with nothing written: the full path.
        return super().move(move, committed)


class SqliteLoopStore(SqliteStore):
    """:class:`SqliteStore` with the consumers' calls on the event loop
    (``SPADES_DB_THREADS`` 0): a socket's move never waits there for the write
    lock; refused at once, it yields the loop and tries again."""

    async def move_on_loop(self, move: Move, committed: Committed) -> Outcome:
        call = db.db_call(self.move)
        return await sqlite_moves.move_when_free(  # type: ignore[no-any-return]
            lambda wait: call(move, committed, wait)
        )


class PostgresStore(DjangoStore):
    """PostgreSQL with the websockets' moves on the event loop, over the pool's
    asyncio connections; other callers (workers, threads) on Django's."""

    async def move_on_loop(self, move: Move, committed: Committed) -> Outcome:
        """A move once started runs to its end even if the caller is cancelled
        (its socket closed): a commit must never go unannounced."""
        running = db.hold(asyncio.ensure_future(self._move_async(move, committed)))
        # A refusal nobody waits for any more is not an error to report.
        running.add_done_callback(lambda done: done.cancelled() or done.exception())
        return await asyncio.shield(running)  # type: ignore[no-any-return]

    def warm_up(self) -> None:
        db.warm_up_pool()

    async def _move_async(self, move: Move, committed: Committed) -> Outcome:
        pool = db.pool()
        quick = await self._quick_move(pool, move)
        if quick is not None:
            committed(quick)
            return quick
        for attempt in (1, 2):
            conn = await pool.acquire(fresh=attempt > 1)
            try:
                # One transaction; when it returns, the move is committed.
                steps = moves.move_steps(
                    move.table_id, move.seat, move.action, move.version, move.by_stand_in,
                    timezone.now(), move.while_away,
                )  # fmt: skip
                outcome = await db.run_steps_async(conn, steps)
                break
            except psycopg.OperationalError:
                # A connection that died while idle (the server restarted, say): once
                # more on a fresh one. Should the first attempt have committed after
                # all, the version check refuses the second as stale.
                if attempt == 2 or not (conn.broken or conn.closed):
                    raise
            finally:
                pool.release(conn)
        committed(outcome)
        return outcome

    async def _quick_move(self, pool: db.ConnectionPool, move: Move) -> Outcome | None:
        """The quick move as one statement and one round trip: the compare-and-swap
        and the INSERT (and a finished round's pending round), which change
        nothing if the table moved on or its seats changed since. None: take
        the full path."""
        found = moves.known(move.table_id, move.version) if move.may_be_quick else None
        if found is None:
            return None
        known, match = found
        now = timezone.now()
        outcome = quick_step(match, known, move.seat, move.action, False, now)
        if outcome is None:
            return None
        conn = await pool.acquire()
        try:
            r = outcome.result
            query = rows.quick_move_query(
                known.table, move.version, r.round_number, r.seat, r.action, r.by_stand_in, now,
                outcome.pending_round,
            )  # fmt: skip
            made = await statement.run_alone(conn, query)
        except psycopg.OperationalError:
            # The full path tries again on a fresh connection; had this committed
            # after all, its version check refuses the move as stale.
            if not (conn.broken or conn.closed):
                raise
            return None
        finally:
            pool.release(conn)
        return outcome if made else None
