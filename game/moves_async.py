"""Moves on the server's event loop, for PostgreSQL: ``service.move_steps`` on asyncio connections.

The websocket consumers used to hand each move to a thread (``game.db``) that
ran ``submit_action`` on Django's connection. With PostgreSQL a move is six
round trips to the server; in a thread each of them hands the GIL back and
forth with the event loop, and the hand-over itself (asgiref's
``SyncToAsync``) costs more than the move (bench_server, Redis stack: Daphne
at 80% of a core for 200 moves/s in threads, 58% with the same statements
run on the loop). Here the very same statements (one write path:
``service.move_steps``, which also serves ``submit_action``) run on psycopg's
asyncio connections, so a move waits for PostgreSQL without blocking the
loop or touching a thread.

A small pool of connections per event loop (``SPADES_ASYNC_DB_CONNECTIONS``,
default 4) lets the moves of different tables overlap; a table's own moves
queue on its row lock, as before. The connections are made from Django's
settings with Django's own type adapters (JSON arrives as text for the
fields' converters, timestamps in Django's time zone). A broken connection
is dropped, and the next move opens another.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Any, TypeVar

import psycopg
from django.conf import settings
from django.db import connections
from django.utils import timezone

from game import rows, service
from game.engine import Action as EngineAction

log = logging.getLogger(__name__)

T = TypeVar("T")
DEFAULT_CONNECTIONS = 4
APPLICATION_NAME = "spades moves"  # in pg_stat_activity


def enabled() -> bool:
    """Do the consumers' moves run here (PostgreSQL, and not switched off)?"""
    engine = settings.DATABASES["default"]["ENGINE"]
    return bool(getattr(settings, "SPADES_ASYNC_MOVES", False)) and "postgresql" in engine


class ConnectionPool:
    """Up to ``size`` asyncio connections, opened when first needed."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self.opened = 0
        self.idle: asyncio.Queue[psycopg.AsyncConnection[Any]] = asyncio.Queue()

    async def acquire(self, fresh: bool = False) -> psycopg.AsyncConnection[Any]:
        """An idle connection, or a new one while fewer than ``size`` are open
        (``fresh``: a new one first, if there is room)."""
        if (fresh or self.idle.empty()) and self.opened < self.size:
            self.opened += 1
            try:
                return await _connect()
            except BaseException:
                self.opened -= 1
                raise
        return await self.idle.get()

    def release(self, conn: psycopg.AsyncConnection[Any]) -> None:
        if conn.closed or conn.broken or conn.info.transaction_status != _IDLE:
            self.opened -= 1
            _hold(asyncio.ensure_future(conn.close()))  # the next acquire opens a fresh one
            return
        self.idle.put_nowait(conn)


# Tasks started here and not awaited by anyone: the loop keeps only weak
# references to tasks, so they are held until done.
_running: set[asyncio.Future[Any]] = set()


def _hold(task: asyncio.Future[Any]) -> asyncio.Future[Any]:
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task


_IDLE = psycopg.pq.TransactionStatus.IDLE
_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ConnectionPool] = (
    weakref.WeakKeyDictionary()
)


def _pool() -> ConnectionPool:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None:
        size = int(getattr(settings, "SPADES_ASYNC_DB_CONNECTIONS", DEFAULT_CONNECTIONS))
        pool = _pools[loop] = ConnectionPool(size)
    return pool


async def _connect() -> psycopg.AsyncConnection[Any]:
    """A connection like Django's: same parameters and type adapters, autocommit
    (each move opens its own transaction block)."""
    wrapper = connections["default"]
    params = wrapper.get_connection_params()
    params.pop("cursor_factory", None)  # Django's are synchronous cursors
    options = wrapper.settings_dict.get("OPTIONS") or {}
    # Django turns prepared statements off for connection poolers unless told;
    # these connections run the same few statements all day, so prepare them
    # (psycopg's default) unless the settings say otherwise.
    params["prepare_threshold"] = options.get("prepare_threshold", 5)
    params.setdefault("application_name", APPLICATION_NAME)
    conn = await psycopg.AsyncConnection.connect(autocommit=True, **params)
    if settings.USE_TZ and wrapper.timezone_name:
        await conn.execute(wrapper.ops.set_time_zone_sql(), [wrapper.timezone_name])
    return conn


async def run_steps(conn: psycopg.AsyncConnection[Any], steps: Any) -> Any:
    """``service.run_steps`` on an asyncio connection."""
    try:
        query: rows.Query = next(steps)
        while True:
            async with conn.cursor() as cursor:
                await cursor.execute(query.sql, query.params)
                fetched = await cursor.fetchall() if cursor.description else []
                value = query.read(cursor.rowcount, fetched)
            query = steps.send(value)
    except StopIteration as done:
        return done.value


async def submit_action(
    table_id: int,
    seat: int,
    action: EngineAction | dict[str, Any],
    expected_version: int,
    *,
    by_stand_in: bool = False,
) -> service.SubmitResult:
    """``service.submit_action`` on the event loop: the same checks, statements,
    errors and after-commit work (caches, the group message, a bot's turn).

    A move once started runs to its end even if the caller is cancelled (its
    socket closed): a commit must never go unannounced.
    """
    parsed = service.parse_submission(seat, action, expected_version)
    move = _hold(
        asyncio.ensure_future(_submit(table_id, seat, parsed, expected_version, by_stand_in))
    )
    # A refusal nobody waits for any more is not an error to report.
    move.add_done_callback(lambda done: done.cancelled() or done.exception())
    return await asyncio.shield(move)  # type: ignore[no-any-return]


async def _submit(
    table_id: int, seat: int, parsed: EngineAction, expected_version: int, by_stand_in: bool
) -> service.SubmitResult:
    pool = _pool()
    for attempt in (1, 2):
        conn = await pool.acquire(fresh=attempt > 1)
        try:
            async with conn.transaction():
                steps = service.move_steps(
                    table_id, seat, parsed, expected_version, by_stand_in, timezone.now()
                )
                result, after = await run_steps(conn, steps)
            break
        except psycopg.OperationalError:
            # A connection that died while idle (the server restarted, say): once
            # more on a fresh one. Should the first attempt have committed after
            # all, the version check refuses the second as stale.
            if attempt == 2 or not (conn.broken or conn.closed):
                raise
        finally:
            pool.release(conn)
    after.remember()
    try:
        after.announce()
    except Exception:
        log.exception("the group message of table %s failed", table_id)
    if after.plan is not None:
        # Scheduling a bot may talk to Celery's broker: not on the loop.
        future = asyncio.get_running_loop().run_in_executor(None, service.schedule_plan, after.plan)
        _hold(future).add_done_callback(_log_failure)
    return result


def _log_failure(future: asyncio.Future[Any]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("scheduling a bot move failed", exc_info=future.exception())
