"""Per-seat bid analyses: how far tricks land from the bid, and nil bids by bidding
position, for each seat kind and bot (one grouped query per seat feeds both)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Count, F
from django.db.models.functions import Substr

from game.analytics_filters import KIND_LABELS, Filters, grouped, ratio, seat_kind
from game.round_columns import SEATS

# ----- bidding accuracy --------------------------------------------------------------------


def _player_label(kind: str, bot: str) -> str:
    return "human" if kind == "H" else (bot or "bot")


SeatGroup = tuple[int, str, str, int, bool, int, int, int]


def seat_bids(filters: Filters, seats: tuple[int, ...] = (0, 1, 2, 3)) -> list[SeatGroup]:
    """Seat-rounds grouped by (seat, kind, bot, dealer, blind, bid, tricks), with counts.

    One query per seat; the bidding accuracy and the nil bid analyses both read it.
    """
    qs = filters.rounds()
    out: list[SeatGroup] = []
    for seat in seats:
        letter = SEATS[seat]
        for g in grouped(
            qs,
            ("kind", seat_kind(seat)),
            f"bot_{letter}",
            "dealer",
            ("blind", Substr("blind_nils", seat + 1, 1)),
            f"bid_{letter}",
            f"tricks_{letter}",
            n=Count("*"),
        ):
            out.append(
                (seat, g["kind"], g[f"bot_{letter}"] or "bot", g["dealer"], g["blind"] == "1",
                 g[f"bid_{letter}"], g[f"tricks_{letter}"], g["n"])
            )  # fmt: skip
    return out


def _whos(kind: str, bot: str) -> list[str]:
    return [KIND_LABELS[kind], bot] if kind == "B" else [KIND_LABELS[kind]]


def bidding_accuracy(filters: Filters, groups: list[SeatGroup] | None = None) -> dict[str, Any]:
    """Tricks taken minus bid, for non-nil bids, per seat kind and per bot name."""
    if groups is None:
        groups = seat_bids(filters)
    dist: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for _seat, kind, bot, _dealer, _blind, bid, tricks, n in groups:
        if bid <= 0:
            continue
        for who in _whos(kind, bot):
            dist[who][tricks - bid] += n
    rows = []
    for who in sorted(dist, key=lambda w: (w not in KIND_LABELS.values(), w)):
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


def _sub(a: str, b: str) -> Any:
    return F(a) - F(b)


# ----- nil bids -----------------------------------------------------------------------------


def nil_bids(filters: Filters, groups: list[SeatGroup] | None = None) -> dict[str, Any]:
    """Nil bid frequency and success (blind nil apart) by seat kind, bot and bidding position.

    The bidding position is 1 for the seat left of the dealer (who bids first) to 4 (dealer).
    """
    if groups is None:
        groups = seat_bids(filters)
    # (who, position) -> [seat-rounds, nil bids, nil made, blind bids, blind made]
    cells: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for seat, kind, bot, dealer, blind, bid, tricks, n in groups:
        position = (seat - dealer - 1) % 4 + 1
        nil = bid == 0
        made = nil and tricks == 0
        for who in _whos(kind, bot):
            for pos in (position, 0):  # 0: every position
                c = cells[who, pos]
                c[0] += n
                if nil and blind:
                    c[3] += n
                    c[4] += n if made else 0
                elif nil:
                    c[1] += n
                    c[2] += n if made else 0
    players = sorted({w for w, _ in cells}, key=lambda w: (w not in KIND_LABELS.values(), w))
    rows = []
    for who in players:
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
