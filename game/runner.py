"""Run bot moves inside the server process: the embedded default's "Celery".

Without Redis there is no worker, so ``game.turns.schedule`` hands the
move to a runner here, behind the same function a Celery worker runs
(``game.bot_turns.play_turn``):

- :class:`ThreadRunner` (``make run``): a small thread pool, plus one
  scheduler thread for moves that wait (the bots' pacing delay, the turn
  timer of a human before a stand-in moves). A move runs with its own
  database connection, closed afterwards.
- :class:`InlineRunner` (tests, ``SPADES_BOTS_INLINE = True``): runs a move at
  once in the calling thread, after the commit that scheduled it. Moves
  scheduled while one runs are queued and run in order by the outermost
  call (no recursion, however long a match of four bots). Timed moves
  (stand-ins) are kept in ``timers`` until a test fires them with
  :meth:`InlineRunner.run_timers`. Errors are logged and kept in ``errors``.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import connections

from bots import solver_compiled

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


class InlineRunner:
    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self.timers: list[tuple[float, Task, tuple[Any, ...]]] = []
        self.errors: list[BaseException] = []

    def submit(self, fn: Task, *args: Any, delay: float = 0.0, timer: bool = False) -> None:
        if timer and delay > 0:
            with self._lock:
                self.timers.append((delay, fn, args))
            return
        queue: deque[tuple[Task, tuple[Any, ...]]] | None = getattr(self._local, "queue", None)
        if queue is not None:  # a move scheduled by a move: the outer loop runs it
            queue.append((fn, args))
            return
        queue = self._local.queue = deque([(fn, args)])
        try:
            while queue:
                task, task_args = queue.popleft()
                try:
                    task(*task_args)
                except Exception as e:
                    name = getattr(task, "__name__", task)
                    log.exception("bot move %s%r failed", name, task_args)
                    with self._lock:
                        self.errors.append(e)
        finally:
            self._local.queue = None

    def run_timers(self) -> int:
        """Fire every waiting timer now (as if the time ran out); how many fired."""
        with self._lock:
            due, self.timers = self.timers, []
        for _, fn, args in due:
            self.submit(fn, *args)
        return len(due)

    def pending_timers(self) -> int:
        with self._lock:
            return len(self.timers)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        return True

    def shutdown(self) -> None:
        with self._lock:
            self.timers.clear()


Runner = ThreadRunner | InlineRunner

_runners: dict[str, Runner] = {}
_runners_lock = threading.Lock()


def get_runner() -> Runner:
    """The process's runner for the current settings (inline in tests)."""
    inline = bool(getattr(settings, "SPADES_BOTS_INLINE", False))
    key = "inline" if inline else "threads"
    with _runners_lock:
        runner = _runners.get(key)
        if runner is None:
            if inline:
                runner = InlineRunner()
            else:
                runner = ThreadRunner(int(getattr(settings, "SPADES_BOT_WORKERS", 4)))
                # Its searching bots need the compiled kernels: load them now.
                solver_compiled.warm_up_in_background()
            _runners[key] = runner
        return runner


def reset_runners() -> None:
    """Drop the runners (tests): timers are forgotten, pools shut down."""
    with _runners_lock:
        runners = list(_runners.values())
        _runners.clear()
    for runner in runners:
        runner.shutdown()
