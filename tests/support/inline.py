"""The tests' scheduler: bot moves, searches and tally flushes at once, in the calling thread.

Installed through ``SPADES_SCHEDULER`` (the ``live`` fixture of ``conftest``),
so that a match of bots plays out deterministically inside one test.

- A move runs after the commit that scheduled it. Moves scheduled while one
  runs are queued and run in order by the outermost call (no recursion,
  however long a match of four bots).
- Timed moves (a human's turn timer before a stand-in) are kept in
  ``timers`` until the test fires them with :meth:`InlineRunner.run_timers`.
- Errors are logged and kept in ``errors``; the fixture fails the test on any.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from game.driver.scheduling import Mover
from game.master import TurnPlan
from game.research import tally_flush

log = logging.getLogger(__name__)

Task = Callable[..., Any]


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


class InlineScheduler(InlineRunner):
    """The master's scheduler for tests (``game.master.Scheduler``)."""

    def __init__(self, mover: Mover) -> None:
        super().__init__()
        self.mover = mover

    def turn(self, plan: TurnPlan) -> None:
        self.submit(
            self.mover, plan.table_id, plan.seat, plan.version, plan.stand_in, plan.away,
            delay=plan.delay, timer=plan.stand_in and not plan.away,
        )  # fmt: skip

    def search(self, job: Any) -> str:
        return job.run_here()  # type: ignore[no-any-return]

    def flush_soon(self, table_id: int) -> None:
        tally_flush.flush_pending(tables=[table_id])

    def start_sweeping(self) -> None:
        """Tests call ``sweeper.sweep()`` themselves."""
