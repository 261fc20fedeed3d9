"""Where the websocket consumers' database calls run (:func:`db_call`), with
connections that are kept.

Channels' ``database_sync_to_async`` closes the connection after every call
(``CONN_MAX_AGE`` is 0, as Django advises under ASGI); keeping it saves
opening one per call (a quarter of Daphne's CPU in ``bench_server``). A
connection that has failed is closed so that the next call reconnects. The
full path's transaction on PostgreSQL's asyncio connections is
``game.moves.stores.asyncio_steps``'s.

Where ``db_call`` runs is ``SPADES_DB_THREADS`` (which ``game.builder`` hands
to :func:`use_threads`):

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
import contextvars
import functools
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import SyncToAsync
from django.db import InterfaceError, OperationalError, connection

from game.sql.connections import drop_broken_connections
from game.sql.statements import T

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


# Threads the consumers' calls run on (0: the event loop): set by game.builder.
_threads_wanted = 1


def use_threads(count: int) -> None:
    """Run :func:`db_call`'s calls on ``count`` threads (0: on the event loop)."""
    global _threads_wanted
    _threads_wanted = count


def calls_on_loop() -> bool:
    """Does :func:`db_call` run its calls on the event loop?"""
    return _threads() == 0


def _threads() -> int:
    return _threads_wanted


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
        return LOOP_CONTEXT.run(call, *args, **kwargs)

    return on_the_loop


# On an event loop Django keeps a connection per asyncio task (asgiref's Local
# falls back to a context variable there): every socket would hold its own.
# The calls made on the loop all run in this one context, so they share one.
LOOP_CONTEXT = contextvars.Context()
