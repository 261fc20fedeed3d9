"""Celery workers' heartbeats in Redis, read by ``/healthz`` (``spadesite/health.py``).

Each worker process, once ready, adds its node name to the sorted set
``spades:heartbeat:<queue>`` of every queue it consumes, scored by the time
(seconds since the epoch), every :data:`EVERY_SECONDS`, and renews the key's
TTL (:data:`TTL_SECONDS`): the highest score is the queue's freshest worker,
read in one command however large the rest of Redis is (no SCAN), and a queue
whose workers all stopped loses its key after the TTL. Celery beat beats the
same way as the queue ``beat``. Celery's own
heartbeats need gossip and mingle, which the stack's workers turn off
(``lab/stack/stackprocs.py``), and its ``inspect ping`` takes a second.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

import redis

log = logging.getLogger(__name__)

KEY_PREFIX = "spades:heartbeat:"
EVERY_SECONDS = 5.0
TTL_SECONDS = 30
# Queues /healthz expects a worker for, when Redis is configured; "beat" is
# Celery beat's own (spadesite/celery.py), there being one beat a deployment.
BEAT = "beat"
QUEUES = ("bots", "search", "replays", BEAT)


def key(queue: str) -> str:
    return f"{KEY_PREFIX}{queue}"


def beat(client: redis.Redis, queues: Iterable[str], node: str, now: float | None = None) -> None:
    """Write one heartbeat for each queue."""
    stamp = time.time() if now is None else now
    pipe = client.pipeline(transaction=False)
    for queue in queues:
        pipe.zadd(key(queue), {node: stamp})
        pipe.zremrangebyscore(key(queue), "-inf", stamp - TTL_SECONDS)  # stopped nodes
        pipe.expire(key(queue), TTL_SECONDS)
    pipe.execute()


def start(url: str, queues: Iterable[str], node: str) -> threading.Thread:
    """A daemon thread that beats until the process exits; a Redis error is
    logged and tried again at the next beat."""
    names = sorted(set(queues))
    client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)

    def run() -> None:
        while True:
            try:
                beat(client, names, node)
            except redis.RedisError as error:
                log.warning("heartbeat to Redis failed: %r", error)
            time.sleep(EVERY_SECONDS)

    thread = threading.Thread(target=run, name="spades-heartbeat", daemon=True)
    thread.start()
    return thread


def freshest(
    client: redis.Redis, queues: Iterable[str], now: float | None = None
) -> dict[str, float | None]:
    """Per queue, the age in seconds of its freshest heartbeat (None: none alive)."""
    now = time.time() if now is None else now
    names = list(queues)
    pipe = client.pipeline(transaction=False)
    for queue in names:
        pipe.zrevrange(key(queue), 0, 0, withscores=True)
    ages: dict[str, float | None] = {}
    for queue, top in zip(names, pipe.execute(), strict=True):
        ages[queue] = round(max(0.0, now - float(top[0][1])), 3) if top else None
    return ages
