"""``manage.py bench_bots``: runs on a tiny sample and prints every figure (no timing asserts)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from lab.management.commands.bench_bots import bid_views, percentile, play_views


def run(*args: str) -> str:
    out = StringIO()
    call_command("bench_bots", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_prints_every_figure_and_writes_json(tmp_path: Path) -> None:
    output = tmp_path / "bench.json"
    out = run(
        "--bids", "12", "--plays", "12", "--seed", "3", "--tournament-games", "2",
        "--workers", "1", "--json", str(output),
    )  # fmt: skip
    assert "Python 3." in out
    for name in ("BIS bid", "SRP play", "WRP play"):
        line = next(x for x in out.splitlines() if x.startswith(name))
        assert "seed 3, n=12" in line and "median" in line and "p99" in line
    assert "tournament BIS+SRP vs RB+SRP" in out and "2 games" in out and "10,000 games" in out
    data = json.loads(output.read_text())
    assert data["environment"]["python"].startswith("3.")
    assert [t["name"] for t in data["timings"]] == ["BIS bid", "SRP play", "WRP play"]
    assert all(t["sample"] == 12 and t["median_ms"] >= 0 for t in data["timings"])
    assert data["tournament"]["games"] == 2


def test_tournament_can_be_skipped() -> None:
    out = run("--bids", "4", "--plays", "4", "--tournament-games", "0")
    assert "BIS bid" in out and "tournament" not in out


def test_bad_options() -> None:
    with pytest.raises(CommandError):
        run("--bids", "0")
    with pytest.raises(CommandError):
        run("--bids", "2", "--plays", "2", "--tournament-games", "3")


def test_views_are_seeded_and_varied() -> None:
    a, b = bid_views(20, 5), bid_views(20, 5)
    assert [(v.hand, v.bids, v.scores) for v in a] == [(v.hand, v.bids, v.scores) for v in b]
    assert all(v.hand is not None for v in a)
    assert len({len(v.bid_order) for v in a}) > 1  # several bidding positions
    assert len({v.scores for v in a}) > 1
    plays = play_views(20, 5)
    assert len({len(v.tricks) for v in plays}) > 1  # several points of the round


def test_percentile() -> None:
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([1.0, 2.0], 0.99) == pytest.approx(1.99)
    assert percentile([5.0], 0.99) == 5.0
