"""Card play quality by round type: the points (and tricks) each actor's cards gave
away against double-dummy play (all four hands known, ``game.replays``), from the
tallies' ``Q`` and ``D`` figures (``game.research.tally_keys``).

The unit is the seat-round: a seat's 13 cards in one round, summed. Cards of
one round are not independent (one mistake leads to the next position, and a
seat's later cards are judged from the position its earlier ones left), so the
interval is over seat-rounds: mean +- 1.96 sd / sqrt(n), a normal interval with
the sample standard deviation (n >= 2). The figure per card is a ratio of sums,
points given away over cards played, and its interval the seat-round
interval divided by the cards per seat-round (13: every seat plays 13 cards).
Seat-rounds of one round or match are not independent of one another either
(the same deal, the same opponents): the interval does not allow for that.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from game.engine.round_types import RoundType
from game.research.analytics_filters import Filters, once, tallied
from game.research.intervals import Z_95
from game.research.round_columns import ACTOR_HUMAN, ACTOR_STAND_IN
from game.research.tally_keys import ANALYSED, QUALITY, QUALITY_SUMS, SUMS

ALL_TYPES = 0  # the rows of every round type together


def mean_interval(total: int, squares: int, n: int) -> dict[str, Any]:
    """The mean of ``n`` values from their sum and sum of squares, with its 95%
    normal interval (None below two values)."""
    if n <= 0:
        return {"mean": None, "ci95": None, "sd": None}
    mean = total / n
    if n < 2:
        return {"mean": mean, "ci95": None, "sd": None}
    var = max(0.0, (squares - total * total / n) / (n - 1))
    half = Z_95 * math.sqrt(var / n)
    return {"mean": mean, "ci95": [mean - half, mean + half], "sd": math.sqrt(var)}


def per_card(seat_round: dict[str, Any], n: int, cards: int) -> dict[str, Any]:
    """The per-card figure: the sum over the cards (a ratio of sums), its interval
    the seat-round interval scaled by seat-rounds per card."""
    if not cards or seat_round["mean"] is None:
        return {"mean": None, "ci95": None}
    scale = n / cards
    ci = seat_round["ci95"]
    return {"mean": seat_round["mean"] * scale,
            "ci95": None if ci is None else [ci[0] * scale, ci[1] * scale]}  # fmt: skip


def cell(sums: dict[str, int]) -> dict[str, Any]:
    """One row's figures from its summed tallies (named as ``QUALITY_SUMS``)."""
    n, cards = sums["n"], sums["cards"]
    points = mean_interval(sums["points_lost"], sums["points_lost_sq"], n)
    tricks = mean_interval(sums["tricks_lost"], sums["tricks_lost_sq"], n)
    return {
        "seat_rounds": n,
        "cards": cards,
        "points_per_round": points,
        "points_per_card": per_card(points, n, cards),
        "tricks_per_round": tricks,
        "tricks_per_card": per_card(tricks, n, cards),
    }


def actor_order(who: str) -> tuple[int, str]:
    """Humans first, then humans with a stand-in, then the bots by name."""
    return ({ACTOR_HUMAN: 0, ACTOR_STAND_IN: 1}.get(who, 2), who)


def actor_label(who: str) -> str:
    if who == ACTOR_STAND_IN:
        return "human with a stand-in (kept apart)"
    return who


def card_play_quality(filters: Filters) -> dict[str, Any]:
    """Per round type (the seat's, ``game.engine.round_types``; 0: every type) and
    actor kind (a human, a human whose stand-in made one of its moves, each bot):
    seat-rounds, and the points and tricks given away per card and per
    seat-round with 95% intervals; and how many rounds the figures stand on:
    analysed, and stored but not analysable (the filters' rounds less these two
    are not analysed yet)."""
    summed: dict[tuple[int, str], dict[str, int]] = defaultdict(lambda: dict.fromkeys(SUMS, 0))
    for g in tallied(filters, QUALITY, "a", "who"):
        for key in ((g["a"], g["who"]), (ALL_TYPES, g["who"])):
            for s in SUMS:
                summed[key][s] += g[s]
    status = tallied(filters, ANALYSED, "a")
    actors = sorted({who for _, who in summed}, key=actor_order)
    rows = []
    for t in (ALL_TYPES, *RoundType):
        label = "every round type" if t == ALL_TYPES else f"{int(t)}. {RoundType(t).label}"
        for who in actors:
            sums = summed.get((int(t), who))
            if sums and sums["n"]:
                named = dict(zip(QUALITY_SUMS, (sums[s] for s in SUMS), strict=True))
                rows.append({"type": int(t), "type_label": label, "actor": who,
                             "actor_label": actor_label(who), **cell(named)})  # fmt: skip
    return {
        "rounds_analysed": once([g for g in status if g["a"] == 1]),
        "rounds_failed": once([g for g in status if g["a"] == 0]),
        "actors": [{"key": who, "label": actor_label(who)} for who in actors],
        "rows": rows,
    }
