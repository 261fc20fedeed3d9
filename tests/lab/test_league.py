"""The bidding league: reproducible by seed, resumable, and its tables."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from django.core.management import call_command

from bots.registry import BIDDERS
from game.engine.rules import Rules
from lab.tournaments.league import (
    LeagueConfig,
    bidder_stats,
    default_bidders,
    fit_ratings,
    pair_log,
    read_league,
    run_league,
)

TINY = LeagueConfig(bidders=("BIS", "RB", "MS"), games=4, seed=7)


def tables(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k in ("config", "games", "cross", "bidders")}


def test_same_seed_same_league_whatever_the_workers(tmp_path: Path) -> None:
    one = run_league(TINY, tmp_path / "a", workers=1)
    two = run_league(TINY, tmp_path / "b", workers=2)
    assert one["games"] == 12
    assert tables(one) == tables(two)
    other = run_league(LeagueConfig(TINY.bidders, 4, seed=8), tmp_path / "c")
    assert tables(other)["cross"] != tables(one)["cross"] or other["bidders"] != one["bidders"]


def test_a_stopped_league_plays_only_what_is_missing(tmp_path: Path) -> None:
    whole = run_league(TINY, tmp_path / "whole")
    logs = tmp_path / "part"
    run_league(TINY, logs)
    path = pair_log(logs, "BIS", "MS")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:10])  # two games and a torn line
    assert read_league(TINY, logs)["cross"]["BIS"]["MS"]["games"] == 2  # one whole pair
    again = run_league(TINY, logs)
    assert again["run"]["games_played_now"] == 2
    assert tables(again) == tables(whole) == tables(read_league(TINY, logs))


def test_ratings_follow_the_wins_and_the_anchor_is_zero() -> None:
    wins = {("BIS", "RB"): (700, 300), ("BIS", "MS"): (500, 500), ("RB", "MS"): (300, 700)}
    r = fit_ratings(["BIS", "RB", "MS"], wins)
    assert r["BIS"] == (0.0, 0.0)
    assert r["RB"][0] < -100 and abs(r["MS"][0]) < 20
    # 70% against the anchor alone is about -147 Elo; the fit pools every pair.
    assert r["RB"][0] == pytest.approx(-400 * math.log10(7 / 3), abs=30)
    assert 0 < r["MS"][1] < 60


def test_per_bidder_figures_from_the_rounds() -> None:
    rec = {
        "swapped": True,  # bot A sits East/West
        "rounds": [
            # N/S: 0 (nil, made) + 4, took 0 + 6: 2 bags; E/W: 3 + 5, took 4 + 3: set.
            {"bids": [0, 3, 4, 5], "blind": [False] * 4, "tricks": [0, 4, 6, 3],
             "points": [142, -80]},
        ],
    }  # fmt: skip
    a, b = bidder_stats(Rules(), [rec])
    assert (a["sets"], a["contracts"], a["bags"], a["nil_bids"]) == (1, 1, 0, 0)
    assert (b["sets"], b["contracts"], b["bags"], b["nil_bids"], b["nil_made"]) == (0, 1, 2, 1, 1)
    assert a["points"] == -80 and b["points"] == 142 and a["seat_rounds"] == 2


def test_the_command_writes_the_page_and_the_table(tmp_path: Path) -> None:
    md, js = tmp_path / "league.md", tmp_path / "league.json"
    args = ["--games", "2", "--bidders", "BIS,RB", "--logs", str(tmp_path / "logs")]
    args += ["--markdown", str(md), "--json", str(js), "--workers", "1", "--no-progress"]
    call_command("league", *args)
    summary = json.loads(js.read_text())
    assert summary["games"] == 2 and {b["bidder"] for b in summary["bidders"]} == {"BIS", "RB"}
    page = md.read_text()
    assert "python manage.py league --games 2 --seed 1 --bidders BIS,RB" in page
    assert "| BIS |" in page and "## Cross table" in page


def test_the_league_has_every_bidder_the_issue_names_that_is_registered() -> None:
    names = default_bidders()
    assert {"BIS", "BIS*", "RB", "MS", "IO"} <= set(names)
    assert any(n.startswith("SIM") for n in names)
    assert all(n in BIDDERS for n in names)
    for learned in ("NNB", "SPB"):
        assert (learned in names) == (learned in BIDDERS)
    # Every registered bidder but the test opponent and SIM0 (BIS itself).
    assert set(names) == set(BIDDERS) - {"Random", "SIM0"}
