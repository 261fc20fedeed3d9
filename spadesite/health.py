"""``/healthz``: whether this server process can serve, for a load balancer or
an uptime monitor.

JSON, in milliseconds: a database round trip, a Redis ping when there is one
is set, and the age of each Celery queue's freshest worker heartbeat
(``spadesite/heartbeat.py``). No personal data: counts and timings only.
Status 503 (``"status": "down"``) when the database does not answer: the
process cannot serve a page. Redis down or a queue without a live worker is
``"degraded"`` with 200: every process shares them, so taking this one out
of the balancer would not help, and the monitor reads the word.
"""

from __future__ import annotations

import time
from typing import Any

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from game import redis_clients
from spadesite import heartbeat

# A heartbeat older than this: the queue's workers are taken as gone (3 beats missed).
STALE_AFTER_SECONDS = 3 * heartbeat.EVERY_SECONDS
REDIS_TIMEOUT_SECONDS = 0.5


def _ms(began: float) -> float:
    return round((time.perf_counter() - began) * 1000, 2)


def check_database() -> dict[str, Any]:
    began = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:  # any failure is an answer: down
        return {"ok": False, "error": type(error).__name__, "ms": _ms(began)}
    return {"ok": True, "ms": _ms(began)}


def check_redis(url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(Redis's answer, each queue's freshest worker)."""
    began = time.perf_counter()
    client = redis.Redis.from_url(
        url, socket_timeout=REDIS_TIMEOUT_SECONDS, socket_connect_timeout=REDIS_TIMEOUT_SECONDS
    )
    try:
        client.ping()
        ping = {"ok": True, "ms": _ms(began)}
        queues = getattr(settings, "SPADES_HEALTH_QUEUES", heartbeat.QUEUES)
        ages = heartbeat.freshest(client, queues)
    except redis.RedisError as error:
        return {"ok": False, "error": type(error).__name__, "ms": _ms(began)}, {}
    finally:
        client.close()
    workers = {
        queue: {"ok": age is not None and age <= STALE_AFTER_SECONDS, "heartbeat_age_s": age}
        for queue, age in ages.items()
    }
    return ping, workers


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    began = time.perf_counter()
    body: dict[str, Any] = {"database": check_database()}
    if (shared := redis_clients.shared()) is not None:
        body["redis"], body["workers"] = check_redis(shared)
    if not body["database"]["ok"]:
        status = "down"
    elif shared is not None and not (
        body["redis"]["ok"] and all(w["ok"] for w in body["workers"].values())
    ):
        status = "degraded"
    else:
        status = "ok"
    body = {"status": status, **body, "ms": _ms(began)}
    return JsonResponse(body, status=503 if status == "down" else 200)
