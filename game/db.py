"""Where the server's database work runs, and how a move's statements are run.

Two kinds of work:

- **Statements of the move path** (``game.rows``), produced by generators
  such as ``game.moves.move_steps``: :func:`run_steps` runs them on Django's
  connection (Celery workers, HTTP views, SQLite, in-process bots) and
  :func:`run_steps_async` on an asyncio connection of :class:`ConnectionPool`
  (the websockets' moves on PostgreSQL). Both run the very same statements.
- **Other ORM calls of the websocket consumers** (:func:`db_call`), with
  connections that are kept. Channels' ``database_sync_to_async`` closes the
  connection after every call (``CONN_MAX_AGE`` is 0, as Django advises under
  ASGI); keeping it saves opening one per call (a quarter of Daphne's CPU in
  ``bench_server``). A connection that has failed is closed so that the next
  call reconnects.

Where ``db_call`` runs is ``SPADES_DB_THREADS``:

- 0 (the default with SQLite): on the event loop itself. SQLite takes one
  writer at a time and a move's transaction is a fraction of a millisecond
  of local work, less than handing it to a thread and back costs; a thread
  also competes with the event loop for the GIL at every statement
  (bench_server, embedded: 175 actions/s with the CPU saturated and p50
  290 ms on a thread, 200/s and p50 20-40 ms on the loop). Django's check
  against the ORM on an event loop is then off (settings.py).
- 1: the shared sync thread of ``sync_to_async``.
- more (the default with PostgreSQL, 8): a pool, so that the calls of
  different sockets overlap their round trips to the server.

Moves on PostgreSQL skip the threads (``SPADES_ASYNC_MOVES``): in a thread,
each of a move's round trips hands the GIL back and forth with the event
loop, and the hand-over itself (asgiref's ``SyncToAsync``) cost more than the
move (bench_server, Redis stack: Daphne at 80% of a core for 200 moves/s in
threads, 58% with the same statements on the loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import threading
import weakref
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import psycopg
from asgiref.sync import SyncToAsync
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, connections

from game.rows import Query, Step

T = TypeVar("T")
Steps = Generator[Step, Any, T]
TUPLES_OK = psycopg.pq.ExecStatus.TUPLES_OK

# ----- statements on Django's connection ----------------------------------------------


def run_steps(steps: Steps[T]) -> T:
    """Run a generator of statements on Django's connection (in the caller's
    transaction): each yielded :class:`Query` is executed and its value sent
    back (a batch's one by one, their values as a tuple); returns what the
    generator returns."""

    def value_of(query: Query) -> Any:
        with connection.cursor() as cursor:
            cursor.execute(query.sql, query.params)
            fetched = cursor.fetchall() if cursor.description else []
            return query.read(cursor.rowcount, fetched)

    return drive(steps, value_of)


def drive(steps: Steps[T], value_of: Callable[[Query], Any]) -> T:
    """Run ``steps`` with ``value_of`` executing each statement."""
    try:
        step = next(steps)
        while True:
            if isinstance(step, tuple):
                step = steps.send(tuple(value_of(query) for query in step))
            else:
                step = steps.send(value_of(step))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


# ----- statements on asyncio connections (PostgreSQL) ---------------------------------

DEFAULT_ASYNC_CONNECTIONS = 4
APPLICATION_NAME = "spades moves"  # in pg_stat_activity
_IDLE = psycopg.pq.TransactionStatus.IDLE


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
        if conn.closed or conn.broken or conn.info.transaction_status != _IDLE:
            self.opened -= 1
            hold(asyncio.ensure_future(conn.close()))  # the next acquire opens a fresh one
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
            hold(asyncio.ensure_future(self.idle.get_nowait().close()))


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
    that the first moves find their connections open (``game.stores.PostgresStore``)."""
    if _pools.get(asyncio.get_running_loop()) is not None:
        return
    task = hold(asyncio.ensure_future(pool().fill()))
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


async def run_steps_async(conn: psycopg.AsyncConnection[Any], steps: Steps[T]) -> T:
    """:func:`run_steps` as one transaction on an asyncio connection (autocommit),
    one round trip per value the generator waits for, plus the commit.

    Statements are bound on the client (psycopg's ``ClientCursor``: its
    literals are quoted by libpq's rules) and sent together as one
    simple-protocol message: ``BEGIN`` with the first batch that wants a
    value, writes nobody reads with the next message, ``COMMIT`` last. A move
    (BEGIN, the version's compare-and-swap, the table and its seats; then the
    INSERT and COMMIT) is two messages and two round trips. The extended
    protocol's pipeline mode also took two round trips, but its per-statement
    messages and result bookkeeping cost Daphne about twice the CPU (1.16 ms
    against 0.64 ms a move, docs/scaling.md). A failure rolls the transaction
    back before it is raised: nothing is half-written."""
    cursor = psycopg.AsyncClientCursor(conn)
    unsent = ["BEGIN"]
    try:
        step = next(steps)
        while True:
            batch = step if isinstance(step, tuple) else (step,)
            unsent.extend(cursor.mogrify(query.sql, query.params) for query in batch)
            values: list[Any] = [None] * len(batch)
            if any(query.wants_result for query in batch):
                await cursor.execute("; ".join(unsent))
                # Results in order: what was waiting to be sent, then the batch's.
                for _ in range(len(unsent) - len(batch)):
                    cursor.nextset()
                for n, query in enumerate(batch):
                    if n:
                        cursor.nextset()
                    if query.wants_result:
                        result = cursor.pgresult
                        rows_out = result is not None and result.status == TUPLES_OK
                        fetched = await cursor.fetchall() if rows_out else []
                        values[n] = query.read(cursor.rowcount, fetched)
                unsent = []
            step = steps.send(tuple(values) if isinstance(step, tuple) else values[0])
    except StopIteration as done:
        unsent.append("COMMIT")
        try:
            await cursor.execute("; ".join(unsent))
        except BaseException:
            await _roll_back(conn)
            raise
        return done.value  # type: ignore[no-any-return]
    except BaseException:
        await _roll_back(conn)
        raise


async def _roll_back(conn: psycopg.AsyncConnection[Any]) -> None:
    """End a failed move's transaction block, if the connection still has one
    (a broken connection is dropped by the pool instead)."""
    if conn.closed or conn.broken or conn.info.transaction_status == _IDLE:
        return
    with contextlib.suppress(psycopg.Error):
        await conn.execute("ROLLBACK")


# Tasks started on the loop and awaited by no one: the loop keeps only weak
# references to tasks, so they are held here until done.
_running: set[asyncio.Future[Any]] = set()


def hold(task: asyncio.Future[Any]) -> asyncio.Future[Any]:
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task


# ----- the consumers' other calls ----------------------------------------------------

_thread_pool: ThreadPoolExecutor | None = None
_thread_pool_lock = threading.Lock()


def drop_broken_connections() -> None:
    """Close this thread's connections that saw an error and are no longer usable."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is None or not conn.errors_occurred:
            continue
        if conn.in_atomic_block or not conn.is_usable():
            conn.close()
        else:
            conn.errors_occurred = False


def calls_on_loop() -> bool:
    """Does :func:`db_call` run its calls on the event loop (``SPADES_DB_THREADS`` 0)?"""
    return _threads() == 0


def _threads() -> int:
    return int(getattr(settings, "SPADES_DB_THREADS", 1))


def _executor() -> ThreadPoolExecutor | None:
    """The pool of database threads, or None for the shared sync thread."""
    global _thread_pool
    threads = _threads()
    if threads <= 1:
        return None
    with _thread_pool_lock:
        if _thread_pool is None:
            _thread_pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="spades-db")
        return _thread_pool


def _connection_lost() -> bool:
    """Did this thread's connection die (closed, or no longer answering)?"""
    conn = connection
    return conn.connection is None or not conn.is_usable()


def _reconnecting(func: Callable[..., T]) -> Callable[..., T]:
    """``func`` once more on a new connection if it failed because the kept one
    had died (a server restart, a terminated backend). The consumers' calls are
    reads, idempotent writes and version-checked moves, so a second run is safe."""

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> T:
        drop_broken_connections()
        try:
            return func(*args, **kwargs)
        except (OperationalError, InterfaceError):
            if not _connection_lost():
                raise
            connection.close()
            return func(*args, **kwargs)
        finally:
            drop_broken_connections()

    return call


class KeptConnectionSyncToAsync(SyncToAsync):
    """``sync_to_async`` on the database threads, keeping each thread's connection open."""

    def __init__(self, func: Any) -> None:
        executor = _executor()
        if executor is None:
            super().__init__(_reconnecting(func), thread_sensitive=True)
        else:
            super().__init__(_reconnecting(func), thread_sensitive=False, executor=executor)


def db_call(func: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """``func`` as a coroutine function, run where ``SPADES_DB_THREADS`` says."""
    if _threads() > 0:
        return KeptConnectionSyncToAsync(func)

    call = _reconnecting(func)

    async def on_the_loop(*args: Any, **kwargs: Any) -> Any:
        return _loop_context.run(call, *args, **kwargs)

    return on_the_loop


# On an event loop Django keeps a connection per asyncio task (asgiref's Local
# falls back to a context variable there): every socket would hold its own.
# The calls made on the loop all run in this one context, so they share one.
_loop_context = contextvars.Context()
