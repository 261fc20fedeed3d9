"""Checks ``docs/examples/analyse_study.py`` against a direct count of an export's
CSV files (``tests/studies/test_analysis.py``, and the browser's end-to-end run)."""

from __future__ import annotations

import csv
import json
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from game.research.intervals import wilson_interval

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "examples" / "analyse_study.py"
TABLE_3 = ("over", "fourteen", "under", "strong over", "own nil", "partner's nil",
           "opponent's nil", "nil against nil", "strong under", "double nil")  # fmt: skip
TYPE_OF_ROW = dict(zip(TABLE_3, (
    "over", "fourteen", "under", "strong over", "we nil", "partner nil", "opponents nil",
    "nil vs nil", "strong under", "double nil"), strict=True))  # fmt: skip


def read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def run(folder: Path, tmp: Path, *flags: str) -> tuple[str, dict[str, Any]]:
    figures = tmp / f"figures{''.join(flags)}.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), str(folder), "--json", str(figures), *flags],
        check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return done.stdout, json.loads(figures.read_text())


def direct_count(
    folder: Path, include_pilot: bool, include_stand_in: bool, include_excluded: bool = False
) -> dict[str, Any]:
    """The figures counted from the CSV files with the csv module: the round type
    seen from the partnership's participant seats, a win when it outscored the
    opponents; think times of the participants' own bids and card plays."""
    people = {r["pseudonym"]: r for r in read(folder / "participants.csv")}
    n: Counter[tuple[str, str]] = Counter()
    wins: Counter[tuple[str, str]] = Counter()
    per_condition: Counter[str] = Counter()
    left: Counter[str] = Counter({"pilot": 0, "excluded": 0, "stand_in": 0})
    stand_in_of = {}
    for r in read(folder / "rounds.csv"):
        stand_in = r["stand_in_round"] == "true" or r["stand_in_fill"] == "true"
        stand_in_of[r["table"], r["round"]] = stand_in
        for side, opponents in (("ns", "ew"), ("ew", "ns")):
            seats = [s for s in side if r[f"player_kind_{s}"] == "participant"
                     and r[f"player_{s}"] in people]  # fmt: skip
            if not seats:
                continue
            pilot = any(people[r[f"player_{s}"]]["pilot"] == "true" for s in seats)
            if pilot and not include_pilot:
                left["pilot"] += 1
                continue
            excluded = any(people[r[f"player_{s}"]]["excluded"] == "true" for s in seats)
            if excluded and not include_excluded:
                left["excluded"] += 1
                continue
            if not include_stand_in and stand_in:
                left["stand_in"] += 1
                continue
            per_condition[r["condition"]] += 1
            won = int(r[f"points_{side}"]) > int(r[f"points_{opponents}"])
            for kind in {r[f"round_type_{s}"] for s in seats}:
                n[r["condition"], kind] += 1
                wins[r["condition"], kind] += won
    times: dict[tuple[str, str], list[float]] = {}
    for a in read(folder / "actions.csv"):
        person = people.get(a["player"])
        kind = json.loads(a["action"])["type"]
        if a["player_kind"] != "participant" or person is None or kind not in ("bid", "play"):
            continue
        if a["by_stand_in"] == "true" or not a["think_ms"]:
            continue
        if not include_pilot and person["pilot"] == "true":
            continue
        if not include_excluded and person["excluded"] == "true":
            continue
        stand_in = stand_in_of.get((a["table"], a["round"]), False) or a["stand_in_fill"] == "true"
        if not include_stand_in and stand_in:
            continue
        decision = "bid" if kind == "bid" else "card"
        times.setdefault((person["condition"], decision), []).append(int(a["think_ms"]) / 1000)
    return {"n": n, "wins": wins, "per_condition": per_condition, "left": left, "times": times}


def agrees(folder: Path, figures: dict[str, Any], counted: dict[str, Any]) -> None:
    """The script's figures (its --json) are the direct count's, every condition's."""
    conditions = [c["name"] for c in read(folder / "conditions.csv")]
    assert figures["partnership_rounds"] == {c: counted["per_condition"][c] for c in conditions}
    for row in figures["win_rates"]:
        key = (row["condition"], TYPE_OF_ROW[row["round_type"]])
        assert (row["n"], row["wins"]) == (counted["n"][key], counted["wins"][key]), row
        if row["n"]:
            low, high = wilson_interval(row["wins"], row["n"])
            assert row["rate"] == pytest.approx(row["wins"] / row["n"])
            assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low), pytest.approx(high))
        else:
            assert row["rate"] is None
    assert [r["round_type"] for r in figures["win_rates"]] == list(TABLE_3) * len(conditions)
    assert figures["left_out"]["partnership_rounds"] == dict(counted["left"])
    assert sum(counted["n"].values()) == sum(r["n"] for r in figures["win_rates"])
    for row in figures["think_times"]:
        seconds = counted["times"].get((row["condition"], row["decision"]), [])
        assert row["n"] == len(seconds), row
        if len(seconds) >= 2:
            q1, median, q3 = statistics.quantiles(seconds, n=4, method="inclusive")
            assert (row["q1_s"], row["median_s"], row["q3_s"]) == (
                pytest.approx(q1), pytest.approx(median), pytest.approx(q3))  # fmt: skip
            assert median == pytest.approx(statistics.median(seconds))
