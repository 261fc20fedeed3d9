"""``manage.py calibrate_uct`` and ``search_regret``: seeded search positions, and the
figures they print (tiny budgets; no timing asserts)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bots.uct import UCT
from game.engine.state import Phase
from game.engine.view import SeatView
from lab.management.commands.calibrate_uct import search_positions


def test_positions_are_where_the_player_searches_and_repeat_by_seed() -> None:
    views, per_round = search_positions(3, 6, seed=4)
    assert len(views) == 6 and per_round > 0
    uct = UCT(tricks=3)
    for view in views:
        assert view.phase is Phase.PLAYING and 13 - len(view.tricks) <= 3
        assert uct.needs_search(view)
    again, _ = search_positions(3, 6, seed=4)
    assert [v.to_dict() for v in again] == [v.to_dict() for v in views]


def test_positions_come_one_from_each_round() -> None:
    # UCT13 searches ~30 moves a round: taking every one would give one or two deals.
    views, per_round = search_positions(13, 8, seed=4)
    assert per_round > 8

    def round_key(view: SeatView) -> tuple:
        played = [c for t in view.tricks for c in t.cards] + list(view.trick)
        return (view.dealer, view.bids, tuple(played[:1]))  # a round's views give 1-2 keys

    assert len({round_key(v) for v in views}) == 8


def test_prints_and_writes_the_figures(tmp_path: Path) -> None:
    output = tmp_path / "cal.json"
    out = StringIO()
    call_command(
        "calibrate_uct", "--tricks", "3", "--positions", "3", "--budget", "0.01",
        "--seed", "2", "--json", str(output), stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "UCT3: iterations in 0.01 s median" in text and "searched moves per round" in text
    (row,) = json.loads(output.read_text())
    assert row["player"] == "UCT3" and row["positions"] == 3 and row["median"] >= 1
    assert row["p10"] <= row["median"] <= row["p90"]
    by_left = row["by_tricks_left"]
    assert sum(b["positions"] for b in by_left.values()) == 3
    assert all(1 <= int(left) <= 3 and b["median"] >= 1 for left, b in by_left.items())
    assert "by tricks left: " in text


def test_calibrates_the_paired_root(tmp_path: Path) -> None:
    output = tmp_path / "cal.json"
    call_command(
        "calibrate_uct", "--tricks", "5", "--positions", "2", "--budget", "0.02",
        "--root", "paired", "--json", str(output), stdout=StringIO(),
    )  # fmt: skip
    (row,) = json.loads(output.read_text())
    assert row["player"] == "UCT5p" and row["positions"] == 2


@pytest.mark.parametrize(
    "args", [["--tricks", "x"], ["--tricks", "14"], ["--positions", "0"], ["--root", "all"]]
)
def test_bad_options(args: list[str]) -> None:
    with pytest.raises(CommandError):
        call_command("calibrate_uct", *args, stdout=StringIO())


def test_search_regret_prints_and_writes_the_figures(tmp_path: Path) -> None:
    output = tmp_path / "regret.json"
    out = StringIO()
    call_command(
        "search_regret", "--tricks", "9", "--min-left", "8", "--positions", "2",
        "--iterations", "12", "--reference", "24", "--repeats", "2", "--seed", "3",
        "--json", str(output), stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "2 positions of UCT9 with at least 8 tricks left" in text
    assert "ucb" in text and "paired" in text and "srp" in text
    report = json.loads(output.read_text())
    rows = report["regret"]
    assert rows["ucb"]["choices"] == rows["paired"]["choices"] == 4
    assert rows["srp"]["choices"] == 2
    assert all(r["mean_regret"] >= 0 and 0 <= r["best_card_share"] <= 1 for r in rows.values())
    assert report["se_ratio_unpaired_to_paired_median"] > 0


@pytest.mark.parametrize(
    "args", [["--tricks", "14"], ["--min-left", "10", "--tricks", "9"], ["--repeats", "0"]]
)
def test_search_regret_bad_options(args: list[str]) -> None:
    with pytest.raises(CommandError):
        call_command("search_regret", *args, stdout=StringIO())
