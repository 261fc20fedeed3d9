"""Worker pools for the long batch runs (tournaments, self-play).

A run that is stopped with SIGTERM (``kill``, a supervisor, a session's end)
would by default die at once and leave its pool's workers orphaned, playing
on until their current game ends and then waiting forever. While a pool from
:func:`worker_pool` is open, SIGTERM instead exits the main process through
the pool's ``__exit__`` (which terminates the workers) and the callers'
``finally`` blocks (which close their logs), as Ctrl-C does.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.pool import Pool
from types import FrameType
from typing import Any


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    # A forked worker inherits the main process's handler; Pool.terminate() stops
    # workers with SIGTERM, which must simply end them.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if initializer is not None:
        initializer(*initargs)


@contextmanager
def exit_on_sigterm() -> Iterator[None]:
    """While open (on the main thread), SIGTERM exits through the callers'
    ``finally`` blocks, as Ctrl-C does: a Celery run's collector lets go of its run."""
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


@contextmanager
def worker_pool(
    workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
) -> Iterator[Pool]:
    """``multiprocessing.Pool(workers)`` whose workers end with the run, SIGTERM included."""
    with (
        exit_on_sigterm(),
        multiprocessing.Pool(workers, _start_worker, (initializer, initargs)) as pool,
    ):
        yield pool
