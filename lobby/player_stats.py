"""A player's play figures for the profile, beside the bots' at the same tables.

From the stored rounds of the player's finished tables (their last
:data:`ROUNDS` rounds): bid accuracy (exact, over, under: tricks against a
bid that is not nil), the side's set rate, nil bids and nils made, the side's
bags (overtricks) and points per round, and the player's rounds by round type
(``game.engine.round_types``). The bots' figures are those of the bot seats in
the same rounds: the same deals, so the comparison is fair. A player's own
figures only: nobody else's seats are named.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from game.engine.round_types import RoundType
from game.models import RoundRecordRow, Seat, Table

ROUNDS = 500
SEATS = "nesw"


@dataclass
class Figures:
    rounds: int = 0
    bids: int = 0  # bids that are not nil
    exact: int = 0
    over: int = 0
    under: int = 0
    sets: int = 0
    nils: int = 0
    nils_made: int = 0
    bags: int = 0
    points: int = 0
    by_type: dict[str, Figures] = field(default_factory=dict)

    def add(self, row: RoundRecordRow, p: int, by_type: bool = True) -> None:
        side = "ns" if p % 2 == 0 else "ew"
        bid, tricks = getattr(row, f"bid_{SEATS[p]}"), getattr(row, f"tricks_{SEATS[p]}")
        self.rounds += 1
        if bid == 0:
            self.nils += 1
            self.nils_made += tricks == 0
        else:
            self.bids += 1
            self.exact += tricks == bid
            self.over += tricks > bid
            self.under += tricks < bid
        self.sets += not getattr(row, f"made_{side}")
        mine = (p, (p + 2) % 4)
        contract = sum(getattr(row, f"bid_{SEATS[s]}") for s in mine)
        taken = sum(getattr(row, f"tricks_{SEATS[s]}") for s in mine)
        self.bags += max(0, taken - contract)
        self.points += getattr(row, f"points_{side}")
        kind = getattr(row, f"round_type_{SEATS[p]}")
        if kind and by_type:
            self.by_type.setdefault(RoundType(kind).label, Figures()).add(row, p, by_type=False)

    def shown(self) -> dict[str, Any]:
        def share(n: int, of: int) -> float | None:
            return None if not of else n / of

        def percent(n: int, of: int) -> float | None:
            return None if not of else 100 * n / of

        return {
            "rounds": self.rounds,
            "exact": percent(self.exact, self.bids),
            "over": percent(self.over, self.bids),
            "under": percent(self.under, self.bids),
            "set_rate": percent(self.sets, self.rounds),
            "nils": self.nils,
            "nils_made": self.nils_made,
            "bags": share(self.bags, self.rounds),
            "points": share(self.points, self.rounds),
            "by_type": [
                (label, f.shown())
                for label, f in sorted(self.by_type.items(), key=lambda kv: -kv[1].rounds)
            ],
        }


def figures(mine: Q) -> dict[str, dict[str, Any]]:
    """The player's (``mine``: their seats) figures and the bots' at their tables."""
    seats = list(
        Seat.objects.filter(mine, kind=Seat.Kind.HUMAN, table__status=Table.Status.FINISHED)
        .order_by("-table_id")
        .values_list("table_id", "position")[:ROUNDS]
    )
    where = dict(seats)
    rows: Iterable[RoundRecordRow] = RoundRecordRow.objects.filter(
        table_id__in=list(where)
    ).order_by("-id")[:ROUNDS]
    me, bots = Figures(), Figures()
    for row in rows:
        p = where[row.table_id]
        if row.seat_kinds[p] != "H":  # the seat was handed over for this round
            continue
        me.add(row, p)
        for other in range(4):
            if row.seat_kinds[other] == "B":
                bots.add(row, other)
    return {"me": me.shown(), "bots": bots.shown()}
