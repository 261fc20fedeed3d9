"""PostgreSQL's store: the websockets' moves on the event loop, over asyncio connections.

Other callers (Celery workers, views) move on Django's connection, as
:class:`~game.moves.stores.django.DjangoStore`. On the loop a move takes a
connection of the loop's :class:`ConnectionPool` (filled at the first
socket); the quick move is one statement and one round trip
(:func:`run_alone`), the full path one transaction of two round trips
(``asyncio_steps.run_steps_async``).

**The quick move's one statement, with no cursor.** In Daphne's profile of the
Redis stack, psycopg's cursor and its parameter dumpers cost more CPU than
the rest of the move's database work; here the statement is sent and awaited
on the event loop with libpq's own calls (0.106 -> 0.059 ms of CPU a
statement in a same-run microbenchmark). It is prepared once per connection
and parameter types, so PostgreSQL parses and plans it once rather than at
every move, and its parameters go in text format: PostgreSQL's CPU per action
0.56-0.58 -> 0.42-0.44 ms and the bytes sent to it 562 -> 273
(``bench_server --stacks redis``, docs/scaling.md).
``tests/game/moves/stores/test_postgres_statements.py`` checks that values arrive as psycopg's
binding sends them, that errors are psycopg's, and that a statement is
prepared once. A connection pooler put in front of PostgreSQL in transaction
mode would have to keep prepared statements per client (PgBouncer 1.21 and
later: ``max_prepared_statements``).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import Any

import psycopg
from django.conf import settings
from django.db import connections
from psycopg.types.json import Jsonb

from game.moves import db, rows
from game.moves.move import Outcome, Quick
from game.moves.port import OnCommit
from game.moves.stores import asyncio_steps
from game.moves.stores.django import DjangoStore
from game.sql.statements import Query, Steps, with_marks

DEFAULT_ASYNC_CONNECTIONS = 4
APPLICATION_NAME = "spades moves"  # in pg_stat_activity


class ConnectionPool:
    """Up to ``size`` asyncio connections, opened when first needed.

    The moves of different tables overlap on them; a table's own moves queue
    on its row lock. A broken connection is dropped, and the next acquire
    opens another.
    """

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

    async def fill(self) -> None:
        """Open connections up to ``size`` ahead of the moves (the first moves
        after a start would otherwise each wait for a new connection)."""
        while self.opened < self.size:
            self.opened += 1
            try:
                conn = await _connect()
            except BaseException:
                self.opened -= 1
                raise
            self.idle.put_nowait(conn)

    def release(self, conn: psycopg.AsyncConnection[Any]) -> None:
        if conn.closed or conn.broken or conn.info.transaction_status != asyncio_steps.IDLE:
            self.opened -= 1
            db.hold(asyncio.ensure_future(conn.close()))  # the next acquire opens a fresh one
            if conn.closed or conn.broken:
                self.drop_idle()
            return
        self.idle.put_nowait(conn)

    def drop_idle(self) -> None:
        """Close the idle connections: one was found dead, and what killed it (a
        restart, terminated backends) most likely killed them too; the next
        moves open fresh ones instead of each failing on a dead one first."""
        while not self.idle.empty():
            self.opened -= 1
            db.hold(asyncio.ensure_future(self.idle.get_nowait().close()))


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ConnectionPool] = (
    weakref.WeakKeyDictionary()
)


def pool() -> ConnectionPool:
    """This event loop's pool (``SPADES_ASYNC_DB_CONNECTIONS`` connections)."""
    loop = asyncio.get_running_loop()
    found = _pools.get(loop)
    if found is None:
        size = int(getattr(settings, "SPADES_ASYNC_DB_CONNECTIONS", DEFAULT_ASYNC_CONNECTIONS))
        found = _pools[loop] = ConnectionPool(size)
    return found


def warm_up_pool() -> None:
    """On the server's event loop, once: fill its pool in the background, so
    that the first moves find their connections open (``game.moves.stores.PostgresStore``)."""
    if _pools.get(asyncio.get_running_loop()) is not None:
        return
    task = db.hold(asyncio.ensure_future(pool().fill()))
    # A failure here only means the moves open their own connections.
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


async def _connect() -> psycopg.AsyncConnection[Any]:
    """A connection like Django's: same parameters and type adapters (JSON arrives
    as text for the fields' converters, timestamps in Django's time zone),
    autocommit (each move opens its own transaction block)."""
    wrapper = connections["default"]
    params = wrapper.get_connection_params()
    params.pop("cursor_factory", None)  # Django's are synchronous cursors
    options = wrapper.settings_dict.get("OPTIONS") or {}
    # The moves' statements go as simple-protocol text (run_steps_async), which
    # PostgreSQL never prepares; anything else run here may be prepared.
    params["prepare_threshold"] = options.get("prepare_threshold", 5)
    params.setdefault("application_name", APPLICATION_NAME)
    conn = await psycopg.AsyncConnection.connect(autocommit=True, **params)
    if settings.USE_TZ and wrapper.timezone_name:
        await conn.execute(wrapper.ops.set_time_zone_sql(), [wrapper.timezone_name])
    return conn


TUPLES_OK = psycopg.pq.ExecStatus.TUPLES_OK


async def run_alone(conn: psycopg.AsyncConnection[Any], query: Query) -> Any:
    """One statement that returns no rows, as its own transaction (the
    connection is in autocommit): one round trip; its value, read from its row
    count. A parameter of a type :func:`_bind` does not take goes through
    psycopg's client-side binding instead."""
    bound = _bind(query.params)
    if bound is None:
        cursor = psycopg.AsyncClientCursor(conn)
        await cursor.execute(cursor.mogrify(query.sql, query.params))
        return query.read(cursor.rowcount, [])
    values, types = bound
    async with conn.lock:
        name = await _prepared(conn, query.sql, types)
        conn.pgconn.send_query_prepared(name, values)
        result = await _result(conn.pgconn)
    if result.status != psycopg.pq.ExecStatus.COMMAND_OK:
        if result.status == TUPLES_OK:
            raise TypeError("run_alone takes a statement that returns no rows")
        _raise(conn, result)
    tuples = result.command_tuples
    return query.read(-1 if tuples is None else tuples, [])


def _raise(conn: psycopg.AsyncConnection[Any], result: psycopg.pq.abc.PGresult) -> None:
    """The error of a failed result, as psycopg's ``execute`` raises it."""
    if conn.pgconn.status == psycopg.pq.ConnStatus.BAD:
        message = (result.error_message or b"").decode(errors="replace").strip()
        raise psycopg.OperationalError(f"the connection is lost: {message}")
    raise psycopg.errors.error_from_result(result, encoding=conn.info.encoding)


async def _prepared(conn: psycopg.AsyncConnection[Any], sql: str, types: tuple[int, ...]) -> bytes:
    """The name of ``sql`` prepared on this connection for these parameter
    types (prepared on first use: parsed and planned once per connection)."""
    names: dict[tuple[str, tuple[int, ...]], bytes] | None = getattr(conn, "_spades_prepared", None)
    if names is None:
        names = conn._spades_prepared = {}  # type: ignore[attr-defined]
    name = names.get((sql, types))
    if name is None:
        name = f"spades_{len(names)}".encode()
        conn.pgconn.send_prepare(name, _numbered(sql).encode(), types)
        result = await _result(conn.pgconn)
        if result.status != psycopg.pq.ExecStatus.COMMAND_OK:
            _raise(conn, result)
        names[(sql, types)] = name
    return name


def _numbered(sql: str) -> str:
    """Django's ``%s`` placeholders as PostgreSQL's ``$1``, ``$2``, ..."""
    return with_marks(sql, lambda n: f"${n}")


async def _result(pgconn: psycopg.pq.abc.PGconn) -> psycopg.pq.abc.PGresult:
    """Wait on the event loop for the result of what was just sent on a
    nonblocking connection (what psycopg's ``execute`` generator does, in fewer steps)."""
    loop = asyncio.get_running_loop()
    fd = pgconn.socket
    while pgconn.flush():
        await _ready(loop.add_writer, loop.remove_writer, fd)
    while True:
        pgconn.consume_input()
        if not pgconn.is_busy():
            break
        await _ready(loop.add_reader, loop.remove_reader, fd)
    last = None
    while (result := pgconn.get_result()) is not None:
        last = result
    if last is None:
        raise psycopg.OperationalError("the server sent no result")
    return last


async def _ready(add: Callable[..., Any], remove: Callable[[int], Any], fd: int) -> None:
    """Until ``fd`` is ready (``add``/``remove``: the loop's reader or writer)."""
    ready = asyncio.get_running_loop().create_future()
    add(fd, lambda: ready.done() or ready.set_result(None))
    try:
        await ready
    finally:
        remove(fd)


# The parameter types a move's statement binds: sent typed as PostgreSQL would
# read the literals psycopg's client-side binding writes (a string untyped, as
# a quoted literal is, so that its column decides).
_INT8, _BOOL, _TIMESTAMPTZ, _JSONB, _UNKNOWN = 20, 16, 1184, 3802, 0


def _bind(params: list[Any]) -> tuple[list[bytes | None], tuple[int, ...]] | None:
    """The parameters in text format and their types, or None (a type this
    does not bind: the caller falls back to psycopg's client-side binding)."""
    values: list[bytes | None] = []
    types: list[int] = []
    for value in params:
        if value is None:
            values.append(None)
            types.append(_UNKNOWN)
        elif isinstance(value, bool):
            values.append(b"t" if value else b"f")
            types.append(_BOOL)
        elif isinstance(value, int):
            values.append(str(value).encode())
            types.append(_INT8)
        elif isinstance(value, str):
            values.append(value.encode())
            types.append(_UNKNOWN)
        elif isinstance(value, datetime) and value.tzinfo is not None:
            values.append(value.isoformat().encode())
            types.append(_TIMESTAMPTZ)
        elif isinstance(value, Jsonb):
            values.append(value.dumps(value.obj).encode())
            types.append(_JSONB)
        else:
            return None
    return values, tuple(types)


class PostgresStore(DjangoStore):
    """PostgreSQL with the websockets' moves on the event loop, over the pool's
    asyncio connections; other callers (workers, threads) on Django's.

    A save once started on the loop runs to its end even if its caller is
    cancelled (its socket closed): a commit must never go unannounced."""

    def __init__(self) -> None:
        self._running: set[asyncio.Future[Any]] = set()

    def warm_up(self) -> None:
        warm_up_pool()

    async def save_quick_on_loop(self, quick: Quick, committed: OnCommit) -> bool:
        return await self._to_the_end(self._save_quick(quick, committed))  # type: ignore[no-any-return]

    async def run_full_on_loop(
        self, steps: Callable[[], Steps[Outcome]], committed: OnCommit
    ) -> Outcome:
        return await self._to_the_end(self._run_full(steps, committed))  # type: ignore[no-any-return]

    async def _to_the_end(self, saving: Coroutine[Any, Any, Any]) -> Any:
        running = asyncio.ensure_future(saving)
        # The loop holds tasks only weakly: the saves under way are held here.
        self._running.add(running)
        running.add_done_callback(self._running.discard)
        # A refusal nobody waits for any more is not an error to report.
        running.add_done_callback(lambda done: done.cancelled() or done.exception())
        return await asyncio.shield(running)

    async def _save_quick(self, quick: Quick, committed: OnCommit) -> bool:
        """The quick move's save as one statement and one round trip: the
        compare-and-swap and the INSERT (and a finished round's pending round),
        which change nothing if the table moved on or its seats changed since."""
        conns = pool()
        conn = await conns.acquire()
        try:
            r = quick.outcome.result
            query = rows.quick_move_query(
                quick.table, quick.version, r.round_number, r.seat, r.action, r.by_stand_in,
                quick.now, quick.outcome.pending_round, quick.think,
            )  # fmt: skip
            made = await run_alone(conn, query)
        except psycopg.OperationalError:
            # The full path tries again on a fresh connection; had this committed
            # after all, its version check refuses the move as stale.
            if not (conn.broken or conn.closed):
                raise
            return False
        finally:
            conns.release(conn)
        if made:
            committed(quick.outcome)
        return bool(made)

    async def _run_full(self, steps: Callable[[], Steps[Outcome]], committed: OnCommit) -> Outcome:
        conns = pool()
        for attempt in (1, 2):
            conn = await conns.acquire(fresh=attempt > 1)
            try:
                # One transaction; when it returns, the move is committed.
                outcome = await asyncio_steps.run_steps_async(conn, steps())
                break
            except psycopg.OperationalError:
                # A connection that died while idle (the server restarted, say): once
                # more on a fresh one. Should the first attempt have committed after
                # all, the version check refuses the second as stale.
                if attempt == 2 or not (conn.broken or conn.closed):
                    raise
            finally:
                conns.release(conn)
        committed(outcome)
        return outcome
