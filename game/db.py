"""Database work from the websocket consumers, with connections that are kept.

Channels' ``database_sync_to_async`` closes the connection after every call
(``CONN_MAX_AGE`` is 0, as Django advises under ASGI, where each HTTP request
gets a thread of its own). The consumers' calls keep their connections
open instead, which saves opening one for every move (a quarter of Daphne's
CPU in ``bench_server``). A connection that has failed is closed so that the
next call reconnects.

Where the calls run is ``SPADES_DB_THREADS``:

- 0 (the default with SQLite): on the event loop itself. SQLite takes one
  writer at a time and a move's transaction is a fraction of a millisecond
  of local work, less than handing it to a thread and back costs; a thread
  also competes with the event loop for the GIL at every statement
  (bench_server, embedded: 175 actions/s with the CPU saturated and p50
  290 ms on a thread, 200/s and p50 20-40 ms on the loop). Django's check
  against the ORM on an event loop is then off (settings.py).
- 1: the shared sync thread of ``sync_to_async``.
- more (the default with PostgreSQL, 8): a pool, so that the calls of
  different sockets overlap their round trips to the server. (Moves on
  PostgreSQL do not come here: ``game.moves_async`` runs them on the loop.)
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from asgiref.sync import SyncToAsync
from django.conf import settings
from django.db import connections

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def drop_broken_connections() -> None:
    """Close this thread's connections that saw an error and are no longer usable."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is None or not conn.errors_occurred:
            continue
        if conn.in_atomic_block or not conn.is_usable():
            conn.close()
        else:
            conn.errors_occurred = False


def _threads() -> int:
    return int(getattr(settings, "SPADES_DB_THREADS", 1))


def _executor() -> ThreadPoolExecutor | None:
    """The pool of database threads, or None for the shared sync thread."""
    global _pool
    threads = _threads()
    if threads <= 1:
        return None
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="spades-db")
        return _pool


class KeptConnectionSyncToAsync(SyncToAsync):
    """``sync_to_async`` on the database threads, keeping each thread's connection open."""

    def __init__(self, func: Any) -> None:
        executor = _executor()
        if executor is None:
            super().__init__(func, thread_sensitive=True)
        else:
            super().__init__(func, thread_sensitive=False, executor=executor)

    def thread_handler(self, loop: Any, *args: Any, **kwargs: Any) -> Any:
        drop_broken_connections()
        try:
            return super().thread_handler(loop, *args, **kwargs)
        finally:
            drop_broken_connections()


def db_call(func: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """``func`` as a coroutine function, run where ``SPADES_DB_THREADS`` says."""
    if _threads() > 0:
        return KeptConnectionSyncToAsync(func)

    async def on_the_loop(*args: Any, **kwargs: Any) -> Any:
        return _loop_context.run(_kept_connection_call, func, args, kwargs)

    return on_the_loop


# On an event loop Django keeps a connection per asyncio task (asgiref's Local
# falls back to a context variable there): every socket would hold its own.
# The calls made on the loop all run in this one context, so they share one.
_loop_context = contextvars.Context()


def _kept_connection_call(func: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    drop_broken_connections()
    try:
        return func(*args, **kwargs)
    finally:
        drop_broken_connections()
