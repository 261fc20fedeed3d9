"""Success curves (SC) of the BIS bidder: P(nil made | previous bids, nil value).

Section 4.3 of the BIS paper: nil bids of BIS without the curves (plus a
noisy variant that explores nil bids) are recorded as (previous bids, nil
value, made?) samples; a logistic regression of success on features of the
previous-bid sequence and of the nil value gives a curve for each of the
1 + 14 + 14^2 + 14^3 = 2955 sequences (0-3 earlier bids of the round, each
0-13, nil = 0). The curves are precomputed on a nil-value grid and shipped in
``bots/data/sc.npz``; :func:`load_success_curves` returns the callable
``SC(prev_bids, nil_value)`` that :class:`bots.bis.BIS` takes.

Design choices (the paper gives none of them):

- **Features** (so that the 2955 sequences share strength): the nil value
  ``v`` and ``logit(v)`` (v clipped to [0.01, 0.99]); the bidding position
  (one-hot for 1, 2, 3 earlier bids); partner's bid when known (0 when it is
  nil or unknown) and a partner-nil flag; the sum of the opponents' non-nil
  bids, how many opponents bid nil, and the right-hand opponent's bid (the
  bid just before ours). In a sequence ``(a, b, c)`` a is the left-hand
  opponent, b partner and c the right-hand opponent; ``(a, b)`` is partner
  then RHO; ``(a,)`` is RHO.
- **Interactions** (``interactions=True``, ``train_success_curves
  --interactions``): logit(v) times the position one-hots and partner's bid,
  so a curve's slope, not only its shift, may differ by sequence.
- **Monotone in the nil value**: without interactions the model is additive
  in logit space, so every curve is the same function of ``v`` shifted by the
  sequence; with them an interaction that makes any curve decrease is dropped
  and the model refitted; a
  negative coefficient of ``v`` or ``logit(v)`` is dropped and the model
  refitted, so the curves never decrease. :func:`check_monotone` verifies the
  whole table.
- **Table**: 2955 x 51 (nil value 0.00, 0.02, ..., 1.00), probabilities
  stored as uint16 (p x 65535); the callable interpolates linearly.
- **Single curve** (the ablation of section 5.3.1, Table 4): the same model
  with the nil-value features only, stored beside the full table.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from game.engine.cards import SEAT_LETTERS, parse_hand

FORMAT = "spades-bis-success-curves"
VERSION = 1
DATA_FILE = Path(__file__).parent / "data" / "sc.npz"
MAX_BID = 13
BASE = MAX_BID + 1  # 14 possible bids, 0..13
N_SEQUENCES = 1 + BASE + BASE**2 + BASE**3  # 2955
GRID = np.round(np.linspace(0.0, 1.0, 51), 10)
LOGIT_CLIP = 0.01
SEQ_FEATURES = ("pos1", "pos2", "pos3", "partner_bid", "partner_nil", "opp_sum", "opp_nils",
                "rho_bid")  # fmt: skip
VALUE_FEATURES = ("nil_value", "logit_nil_value")
# logit(v) times a sequence feature: the curve's slope, not only its shift, may
# differ by bidding position and by partner's bid (``interactions=True``).
INTERACTED = ("pos1", "pos2", "pos3", "partner_bid")
INTERACTION_FEATURES = tuple(f"logit_x_{f}" for f in INTERACTED)
FEATURES = VALUE_FEATURES + SEQ_FEATURES + INTERACTION_FEATURES
DEFAULT_C = 100.0

SuccessCurves = Callable[[tuple[int, ...], float], float]


class SuccessCurvesError(RuntimeError):
    """A success-curve file or dataset that cannot be used; ``str(e)`` says why."""


# ----- the 2955 sequences ----------------------------------------------------------


def sequence_index(prev_bids: Sequence[int]) -> int:
    """The row of ``prev_bids`` (0-3 bids, each 0..13) in the table."""
    k = len(prev_bids)
    if k > 3:
        raise ValueError(f"at most 3 previous bids, not {k}")
    offset = (BASE**k - 1) // (BASE - 1)  # 0, 1, 15, 211
    code = 0
    for b in prev_bids:
        if not 0 <= b <= MAX_BID:
            raise ValueError(f"a bid is 0..13, not {b}")
        code = code * BASE + b
    return offset + code


def all_sequences() -> list[tuple[int, ...]]:
    """Every sequence, in table order (``all_sequences()[sequence_index(s)] == s``)."""
    seqs: list[tuple[int, ...]] = [()]
    for k in (1, 2, 3):
        for code in range(BASE**k):
            digits = []
            for _ in range(k):
                code, d = divmod(code, BASE)
                digits.append(d)
            seqs.append(tuple(reversed(digits)))
    return seqs


# ----- features --------------------------------------------------------------------


def sequence_features(prev_bids: Sequence[int]) -> list[float]:
    """The :data:`SEQ_FEATURES` of one previous-bid sequence."""
    k = len(prev_bids)
    rho = prev_bids[-1] if k >= 1 else None
    partner = prev_bids[-2] if k >= 2 else None
    lho = prev_bids[-3] if k >= 3 else None
    opponents = [b for b in (rho, lho) if b is not None]
    return [
        float(k == 1),
        float(k == 2),
        float(k == 3),
        float(partner or 0),
        float(partner == 0),
        float(sum(opponents)),
        float(sum(1 for b in opponents if b == 0)),
        float(rho or 0),
    ]


def value_features(values: np.ndarray) -> np.ndarray:
    """Columns ``v`` and ``logit(v)`` (v clipped to [0.01, 0.99] for the logit)."""
    v = np.clip(np.asarray(values, dtype=float), 0.0, 1.0)
    c = np.clip(v, LOGIT_CLIP, 1.0 - LOGIT_CLIP)
    return np.column_stack([v, np.log(c / (1.0 - c))])


def with_interactions(vf: np.ndarray, seq: np.ndarray) -> np.ndarray:
    """The columns of :data:`FEATURES` from the value and sequence columns."""
    logit = vf[:, 1:2]
    cols = [SEQ_FEATURES.index(f) for f in INTERACTED]
    return np.hstack([vf, seq, logit * seq[:, cols]])


def design_matrix(prev: Sequence[Sequence[int]], values: Sequence[float]) -> np.ndarray:
    seq = np.array([sequence_features(p) for p in prev], dtype=float).reshape(len(prev), -1)
    return with_interactions(value_features(np.asarray(values, dtype=float)), seq)


# ----- samples ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NilSample:
    prev: tuple[int, ...]  # the bids made before the nil in this round, in order
    value: float  # the bidder's nil value (section 4.2)
    made: bool  # the bidder took no trick

    def to_dict(self) -> dict[str, Any]:
        return {"prev": list(self.prev), "v": round(self.value, 6), "ok": self.made}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NilSample:
        return cls(tuple(int(b) for b in d["prev"]), float(d["v"]), bool(d["ok"]))


SeatFilter = Callable[[dict[str, Any], int], bool]


def nil_samples_from_records(
    records: Iterable[dict[str, Any]],
    seat_filter: SeatFilter | None = None,
    tables: Any = None,
) -> Iterator[NilSample]:
    """The (non-blind) nil bids of round records (``game.engine.record_of`` dicts).

    The nil value is recomputed from the dealt hand exactly as BIS computes it
    at bidding time (``bots.bis.nil_value`` without the Big 5 convention, the
    default ``BIS(conventions=False)``). ``seat_filter(record, seat)`` keeps
    only some seats' bids (e.g. the seats played by a BIS bot).
    """
    for _, sample in nil_bids_of_records(records, seat_filter, tables):
        yield sample


def nil_bids_of_records(
    records: Iterable[dict[str, Any]],
    seat_filter: SeatFilter | None = None,
    tables: Any = None,
) -> Iterator[tuple[int, NilSample]]:
    """Like :func:`nil_samples_from_records`, with the seat (0-3, N E S W) of each bid."""
    from .bis import nil_value
    from .tables import load_tables

    tables = tables or load_tables()
    for rec in records:
        rules = rec.get("rules") or {}
        if not rules.get("nil", True):
            continue
        hands = rec["hands"]
        tricks = rec["tricks_won"]
        prev: list[int] = []
        for b in rec["bids"]:
            seat = SEAT_LETTERS.index(b["seat"])
            bid = int(b["bid"])
            keep = bid == 0 and not b["blind"] and len(prev) <= 3
            if keep and (seat_filter is None or seat_filter(rec, seat)):
                value = nil_value(parse_hand(hands[b["seat"]]), tables)
                yield seat, NilSample(tuple(prev), value, tricks[seat] == 0)
            prev.append(bid)


def bot_seat_filter(prefix: str = "BIS") -> SeatFilter:
    """Keep seats whose record carries ``bot_names`` (per seat) naming a ``prefix`` bidder."""

    def keep(rec: dict[str, Any], seat: int) -> bool:
        names = rec.get("bot_names")
        if names is None:
            return True
        name = names[seat]
        return bool(name) and str(name).split("+")[0].startswith(prefix)

    return keep


# ----- statistics --------------------------------------------------------------------


SAMPLE_THRESHOLDS = (100, 500, 1000, 2000, 5000)


def sample_stats(samples: Sequence[NilSample], top: int = 15) -> dict[str, Any]:
    """Counts of the nil samples: in all, by bidding position, by previous-bid sequence.

    ``sequences_with_at_least[str(t)]``: how many previous-bid sequences hold
    ``t`` or more samples (for each t of :data:`SAMPLE_THRESHOLDS`), overall
    and by position (0-3 earlier bids).
    """
    by_seq: Counter[tuple[int, ...]] = Counter(s.prev for s in samples)
    made_by_seq: Counter[tuple[int, ...]] = Counter(s.prev for s in samples if s.made)
    by_pos: Counter[int] = Counter(len(s.prev) for s in samples)
    at_least = {str(t): sum(1 for n in by_seq.values() if n >= t) for t in SAMPLE_THRESHOLDS}
    at_least_by_pos = {
        str(k): {str(t): sum(1 for seq, n in by_seq.items() if len(seq) == k and n >= t)
                 for t in SAMPLE_THRESHOLDS}
        for k in range(4)
    }  # fmt: skip
    return {
        "samples": len(samples),
        "made": sum(s.made for s in samples),
        "sequences_seen": len(by_seq),
        "by_position": {str(k): by_pos[k] for k in sorted(by_pos)},
        "sequences_with_at_least": at_least,
        "sequences_with_at_least_by_position": at_least_by_pos,
        "top_sequences": [
            {"prev": list(seq), "samples": n, "made": made_by_seq[seq]}
            for seq, n in by_seq.most_common(top)
        ],
    }


# ----- the model ---------------------------------------------------------------------


@dataclass
class FittedModel:
    features: tuple[str, ...]  # the columns used (a subset of FEATURES, in order)
    intercept: float
    coefficients: dict[str, float]  # every used feature; a dropped one is absent

    def logit(self, x: np.ndarray) -> np.ndarray:
        """``x``: columns of FEATURES (all of them), any number of rows."""
        z = np.full(x.shape[0], self.intercept)
        for name, coef in self.coefficients.items():
            z = z + coef * x[:, FEATURES.index(name)]
        return z

    def probability(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logit(x)))

    def to_dict(self) -> dict[str, Any]:
        return {"intercept": self.intercept, "coefficients": self.coefficients}


def fit_model(
    samples: Sequence[NilSample],
    single: bool = False,
    C: float = DEFAULT_C,
    interactions: bool = False,
) -> FittedModel:
    """Logistic regression of nil success; monotone in the nil value (see module doc).

    ``single``: the nil-value features only (one curve for every sequence).
    ``interactions``: also logit(v) times the position and partner's bid, so a
    curve's slope may differ by sequence (L2-regularised by ``C`` like the rest;
    an interaction that would make some curve decrease is dropped and the
    model refitted).
    """
    from sklearn.linear_model import LogisticRegression

    if not samples:
        raise SuccessCurvesError("no nil samples to train on")
    made = np.array([s.made for s in samples], dtype=int)
    if made.min() == made.max():
        raise SuccessCurvesError("the nil samples are all made or all set: nothing to learn")
    x = design_matrix([s.prev for s in samples], [s.value for s in samples])
    used = list(VALUE_FEATURES if single else VALUE_FEATURES + SEQ_FEATURES)
    if interactions and not single:
        used += INTERACTION_FEATURES
    if not single:
        # A feature that is constant in the data (e.g. no sample after a partner's nil)
        # has no information: leave it out (its coefficient is 0).
        used = [f for f in used if f in VALUE_FEATURES or np.ptp(x[:, FEATURES.index(f)]) > 0]
    while True:
        cols = [FEATURES.index(f) for f in used]
        lr = LogisticRegression(C=C, max_iter=5000)
        lr.fit(x[:, cols], made)
        coef = dict(zip(used, (float(c) for c in lr.coef_[0]), strict=True))
        negative = [f for f in VALUE_FEATURES if f in coef and coef[f] < 0]
        model = FittedModel(tuple(used), float(lr.intercept_[0]), coef)
        inter = [f for f in INTERACTION_FEATURES if f in coef]
        if not negative and inter and not check_monotone(build_table(model)):
            used.remove(min(inter, key=lambda f: coef[f]))  # the most negative slope change
            continue
        if not negative:
            return model
        # Monotonicity: drop the most negative nil-value feature and refit.
        used.remove(min(negative, key=lambda f: coef[f]))
        if not any(f in used for f in VALUE_FEATURES):
            return FittedModel(tuple(used), float(lr.intercept_[0]), coef | dict.fromkeys(
                negative, 0.0))  # fmt: skip


def build_table(model: FittedModel, single: bool = False) -> np.ndarray:
    """Probabilities, shape (2955, len(GRID)) (or (len(GRID),) for ``single``)."""
    vf = value_features(GRID)
    if single:
        x = with_interactions(vf, np.zeros((len(GRID), len(SEQ_FEATURES))))
        return model.probability(x)
    seq = np.array([sequence_features(s) for s in all_sequences()], dtype=float)
    n, g = len(seq), len(GRID)
    x = with_interactions(np.tile(vf, (n, 1)), np.repeat(seq, g, axis=0))
    return model.probability(x).reshape(n, g)


def check_monotone(table: np.ndarray) -> bool:
    """Every curve (row) non-decreasing in the nil value."""
    return bool(np.all(np.diff(np.atleast_2d(table), axis=1) >= 0))


# ----- files -------------------------------------------------------------------------


def train(
    samples: Sequence[NilSample],
    source: dict[str, Any],
    C: float = DEFAULT_C,
    interactions: bool = False,
) -> dict[str, Any]:
    """Fit both models and build the tables: the content of a success-curve file."""
    full = fit_model(samples, C=C, interactions=interactions)
    single = fit_model(samples, single=True, C=C)
    table = build_table(full)
    single_table = build_table(single, single=True)
    if not check_monotone(table) or not check_monotone(single_table):
        raise SuccessCurvesError("the fitted curves are not monotone in the nil value")
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "generated": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": source,
        "stats": sample_stats(samples),
        "features": list(FEATURES),
        "C": C,
        "interactions": interactions,
        "model": full.to_dict(),
        "single_model": single.to_dict(),
        "grid": [float(g) for g in GRID],
        "monotone": True,
    }
    return {"meta": meta, "table": table, "single": single_table}


def save(content: dict[str, Any], path: str | Path) -> None:
    path = Path(path)
    table = np.round(np.clip(content["table"], 0, 1) * 65535).astype(np.uint16)
    single = np.round(np.clip(content["single"], 0, 1) * 65535).astype(np.uint16)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(
        tmp, meta=np.array(json.dumps(content["meta"])), table=table, single=single,
        grid=np.asarray(GRID, dtype=float),
    )  # fmt: skip
    tmp.replace(path)


@dataclass(frozen=True)
class CurveSet:
    """A loaded success-curve file."""

    meta: dict[str, Any]
    grid: np.ndarray
    table: np.ndarray  # (2955, len(grid)) float
    single: np.ndarray  # (len(grid),)

    def curve(self, prev_bids: Sequence[int]) -> np.ndarray:
        return self.table[sequence_index(tuple(prev_bids)[-3:])]

    def probability(self, prev_bids: Sequence[int], value: float, single: bool = False) -> float:
        row = self.single if single else self.curve(prev_bids)
        v = min(1.0, max(0.0, float(value)))
        if math.isnan(v):
            v = 0.0
        return float(np.interp(v, self.grid, row))


def read(path: str | Path | None = None) -> CurveSet:
    path = Path(path) if path is not None else DATA_FILE
    if not path.exists():
        raise SuccessCurvesError(
            f"{path} is missing: run python manage.py train_success_curves --selfplay"
        )
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        if meta.get("format") != FORMAT:
            raise SuccessCurvesError(f"{path} is not a success-curve file")
        table = z["table"].astype(float) / 65535
        single = z["single"].astype(float) / 65535
        grid = z["grid"].astype(float)
    if table.shape != (N_SEQUENCES, len(grid)) or single.shape != (len(grid),):
        raise SuccessCurvesError(f"{path}: the table has the wrong shape {table.shape}")
    return CurveSet(meta, grid, table, single)


@functools.lru_cache(maxsize=8)
def _cached(path: str) -> CurveSet:
    return read(path)


def load_curve_set(path: str | Path | None = None) -> CurveSet:
    return _cached(str(Path(path) if path is not None else DATA_FILE))


def load_success_curves(path: str | Path | None = None, single: bool = False) -> SuccessCurves:
    """``SC(prev_bids, nil_value) -> probability`` from the shipped table.

    ``single``: the single success curve (ignores the previous bids), for the
    ablation of section 5.3.1.
    """
    curves = load_curve_set(path)

    def sc(prev_bids: tuple[int, ...], value: float) -> float:
        return curves.probability(prev_bids, value, single=single)

    sc.curves = curves  # type: ignore[attr-defined]
    sc.single = single  # type: ignore[attr-defined]
    return sc


# ----- registry factories ----------------------------------------------------------------


def make_bis(name: str = "BIS", single: bool = False, curves: bool = True, **options: Any):
    """A BIS bidder named ``name`` (its Bot name), with the shipped curves by default."""
    from .bis import BIS

    bidder = BIS(success_curves=load_success_curves(single=single) if curves else None,
                 **options)  # fmt: skip
    bidder.name = name
    return bidder
