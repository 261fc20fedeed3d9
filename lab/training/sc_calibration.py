"""Calibrating the success curves on the nils BIS itself chooses (issue 25).

The curves are fitted on self-play nils of BIS without curves plus explored
nils (:mod:`bots.success_curves`), while BIS bids nil only where the curves
say it pays: the nils near its threshold are the ones the curves overrate
(0.66 predicted, 57% made). So the shipped table gets a calibration fitted on
those nils: BIS+SRP plays a seeded duplicate tournament (against RB+SRP by
default), every nil it bids is kept as (the probability it bid with, made?,
its bidding position), and a logistic regression of made on logit(p), with an
intercept and a slope for each bidding position (0-3 bids before; the
positions' departures from the pooled line L2-regularised), gives ``a[k]`` and
``b[k]``: every curve of a sequence of ``k`` bids becomes
``sigmoid(a[k] + b[k] logit(p))``. The base model's curves differ by sequence
only by a shift; after calibration their slope differs by position too. With
every ``b[k] > 0`` the curves stay monotone.

Calibrating changes which nils BIS bids, so the step can be repeated on the
calibrated curves (each step is recorded in the file's ``meta["calibration"]``
and applied on top of the previous ones) until the fit is near the identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bots import success_curves as sc
from lab.tournaments.tournament import TournamentConfig
from lab.training.nil_sets import side_counts

PROBABILITY_CLIP = 1e-4
POSITIONS = 4  # 0-3 bids before the nil
C_POSITIONS = 1.0  # inverse L2 strength on the positions' departures from the pooled line

Prediction = tuple[float, bool, int]  # (probability bid with, made, bids before)


def logit(p: np.ndarray | Sequence[float]) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=float), PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)
    return np.log(q / (1.0 - q))


def bis_predictions(config: TournamentConfig, workers: int = 1) -> list[Prediction]:
    """Side A's nils in the tournament's games, sorted (the order the workers
    finish in does not change the fit)."""
    a, _ = side_counts(config, workers)
    return sorted(a.predictions)


def _design(x: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Columns: logit p; then, for positions 1-3, a shift and a slope change."""
    onehot = np.stack([(pos == k).astype(float) for k in range(1, POSITIONS)], axis=1)
    return np.hstack([x[:, None], onehot, onehot * x[:, None]])


def fit_calibration(
    predictions: Sequence[Prediction], c: float = C_POSITIONS
) -> tuple[list[float], list[float]]:
    """``(a, b)``, one of each per position: ``P(made) = sigmoid(a[k] + b[k] logit p)``."""
    from sklearn.linear_model import LogisticRegression

    if not predictions:
        raise sc.SuccessCurvesError("no nils to calibrate on")
    made = np.array([m for _, m, _ in predictions], dtype=int)
    if made.min() == made.max():
        raise sc.SuccessCurvesError("the nils are all made or all set: nothing to calibrate")
    x = logit([p for p, _, _ in predictions])
    pos = np.array([min(k, POSITIONS - 1) for _, _, k in predictions])
    lr = LogisticRegression(C=c, max_iter=5000).fit(_design(x, pos), made)
    w, a0 = lr.coef_[0], float(lr.intercept_[0])
    a = [a0] + [a0 + float(w[k]) for k in range(1, POSITIONS)]
    b = [float(w[0])] + [float(w[0] + w[POSITIONS - 1 + k]) for k in range(1, POSITIONS)]
    if min(b) <= 0:
        raise sc.SuccessCurvesError(
            f"a calibration slope is {min(b):.3f}: the curves do not rank the nils, "
            "calibrating would reverse them"
        )
    return a, b


def sequence_positions() -> np.ndarray:
    """The bidding position (bids before) of each row of the table."""
    return np.array([len(s) for s in sc.all_sequences()])


def calibrated(table: np.ndarray, a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    """The table (rows in :func:`bots.success_curves.all_sequences` order) with each
    row of position ``k`` mapped by ``sigmoid(a[k] + b[k] logit p)``."""
    pos = sequence_positions()
    aa = np.asarray(a, dtype=float)[pos][:, None]
    bb = np.asarray(b, dtype=float)[pos][:, None]
    return 1.0 / (1.0 + np.exp(-(aa + bb * logit(table))))


def calibrate_file(
    curves: sc.CurveSet,
    predictions: Sequence[Prediction],
    source: dict[str, Any],
    output: str | Path,
) -> dict[str, Any]:
    """Write ``curves`` with the full table calibrated on ``predictions`` to ``output``;
    the step's record (also appended to ``meta["calibration"]``).

    The single curve (the BIS-SC1 ablation) is left as fitted: its nils are not
    BIS's.
    """
    a, b = fit_calibration(predictions)
    table = calibrated(curves.table, a, b)
    if not sc.check_monotone(table):
        raise sc.SuccessCurvesError("the calibrated curves are not monotone")
    by_position = {}
    for k in range(POSITIONS):
        cell = [(p, m) for p, m, q in predictions if min(q, POSITIONS - 1) == k]
        by_position[str(k)] = {
            "nils": len(cell),
            "made": int(sum(m for _, m in cell)),
            "mean_probability": float(np.mean([p for p, _ in cell])) if cell else None,
        }
    step = {
        "a": a,
        "b": b,
        "nils": len(predictions),
        "made": int(sum(m for _, m, _ in predictions)),
        "mean_probability": float(np.mean([p for p, _, _ in predictions])),
        "by_position": by_position,
        "C": C_POSITIONS,
        "source": source,
    }
    meta = dict(curves.meta)
    meta["calibration"] = [*meta.get("calibration", []), step]
    sc.save({"meta": meta, "table": table, "single": curves.single}, output)
    return step
