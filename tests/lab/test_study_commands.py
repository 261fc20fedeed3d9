"""Smoke runs of the study commands no other test ran, at a tiny size: each runs end to
end and writes its files (to tmp_path, never over the shipped data or lab/results).
Registered in tests/test_commands.py."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bots.learned.mlp import read_mlp


def test_nil_sets_counts_the_nils_of_two_short_games(tmp_path: Path) -> None:
    out = StringIO()
    figures, plot = tmp_path / "nils.json", tmp_path / "nils.png"
    # Seed 2 to 100 points: BIS bids two nils, one set (a point on the plot).
    call_command(
        "nil_sets", "--ns", "BIS+SRP", "--ew", "RB+WRP", "--games", "2", "--goal", "100",
        "--lose", "-100", "--seed", "2", "--duplicate", "--json", str(figures), "--plot",
        str(plot), stdout=out,
    )  # fmt: skip
    data = json.loads(figures.read_text())
    assert data["games"] == 2 and [s["bot"] for s in data["sides"]] == ["BIS+SRP", "RB+WRP"]
    assert data["sides"][0]["nils"] >= 1
    assert out.getvalue().startswith("BIS+SRP: ")
    assert plot.stat().st_size > 1000


@pytest.mark.usefixtures("torch_installed")
def test_train_spb_both_methods_write_weights_curves_and_report(tmp_path: Path) -> None:
    out = StringIO()
    weights, plot = tmp_path / "spb.npz", tmp_path / "spb.png"
    call_command("train_spb", "--iterations", "2", "--deals", "4", "--seed", "2", "--eval-every",
                 "2", "--eval-games", "2", "--gauge", "2", "--output", str(weights), "--plot",
                 str(plot), stdout=out, stderr=StringIO())  # fmt: skip
    net = read_mlp(weights)
    assert net.meta["bot"] == "SPB" and f"sha256 {net.checksum}" in out.getvalue()
    assert net.meta["method"] == "counterfactual fitted Q-iteration" and net.meta["rounds"] == 8
    assert "vs RB 2: " in out.getvalue() and "gauge: SPB+SRP-rule vs RB+SRP-rule" in out.getvalue()
    assert plot.stat().st_size > 1000
    report = StringIO()
    call_command("train_spb", "--report", str(weights), stdout=report)
    assert "SPB" in report.getvalue()
    # BIS in the pool and as the gauges' opponent, from the weights just made
    pool, out = tmp_path / "pool.npz", StringIO()
    call_command("train_spb", "--iterations", "1", "--deals", "4", "--seed", "2", "--eval-every",
                 "1", "--eval-games", "2", "--gauge", "2", "--pool-bidders", "BIS",
                 "--pool-bidder-share", "1", "--gauge-bidder", "BIS", "--init", str(weights),
                 "--output", str(pool), stdout=out, stderr=StringIO())  # fmt: skip
    meta = read_mlp(pool).meta
    assert meta["pool_bidders"] == ["BIS"] and meta["init"] == net.checksum
    assert "vs BIS 1: " in out.getvalue()
    assert "gauge: SPB+SRP-rule vs BIS+SRP-rule" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("train_spb", "--iterations", "2", "--deals", "4", "--seed", "2", "--output",
                     str(pool), stdout=StringIO(), stderr=StringIO())  # fmt: skip
    pg, pg_plot = tmp_path / "pg.npz", tmp_path / "pg.png"
    call_command("train_spb", "--method", "pg", "--iterations", "1", "--batch", "4", "--output",
                 str(pg), "--plot", str(pg_plot), stdout=out, stderr=StringIO())  # fmt: skip
    assert read_mlp(pg).meta["kind"] == "spb" and pg_plot.exists()


@pytest.mark.usefixtures("torch_installed")
def test_nnb_curve_two_tiny_points(tmp_path: Path) -> None:
    curve, plot = tmp_path / "curve.json", tmp_path / "curve.png"
    call_command(
        "nnb_curve", "--sizes", "10,20", "--chunk-rounds", "10", "--games", "2", "--workers",
        "1", "--epochs", "1", "--data", str(tmp_path / "nnb.samples.jsonl"), "--dir",
        str(tmp_path / "weights"), "--output", str(curve), "--plot", str(plot),
        stdout=StringIO(), stderr=StringIO(),
    )  # fmt: skip
    points = json.loads(curve.read_text())["points"]
    assert [p["rounds"] for p in points] == [10, 20]
    assert 0 < points[0]["samples"] < points[1]["samples"]  # trained on more data
    assert (tmp_path / "weights" / "nnb_r20.npz").exists()
    assert plot.stat().st_size > 1000
