"""``manage.py bench_solver``: the same positions for every solver, PBN for DDS, and a
disagreement fails (tiny samples; no timing asserts)."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bots.solver import Position
from game.engine.cards import parse_hand
from lab.bench import solver_bench


def test_pbn_lists_spades_hearts_diamonds_clubs_from_north() -> None:
    p = Position(
        (parse_hand("AS 2H"), parse_hand("KS 3D"), parse_hand("QS TC"), parse_hand("JS 5H")),
        leader=0,
        trick=(),
        spades_broken=True,
    )
    assert solver_bench.pbn(p) == "N:A.2.. K..3. Q...T J.5.."


def test_prints_each_k_and_writes_json(tmp_path: Path) -> None:
    out = StringIO()
    output = tmp_path / "solver.json"
    call_command(
        "bench_solver", "--k", "3,4", "--samples", "5", "--seed", "2",
        "--peer-python", "/nonexistent", "--json", str(output), stdout=out,
    )  # fmt: skip
    text = out.getvalue()
    assert "k  3" in text and "k  4" in text and "reference/compiled" in text
    rows = json.loads(output.read_text())
    assert [r["k"] for r in rows] == [3, 4] and all("reference" in r for r in rows)
    assert all(r["compiled_cpu"]["median_ms"] > 0 for r in rows)  # thread CPU time beside the wall
    assert all(p.spades_broken for p in solver_bench.positions(4, 5, 2))


def test_a_disagreement_fails_the_bench(monkeypatch: pytest.MonkeyPatch) -> None:
    def wrong(ps, how, cpu=None):  # noqa: ANN001, ARG001
        return [0] * len(ps), [0.001] * len(ps)

    monkeypatch.setattr(solver_bench, "dds_available", lambda peer: "in-process")
    monkeypatch.setattr(solver_bench, "time_dds", wrong)
    with pytest.raises(CommandError, match="disagreement"):
        call_command("bench_solver", "--k", "5", "--samples", "20", stdout=StringIO())
