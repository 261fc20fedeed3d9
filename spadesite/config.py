"""Turn environment values into Django settings.

Kept apart from settings.py as plain functions so that tests can check the
switch between the embedded default and the production stack without
reloading the settings module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

IN_MEMORY_CHANNEL_LAYER = "game.sockets.memory_layer.TableChannelLayer"
# channels_redis' pub/sub layer (about half the CPU per broadcast of its core
# Redis layer, and twice the sockets held in our measurements:
# docs/architecture.md), handing group messages straight to the table sockets.
REDIS_PUBSUB_CHANNEL_LAYER = "game.sockets.pubsub_layer.TablePubSubLayer"

SQLITE_INIT_COMMAND = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
# No JIT compilation: the site's statements take milliseconds, and a dashboard
# query whose estimate passed jit_above_cost spent 68 of its 85 ms compiling
# (docs/exports.md, "Performance: the tallies").
POSTGRES_OPTIONS = "-c jit=off"


@dataclass(frozen=True)
class PoolSize:
    """psycopg's connection pool of one process (Django's ``OPTIONS["pool"]``).

    Every thread of a server process that touches the ORM (a request's, a
    websocket's database thread) borrows a connection from it and gives it
    back when Django closes its connection, so a process never holds more than
    ``max_size`` connections however many requests arrive: the others wait
    up to ``timeout`` seconds for one and then get the 503 page
    (``spadesite.busy``). Unpooled, a crowd opened one connection per request
    until PostgreSQL refused everyone ("too many clients"). The arithmetic
    against PostgreSQL's ``max_connections`` is in docs/studies.md, "Sizing"."""

    min_size: int = 1
    max_size: int = 20
    timeout: float = 5.0

    def options(self) -> dict[str, Any]:
        return {"min_size": self.min_size, "max_size": self.max_size, "timeout": self.timeout}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_bool(name: str, value: str | None, default: bool) -> bool:
    """Read a yes/no environment value; unset or empty means `default`."""
    if value is None or not value.strip():
        return default
    word = value.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name} must be one of 1/0, true/false, yes/no, on/off; got {value!r}"
    )


def env_list(value: str | None, default: list[str]) -> list[str]:
    """Read a comma-separated environment value; unset or empty means `default`."""
    if value is None or not value.strip():
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def default_database_url(base_dir: Path) -> str:
    """The embedded default: one SQLite file in the checkout."""
    return f"sqlite:///{base_dir / 'db.sqlite3'}"


def database(url: str, pool: PoolSize | None = None) -> dict[str, Any]:
    """Django's DATABASES["default"] for a sqlite:/// or postgres:// URL; on
    PostgreSQL with ``pool``, its connections come from a pool of that size."""
    try:
        config = dj_database_url.parse(url)
    except ValueError as error:
        raise ImproperlyConfigured(f"DATABASE_URL {url!r} is not usable: {error}") from error
    result = dict(config)
    if result.get("ENGINE") == "django.db.backends.sqlite3":
        # Write-ahead log, and no fsync on every commit: a commit in the default
        # rollback journal costs about 19 ms on this kind of machine (three fsyncs),
        # which capped the embedded server near 30 moves per second; in WAL mode
        # with synchronous=NORMAL about 0.02 ms. A crash of the process loses
        # nothing; a power cut may lose the last moments of play.
        options = dict(result.get("OPTIONS") or {})
        options.setdefault("init_command", SQLITE_INIT_COMMAND)
        # Every transaction takes the write lock at its BEGIN, waiting for it
        # (the busy timeout) if need be. A deferred one that reads first (a seat
        # taken, say) would fail at its first write, at once and without
        # waiting, whenever another connection (a bot thread, the tally flush)
        # committed after its read: WAL mode cannot upgrade a stale snapshot.
        options.setdefault("transaction_mode", "IMMEDIATE")
        result["OPTIONS"] = options
    elif result.get("ENGINE") == "django.db.backends.postgresql":
        options = dict(result.get("OPTIONS") or {})
        options.setdefault("options", POSTGRES_OPTIONS)  # a URL's ?options=... wins
        if pool is not None:
            options["pool"] = pool.options()
            # The pool checks a connection as it lends it (one empty query), so
            # that after a PostgreSQL restart no request is lent a dead one.
            result["CONN_HEALTH_CHECKS"] = True
        result["OPTIONS"] = options
    return result


def channel_layers(redis_url: str | None) -> dict[str, dict[str, Any]]:
    """CHANNEL_LAYERS: Redis pub/sub when a Redis URL is given, else in-memory.

    The in-memory layer only reaches consumers in the same process, which is
    right for the single-process embedded default and nothing else.
    """
    if redis_url:
        return {
            "default": {
                "BACKEND": REDIS_PUBSUB_CHANNEL_LAYER,
                "CONFIG": {"hosts": [redis_url]},
            }
        }
    return {"default": {"BACKEND": IN_MEMORY_CHANNEL_LAYER}}


def celery_urls(redis_url: str | None) -> tuple[str, str | None]:
    """(broker URL, result backend URL) for Celery.

    Without Redis, bots run in-process (SPADES_BOTS_IN_PROCESS) and Celery is
    never asked to send anything; the in-memory broker only keeps the Celery
    app importable without a network service.
    """
    if redis_url:
        return redis_url, redis_url
    return "memory://", None
