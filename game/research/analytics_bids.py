"""Per-seat bid analyses from the tallies: how far tricks land from the bid, and nil bids
by bidding position, for each seat kind and bot, over the seats of the measured
partnerships (one grouped query feeds both)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from game.research.analytics_filters import KIND_LABELS, Filters, ratio, tallied
from game.research.tally_keys import (
    ACCURACY,
    BLIND_NIL_MADE,
    BLIND_NIL_SET,
    HUMAN,
    NIL_MADE,
    NIL_SET,
    SEAT,
)

# (who, bidding position or tricks minus bid, nil outcome (0: not nil), seat-rounds)
SeatGroup = tuple[str, int, int, int]


def seat_bids(filters: Filters, figure: str = SEAT) -> list[SeatGroup]:
    """Seat-rounds of the measured partnerships by (who, position, nil outcome), or with
    ``ACCURACY`` non-nil bids by (who, tricks minus bid, 0), with counts."""
    return [
        (g["who"], g["a"], g["b"], g["n"])
        for g in tallied(filters, figure, "who", "a", "b")
        if g["n"]
    ]


def _whos(who: str) -> list[str]:
    return [KIND_LABELS["H"]] if who == HUMAN else [KIND_LABELS["B"], who]


def _order(who: str) -> tuple[bool, str]:
    return (who not in KIND_LABELS.values(), who)


def bidding_accuracy(filters: Filters, groups: list[SeatGroup] | None = None) -> dict[str, Any]:
    """Tricks taken minus bid, for non-nil bids, per seat kind and per bot name."""
    if groups is None:
        groups = seat_bids(filters, ACCURACY)
    dist: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for who, over, _, n in groups:
        for w in _whos(who):
            dist[w][over] += n
    rows = []
    for who in sorted(dist, key=_order):
        d = dist[who]
        n = sum(d.values())
        rows.append(
            {
                "player": who,
                "is_kind": who in KIND_LABELS.values(),
                "bids": n,
                "mean": sum(k * v for k, v in d.items()) / n,
                "exact": sum(v for k, v in d.items() if k == 0) / n,
                "over": sum(v for k, v in d.items() if k > 0) / n,
                "under": sum(v for k, v in d.items() if k < 0) / n,
                "distribution": {str(k): d[k] for k in sorted(d)},
            }
        )
    return {"rows": rows}


def nil_bids(filters: Filters, groups: list[SeatGroup] | None = None) -> dict[str, Any]:
    """Nil bid frequency and success (blind nil apart) by seat kind, bot and bidding position.

    The bidding position is 1 for the seat left of the dealer (who bids first) to 4 (dealer).
    """
    if groups is None:
        groups = seat_bids(filters)
    # (who, position) -> [seat-rounds, nil bids, nil made, blind bids, blind made]
    cells: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for who, position, outcome, n in groups:
        for w in _whos(who):
            for pos in (position, 0):  # 0: every position
                c = cells[w, pos]
                c[0] += n
                if outcome in (BLIND_NIL_MADE, BLIND_NIL_SET):
                    c[3] += n
                    c[4] += n if outcome == BLIND_NIL_MADE else 0
                elif outcome in (NIL_MADE, NIL_SET):
                    c[1] += n
                    c[2] += n if outcome == NIL_MADE else 0
    rows = []
    for who in sorted({w for w, _ in cells}, key=_order):
        by_position = []
        for pos in range(5):
            c = cells.get((who, pos))
            if not c:
                continue
            by_position.append(
                {
                    "position": pos or "all",
                    "seat_rounds": c[0],
                    "nil_bids": c[1],
                    "nil_frequency": ratio(c[1], c[0]),
                    "nil_made": c[2],
                    "nil_success": ratio(c[2], c[1]),
                    "blind_nil_bids": c[3],
                    "blind_nil_made": c[4],
                    "blind_nil_success": ratio(c[4], c[3]),
                }
            )
        rows.append({"player": who, "is_kind": who in KIND_LABELS.values(),
                     "positions": by_position})  # fmt: skip
    return {"rows": rows}
