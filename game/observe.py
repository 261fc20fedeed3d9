"""This process's counters for ``/metrics`` (``spadesite/metrics.py`` serves them).

Kept in ``game`` because the move path and the table sockets count into them,
and the site's layers only import downward: the hooks are one line each
(``game/master.py``: the moves; ``game/sockets/consumers.py``: sockets and
refused frames). Each process has its own registry, so Prometheus scrapes
every Daphne process on its own port (docs/deploy.md, "Metrics").
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from prometheus_client import Counter, Gauge, Histogram

MOVES = Counter("spades_moves", "Moves committed by this process", ["path"])
# Buckets around the figures of docs/scaling.md: a quick move is a few
# milliseconds, a loaded server's p99 some tens.
MOVE_SECONDS = Histogram(
    "spades_move_seconds",
    "Time from a move's submission to its commit in this process",
    ["path"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
OPEN_SOCKETS = Gauge("spades_open_sockets", "Table websockets open on this process")
FRAMES_REFUSED = Counter(
    "spades_frames_refused", "Client frames refused by this process, by reason", ["code"]
)

F = TypeVar("F", bound=Callable[..., Any])


def timed_move(function: F) -> F:
    """Count a submission that commits, and time it (a refused one raises
    and is not a move). ``path``: ``socket`` on the event loop, else ``call``."""
    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def on_loop(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            result = await function(*args, **kwargs)
            MOVE_SECONDS.labels("socket").observe(time.perf_counter() - began)
            MOVES.labels("socket").inc()
            return result

        return cast(F, on_loop)

    @functools.wraps(function)
    def called(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        result = function(*args, **kwargs)
        MOVE_SECONDS.labels("call").observe(time.perf_counter() - began)
        MOVES.labels("call").inc()
        return result

    return cast(F, called)


def socket_opened() -> None:
    OPEN_SOCKETS.inc()


def socket_closed() -> None:
    OPEN_SOCKETS.dec()


def frame_refused(code: str) -> None:
    FRAMES_REFUSED.labels(code).inc()
