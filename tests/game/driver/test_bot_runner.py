"""The in-process bot runner: a thread pool with delays, and the inline test runner."""

from __future__ import annotations

import threading
import time

from game.driver.runner import ThreadRunner
from tests.support.inline import InlineRunner


def test_thread_runner_runs_moves_after_their_delay_and_waits_until_idle() -> None:
    runner = ThreadRunner(workers=2)
    done: list[tuple[str, float]] = []
    start = time.monotonic()
    try:
        runner.submit(lambda: done.append(("later", time.monotonic() - start)), delay=0.15)
        runner.submit(lambda: done.append(("now", time.monotonic() - start)))
        assert runner.wait_idle(timeout=5)
        assert [name for name, _ in done] == ["now", "later"]
        assert done[1][1] >= 0.15
    finally:
        runner.shutdown()


def test_thread_runner_does_not_wait_for_turn_timers_and_survives_errors() -> None:
    runner = ThreadRunner(workers=1)
    fired = threading.Event()
    try:
        runner.submit(lambda: 1 / 0)  # logged, not fatal
        runner.submit(fired.set, delay=0.05, timer=True)
        runner.submit(fired.set, delay=60, timer=True)
        assert runner.wait_idle(timeout=5)
        assert runner.pending_timers() >= 1  # the long timer still waits
        assert fired.wait(timeout=5)
    finally:
        runner.shutdown()


def test_inline_runner_queues_moves_made_by_moves_instead_of_recursing() -> None:
    runner = InlineRunner()
    order: list[int] = []

    def move(n: int) -> None:
        order.append(n)
        if n < 5000:  # far deeper than the recursion limit if it recursed
            runner.submit(move, n + 1)

    runner.submit(move, 1)
    assert order == list(range(1, 5001))


def test_inline_runner_keeps_timers_until_fired() -> None:
    runner = InlineRunner()
    fired: list[str] = []
    runner.submit(fired.append, "stand-in", delay=30, timer=True)
    runner.submit(fired.append, "bot", delay=0.6)  # a pacing delay is skipped
    assert fired == ["bot"] and runner.pending_timers() == 1
    assert runner.run_timers() == 1
    assert fired == ["bot", "stand-in"] and runner.pending_timers() == 0
    runner.submit(lambda: 1 / 0)
    assert len(runner.errors) == 1
