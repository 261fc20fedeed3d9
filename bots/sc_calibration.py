"""Calibrating the success curves on the nils BIS itself chooses (issue 25).

The curves are fitted on self-play nils of BIS without curves plus explored
nils (:mod:`bots.success_curves`), while BIS bids nil only where the curves
say it pays: the nils near its threshold are the ones the curves
overrate (0.66 predicted, 57% made). So the shipped table gets a
calibration fitted on those nils: BIS+SRP plays a seeded duplicate
tournament (against RB+SRP by default), every nil it bids is kept as (the
probability it bid with, made?), and a logistic regression of made on
logit(probability) gives ``a`` and ``b`` (Platt scaling); every curve becomes
``sigmoid(a + b logit(p))``. With ``b > 0`` the curves stay monotone and keep
their order, so the sequences still differ as the base model says; only how
far the probabilities are believed changes.

Calibrating changes which nils BIS bids, so the step can be repeated on the
calibrated curves (each step is recorded in the file's ``meta["calibration"]``
and applied on top of the previous ones) until the fit is near the identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import success_curves as sc
from .nil_sets import side_counts
from .tournament import TournamentConfig

PROBABILITY_CLIP = 1e-4


def logit(p: np.ndarray | Sequence[float]) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=float), PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)
    return np.log(q / (1.0 - q))


def bis_predictions(config: TournamentConfig, workers: int = 1) -> list[tuple[float, bool]]:
    """Side A's nils in the tournament's games as (probability bid with, made), sorted
    (the order the workers finish in does not change the fit)."""
    a, _ = side_counts(config, workers)
    return sorted(a.predictions)


def fit_calibration(predictions: Sequence[tuple[float, bool]]) -> tuple[float, float]:
    """``(a, b)`` of ``P(made) = sigmoid(a + b logit(p))``, unregularised."""
    from sklearn.linear_model import LogisticRegression

    if not predictions:
        raise sc.SuccessCurvesError("no nils to calibrate on")
    made = np.array([m for _, m in predictions], dtype=int)
    if made.min() == made.max():
        raise sc.SuccessCurvesError("the nils are all made or all set: nothing to calibrate")
    x = logit([p for p, _ in predictions]).reshape(-1, 1)
    lr = LogisticRegression(C=1e6, max_iter=1000).fit(x, made)
    a, b = float(lr.intercept_[0]), float(lr.coef_[0][0])
    if b <= 0:
        raise sc.SuccessCurvesError(f"the calibration slope is {b:.3f}: the curves do not rank "
                                    "the nils, calibrating would reverse them")  # fmt: skip
    return a, b


def calibrated(table: np.ndarray, a: float, b: float) -> np.ndarray:
    """Every probability ``p`` of ``table`` as ``sigmoid(a + b logit(p))``."""
    return 1.0 / (1.0 + np.exp(-(a + b * logit(table))))


def calibrate_file(
    curves: sc.CurveSet,
    predictions: Sequence[tuple[float, bool]],
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
    n = len(predictions)
    step = {
        "a": a,
        "b": b,
        "nils": n,
        "made": int(sum(m for _, m in predictions)),
        "mean_probability": float(np.mean([p for p, _ in predictions])),
        "source": source,
    }
    meta = dict(curves.meta)
    meta["calibration"] = [*meta.get("calibration", []), step]
    sc.save({"meta": meta, "table": table, "single": curves.single}, output)
    return step
