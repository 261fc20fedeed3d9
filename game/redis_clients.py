"""Redis clients for the small shared state of the production stack.

Rate-limit counters (``game.sockets.limits``), who watches a table
(``game.sockets.watchers``) and a move task's starts (``game.driver.redelivery``)
live in Redis on the production stack, so every server process sees the
same; ``game.builder`` hands the URL in (:func:`use_url`, from ``REDIS_URL``)
and chooses, for each of them, Redis or the process's memory. One
synchronous client per process, one asyncio client per event loop (a client
may not cross loops). Short timeouts: a slow Redis must not stall a socket.
"""

from __future__ import annotations

import asyncio
import weakref

import redis
import redis.asyncio as aioredis

TIMEOUT = 1.0  # seconds

_url: str | None = None
_sync_client: redis.Redis | None = None
_async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, aioredis.Redis] = (
    weakref.WeakKeyDictionary()
)


def use_url(url: str | None) -> None:
    """The builder's: the shared Redis (None in the embedded default). The
    clients of another URL are dropped (a test that sets ``REDIS_URL``)."""
    global _url, _sync_client
    if url != _url:
        _url, _sync_client = url, None
        _async_clients.clear()


def shared() -> str | None:
    """The shared Redis's URL the builder handed in; None: there is none (the
    embedded default). /healthz, /metrics and the workers' heartbeats ask
    here, not the settings."""
    return _url


def sync_client() -> redis.Redis:
    global _sync_client
    if _sync_client is None:
        _sync_client = redis.Redis.from_url(_url, socket_timeout=TIMEOUT)
    return _sync_client


def async_client() -> aioredis.Redis:
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        client = _async_clients[loop] = aioredis.Redis.from_url(_url, socket_timeout=TIMEOUT)
    return client
