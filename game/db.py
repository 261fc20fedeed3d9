"""Database work from the websocket consumers, on one thread that keeps its connection.

Channels' ``database_sync_to_async`` closes the connection after every call
(``CONN_MAX_AGE`` is 0, as Django advises under ASGI, where each HTTP request
gets a thread of its own). Every consumer call runs on the single shared
sync thread, so keeping that one connection open is safe and saves opening a
connection for every move (a quarter of Daphne's CPU in ``bench_server``).
A connection that has failed is closed so that the next call reconnects.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import SyncToAsync
from django.db import connections


def drop_broken_connections() -> None:
    """Close this thread's connections that saw an error and are no longer usable."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is None or not conn.errors_occurred:
            continue
        if conn.in_atomic_block or not conn.is_usable():
            conn.close()
        else:
            conn.errors_occurred = False


class KeptConnectionSyncToAsync(SyncToAsync):
    """``sync_to_async`` (thread-sensitive) that keeps the thread's connection open."""

    def __init__(self, func: Any) -> None:
        super().__init__(func, thread_sensitive=True)

    def thread_handler(self, loop: Any, *args: Any, **kwargs: Any) -> Any:
        drop_broken_connections()
        try:
            return super().thread_handler(loop, *args, **kwargs)
        finally:
            drop_broken_connections()


db_call = KeptConnectionSyncToAsync
