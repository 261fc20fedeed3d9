"""The load benchmark's figures (game.loadtest): percentiles and the per-second view."""

from __future__ import annotations

from game.loadtest import Figures


def test_by_second_groups_deliveries_by_when_the_action_was_sent() -> None:
    figures = Figures()
    # A steady second, then a burst whose deliveries are slow.
    for i in range(100):
        figures.timeline.append((1000.0 + i / 100, 10.0 + i % 3))
    for i in range(50):
        figures.timeline.append((1001.2 + i / 100, 300.0 + i))
    seconds = figures.by_second()
    assert [b["second"] for b in seconds] == [0, 1]
    assert [b["deliveries"] for b in seconds] == [100, 50]
    assert seconds[0]["max_ms"] == 12.0 and seconds[0]["p50_ms"] == 11.0
    assert seconds[1]["max_ms"] == 349.0 and seconds[1]["p99_ms"] > 340
    assert figures.summary()["by_second"] == seconds


def test_no_deliveries_no_seconds() -> None:
    assert Figures().by_second() == []
    assert Figures().summary()["p99_ms"] is None
