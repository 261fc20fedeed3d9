"""The embedded default's analyses yield to the server: a batch waits while
the server process itself is busy and goes once it is quiet (or after the
longest wait, so that the backlog never grows for ever)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace

import pytest

from game.replays import child


def shares(*values: float) -> Callable[[float], float]:
    """A server whose CPU share over each sample is ``values``, then idle."""
    given: Iterator[float] = iter(values)

    def share(seconds: float) -> float:
        time.sleep(seconds)
        return next(given, 0.0)

    return share


def test_a_quiet_server_analyses_after_one_sample() -> None:
    assert child.wait_until_quiet(sample=0.01, longest=5, share=shares(0.1)) == 0


def test_a_busy_server_holds_the_batch_until_it_is_quiet() -> None:
    assert child.wait_until_quiet(sample=0.01, longest=5, share=shares(0.9, 1.0, 0.7, 0.2)) == 3


def test_a_server_busy_for_ever_still_gets_its_analyses_after_the_longest_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A clock that moves only by the samples, so that a loaded machine's late
    # wake-ups (3 samples in 0.2 s once, in CI) do not change what is counted.
    clock = [100.0]
    monkeypatch.setattr(child, "time", SimpleNamespace(monotonic=lambda: clock[0]))

    def busy_for_ever(seconds: float) -> float:
        clock[0] += seconds
        return 1.0

    assert child.wait_until_quiet(sample=0.25, longest=1.0, share=busy_for_ever) == 3
    assert clock[0] == 101.0  # it went at the longest wait, not a sample later


def test_the_share_is_this_process_cpu() -> None:
    """A thread spinning in this process shows in its share; an idle one does not.
    The spinner's own CPU is the yardstick, so a machine busy with other work
    (which gives the spinner less of a core) does not fail it."""
    idle = child.server_share(0.1)
    stop = time.monotonic() + 0.4
    spun: list[float] = []

    def spin() -> None:
        start = time.thread_time()
        while time.monotonic() < stop:
            pass
        spun.append(time.thread_time() - start)

    thread = threading.Thread(target=spin)
    thread.start()
    busy = child.server_share(0.3)
    thread.join()
    # the 0.3 s window lies inside the 0.4 s spin: it sees most of the spinner's share
    assert idle < 0.2 and idle < busy and busy >= 0.5 * spun[0] / 0.4
