"""The success curves' calibration on BIS's own nils (lab/training/sc_calibration.py)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import call_command

from bots import success_curves as sc
from lab.tournaments.tournament import TournamentConfig
from lab.training.nil_sets import side_counts
from lab.training.sc_calibration import (
    bis_predictions,
    calibrate_file,
    calibrated,
    fit_calibration,
    logit,
)


def synthetic(
    a: list[float], b: list[float], n: int, seed: int = 1
) -> list[tuple[float, bool, int]]:
    """Nils at positions 0-3 whose true made rate is sigmoid(a[k] + b[k] logit p)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.4, 0.98, n)
    pos = rng.integers(0, 4, n)
    truth = 1.0 / (1.0 + np.exp(-(np.array(a)[pos] + np.array(b)[pos] * logit(p))))
    made = rng.random(n) < truth
    return [(float(x), bool(m), int(k)) for x, m, k in zip(p, made, pos, strict=True)]


A = [-0.4, -0.2, -0.6, 0.0]
B = [1.3, 1.1, 1.5, 0.9]


def test_the_fit_recovers_a_known_miscalibration_by_position() -> None:
    a, b = fit_calibration(synthetic(A, B, 80_000))
    assert a == pytest.approx(A, abs=0.08)
    assert b == pytest.approx(B, abs=0.08)


def test_the_positions_lean_on_the_pooled_line_when_they_have_few_nils() -> None:
    data = synthetic([-0.4] * 4, [1.3] * 4, 20_000)
    data = [d for d in data if d[2] != 3] + [d for d in data if d[2] == 3][:20]
    a, b = fit_calibration(data)
    # Twenty nils at position 3 alone would give a wild line; regularised, it stays
    # near the others.
    assert abs(b[3] - b[0]) < 0.3 and abs(a[3] - a[0]) < 0.3


def test_calibrated_predictions_match_the_made_rate_by_bin() -> None:
    data = synthetic(A, B, 40_000, seed=2)
    a, b = fit_calibration(data)
    p = np.array([x for x, _, _ in data])
    made = np.array([m for _, m, _ in data])
    pos = np.array([k for _, _, k in data])
    q = 1.0 / (1.0 + np.exp(-(np.array(a)[pos] + np.array(b)[pos] * logit(p))))
    for lo in (0.4, 0.6, 0.8):
        cell = (p >= lo) & (p < lo + 0.2)
        if lo < 0.8:  # before: the lower bins overrated by several points
            assert p[cell].mean() - made[cell].mean() > 0.025
        # after: every bin within one and a half
        assert abs(q[cell].mean() - made[cell].mean()) < 0.015


def test_each_row_is_mapped_by_its_positions_line_and_stays_monotone() -> None:
    table = np.tile(np.linspace(0.0, 1.0, 51), (sc.N_SEQUENCES, 1))
    same = calibrated(table, [0.0] * 4, [1.0] * 4)
    assert np.allclose(same[:, 1:-1], table[:, 1:-1], atol=1e-9)
    out = calibrated(table, A, B)
    assert sc.check_monotone(out)
    row = {k: sc.sequence_index(s) for k, s in enumerate([(), (3,), (3, 4), (3, 4, 2)])}
    for k, i in row.items():
        expected = 1.0 / (1.0 + np.exp(-(A[k] + B[k] * logit(table[i]))))
        assert np.allclose(out[i], expected)


def test_a_calibration_that_would_reverse_the_curves_is_refused() -> None:
    reversed_ = [(p, not m, k) for p, m, k in synthetic([0.0] * 4, [2.0] * 4, 5_000)]
    with pytest.raises(sc.SuccessCurvesError, match="slope"):
        fit_calibration(reversed_)
    with pytest.raises(sc.SuccessCurvesError, match="all made"):
        fit_calibration([(0.7, True, 0), (0.9, True, 1)])
    with pytest.raises(sc.SuccessCurvesError, match="no nils"):
        fit_calibration([])


def test_calibrate_file_writes_the_table_and_records_the_step(tmp_path) -> None:
    curves = sc.read()
    out = tmp_path / "sc.npz"
    data = synthetic(A, B, 8_000)
    step = calibrate_file(curves, data, {"kind": "test"}, out)
    written = sc.read(out)
    assert np.allclose(written.table, calibrated(curves.table, step["a"], step["b"]), atol=2e-5)
    assert np.allclose(written.single, curves.single, atol=2e-5)  # the ablation's curve stays
    steps = written.meta["calibration"]
    assert steps[-1]["source"] == {"kind": "test"} and steps[-1]["nils"] == 8_000
    assert sum(c["nils"] for c in steps[-1]["by_position"].values()) == 8_000
    assert len(steps) == len(curves.meta.get("calibration", [])) + 1
    # A second step applies on top of the first.
    again = calibrate_file(written, synthetic([0.0] * 4, [1.0] * 4, 8_000, seed=3),
                           {"kind": "t2"}, out)  # fmt: skip
    twice = sc.read(out)
    assert np.allclose(twice.table, calibrated(written.table, again["a"], again["b"]), atol=2e-5)
    assert len(twice.meta["calibration"]) == len(steps) + 1


def test_bis_predictions_are_its_nils_with_the_curves_probability() -> None:
    config = TournamentConfig("BIS+SRP", "RB+SRP", 24, 200, -100, 5, True)
    predictions = bis_predictions(config)
    a, _ = side_counts(config)
    assert len(predictions) == a.nils > 0  # every non-blind BIS nil, once
    assert predictions == sorted(predictions)
    assert all(0.0 <= p <= 1.0 and 0 <= k <= 3 for p, _, k in predictions)
    # BIS bids nil only when its expected nil score clears the threshold, or for
    # an end-game risky nil or after partner's Big 5: never on a hopeless curve.
    assert min(p for p, _, _ in predictions) >= 0.4
    assert bis_predictions(config, workers=2) == predictions


def test_the_command_calibrates_into_its_output_and_reports_it(tmp_path) -> None:
    out = tmp_path / "sc.npz"
    text = io.StringIO()
    call_command("train_success_curves", "--calibrate", "--games", "40", "--seed", "4",
                 "--output", str(out), stdout=text)  # fmt: skip
    assert "BIS nils in 40 games against RB+SRP (seed 4)" in text.getvalue()
    shipped = sc.read()
    assert len(sc.read(out).meta["calibration"]) == len(shipped.meta.get("calibration", [])) + 1
    report = io.StringIO()
    call_command("train_success_curves", "--report", "--output", str(out), stdout=report)
    assert "in 40 games BIS+SRP vs RB+SRP, seed 4" in report.getvalue()
