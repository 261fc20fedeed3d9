"""Redis clients for the small shared state of the production stack.

Rate-limit counters (``game.sockets.limits``) and who watches a table
(``game.sockets.watchers``) live in Redis when ``REDIS_URL`` is set, so every server
process sees the same; without it they live in the process's memory. One
synchronous client per process, one asyncio client per event loop (a client
may not cross loops). Short timeouts: a slow Redis must not stall a socket.
"""

from __future__ import annotations

import asyncio
import weakref

import redis
import redis.asyncio as aioredis
from django.conf import settings

TIMEOUT = 1.0  # seconds

_sync_client: redis.Redis | None = None
_async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aioredis.Redis] = (
    weakref.WeakKeyDictionary()
)


def redis_url() -> str | None:
    """The shared Redis, or None in the embedded default."""
    return getattr(settings, "REDIS_URL", None) or None


def sync_client() -> redis.Redis:
    global _sync_client
    if _sync_client is None:
        _sync_client = redis.Redis.from_url(redis_url(), socket_timeout=TIMEOUT)
    return _sync_client


def async_client() -> aioredis.Redis:
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        client = _async_clients[loop] = aioredis.Redis.from_url(redis_url(), socket_timeout=TIMEOUT)
    return client
