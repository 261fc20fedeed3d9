"""Bot moves inside the server process: the embedded default's "Celery".

Without Redis there is no worker, so the master's scheduler
(``game.driver.scheduling.ThreadScheduler``) hands each move to a
:class:`ThreadRunner`, behind the same function a Celery worker runs
(``game.driver.bot_turns.take_turn``): a small thread pool, plus one scheduler
thread for moves that wait (the bots' pacing delay, the turn timer of a
human before a stand-in moves). A move runs with its own database
connection, closed afterwards.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connections

log = logging.getLogger(__name__)

Task = Callable[..., Any]


class ThreadRunner:
    def __init__(self, workers: int = 4) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="spades-bot")
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, bool, Task, tuple[Any, ...]]] = []
        self._seq = itertools.count()
        self._busy = 0  # moves queued or running, and paced moves waiting (not timers)
        self._scheduler: threading.Thread | None = None
        self._closed = False

    def submit(self, fn: Task, *args: Any, delay: float = 0.0, timer: bool = False) -> None:
        """Run ``fn(*args)`` in the pool, after ``delay`` seconds if given.

        ``timer`` marks a wait that is not work (a turn timer): :meth:`wait_idle`
        does not wait for it.
        """
        with self._cond:
            if self._closed:
                raise RuntimeError("the bot runner is shut down")
            if not timer:
                self._busy += 1
            if delay <= 0:
                self._pool.submit(self._run, fn, args, timer)
                return
            heapq.heappush(self._heap, (time.monotonic() + delay, next(self._seq), timer, fn, args))
            if self._scheduler is None:
                self._scheduler = threading.Thread(
                    target=self._schedule_loop, name="spades-bot-timer", daemon=True
                )
                self._scheduler.start()
            self._cond.notify_all()

    def _schedule_loop(self) -> None:
        with self._cond:
            while not self._closed:
                if not self._heap:
                    self._cond.wait()
                    continue
                due = self._heap[0][0] - time.monotonic()
                if due > 0:
                    self._cond.wait(timeout=due)
                    continue
                _, _, timer, fn, args = heapq.heappop(self._heap)
                if timer:
                    self._busy += 1  # a timer that fired is work now
                self._pool.submit(self._run, fn, args, False)

    def _run(self, fn: Task, args: tuple[Any, ...], timer: bool) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("bot move %s%r failed", getattr(fn, "__name__", fn), args)
        finally:
            connections.close_all()
            with self._cond:
                if not timer:
                    self._busy -= 1
                self._cond.notify_all()

    def pending_timers(self) -> int:
        with self._cond:
            return sum(1 for item in self._heap if item[2])

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until no move is queued, running or paced; True if so within ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(timeout=left)
            return True

    def shutdown(self) -> None:
        with self._cond:
            self._closed = True
            self._heap.clear()
            self._cond.notify_all()
        self._pool.shutdown(wait=True)
