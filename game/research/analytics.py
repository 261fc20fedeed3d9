"""Human-vs-bot analyses of the stored rounds and matches (the BIS paper's section 5.2).

Every analysis takes a :class:`Filters` (date range, rule set, and which
partnerships it measures: their bot, their make-up, their opponents' make-up;
stand-in rounds left out unless asked for) and returns plain dicts and lists
(for the dashboard's tables, its charts and JSON), each with its sample size.
They read the tallies (``RoundTally``, kept on write by ``game.research.tallies``): a
few thousand rows grouped in the database, whatever the number of rounds.

Vocabulary: a seat kind is ``H`` (human) or ``B`` (bot); a partnership's
*make-up* is ``BB`` (bot+bot), ``HB`` (human+bot) or ``HH`` (human+human); its
*bot key* is its bots' name (``game.research.round_columns.side_bot``).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connection, connections
from django.db.models import Sum

from game.models import RoundRecordRow, RoundTally
from game.research.analytics_bids import SeatGroup, bidding_accuracy, nil_bids, seat_bids
from game.research.analytics_filters import (
    MAKEUP_LABELS,
    PARALLEL_QUERIES,
    Filters,
    once,
    side_label,
    tallied,
)
from game.research.analytics_quality import card_play_quality
from game.research.analytics_rounds import (
    bid_sum_distribution,
    bid_sums,
    nil_positions,
    points_by_bid_sum,
    points_histogram,
    win_rates,
)
from game.research.analytics_types import round_type_win_rates, round_types_by_condition
from game.research.intervals import wilson_interval
from game.research.tally_keys import ACCURACY, ALL_TIME, BID_SUM, MATCH
from game.sql.connections import features

__all__ = [
    "MAKEUP_LABELS",
    "Filters",
    "SeatGroup",
    "all_analyses",
    "bid_sum_distribution",
    "bidding_accuracy",
    "bot_names_in_use",
    "card_play_quality",
    "nil_bids",
    "nil_positions",
    "points_by_bid_sum",
    "points_histogram",
    "round_type_win_rates",
    "round_types_by_condition",
    "rule_sets",
    "seat_bids",
    "side_label",
    "summary",
    "wilson_interval",
    "win_rates",
]


# ----- everything, for the dashboard -----------------------------------------------------------


def summary(filters: Filters) -> dict[str, Any]:
    """Rounds and matches with a measured partnership; those left out as stand-in
    rounds (matches with a stand-in round), which ``Filters.stand_ins`` would count;
    and the pilot data's, which ``Filters.pilot`` would count (each of the two
    counted as the other filter says)."""
    out = {"rounds": 0, "matches": 0, "stand_in_rounds": 0, "stand_in_matches": 0,
           "pilot_rounds": 0, "pilot_matches": 0}  # fmt: skip
    for figure, name in ((BID_SUM, "rounds"), (MATCH, "matches")):
        groups = tallied(filters, figure, "stand_in", "pilot", any_stand_in=True, any_pilot=True)
        for g in groups:
            stand_in_ok = not g["stand_in"] or filters.stand_ins
            pilot_ok = not g["pilot"] or filters.pilot
            if stand_in_ok and pilot_ok:
                out[name] += once([g])
            if g["stand_in"] and pilot_ok:
                out[f"stand_in_{name}"] += once([g])
            if g["pilot"] and stand_in_ok:
                out[f"pilot_{name}"] += once([g])
    out["left_out"] = not filters.stand_ins
    out["pilot_left_out"] = not filters.pilot
    return out


def _in_own_connection(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    finally:
        connections.close_all()  # this thread's connection, opened for this query


def _side_by_side() -> bool:
    return features().reads_side_by_side and not connection.in_atomic_block


def _run_all(jobs: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Run independent queries, at once on PostgreSQL (one connection each), else in turn.

    Inside a transaction (tests) other connections would not see its rows: in turn then.
    """
    if not _side_by_side():
        return {name: fn() for name, fn in jobs.items()}
    with ThreadPoolExecutor(max_workers=PARALLEL_QUERIES) as pool:
        futures = {name: pool.submit(_in_own_connection, fn) for name, fn in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


def all_analyses(
    filters: Filters, conditions: list[tuple[int, str]] | None = None
) -> dict[str, Any]:
    """Every analysis for one set of filters (what the dashboard shows); with a
    study's ``conditions`` (id, name), the round-type win rates per condition too.

    Twelve grouped queries of the tallies, independent of each other: PostgreSQL
    answers them side by side on its cores.
    """
    jobs: dict[str, Callable[[], Any]] = {
        "summary": lambda: summary(filters),
        "win_rates": lambda: win_rates(filters),
        "bid_sums": lambda: bid_sums(filters),
        "nil_positions": lambda: nil_positions(filters),
        "points_histogram": lambda: points_histogram(filters),
        "round_type_win_rates": lambda: round_type_win_rates(filters),
        "seat_bids": lambda: seat_bids(filters),
        "accuracy": lambda: seat_bids(filters, ACCURACY),
        "card_play_quality": lambda: card_play_quality(filters),
    }
    if conditions:
        jobs["by_condition"] = lambda: round_types_by_condition(filters, conditions)
    done = _run_all(jobs)
    groups: list[SeatGroup] = done["seat_bids"]
    figure_4, figure_5 = done["bid_sums"]
    return {
        "summary": done["summary"],
        "win_rates": done["win_rates"],
        "nil_positions": done["nil_positions"],
        "points_by_bid_sum": figure_4,
        "bid_sums": figure_5,
        "points_histogram": done["points_histogram"],
        "round_type_win_rates": done["round_type_win_rates"],
        "bidding_accuracy": bidding_accuracy(filters, done["accuracy"]),
        "nil_bids": nil_bids(filters, groups),
        "round_types_by_condition": done.get("by_condition"),
        "card_play_quality": done["card_play_quality"],
    }


def rule_sets() -> list[dict[str, Any]]:
    """The rule sets of the stored rounds: key, a short label, and the number of rounds."""
    from game.engine.rules import Rules

    out = []
    groups = (
        RoundTally.objects.filter(span="a", start=ALL_TIME, figure=BID_SUM)
        .order_by()
        .values("rules_key")
        .annotate(n=Sum("n"))
    )
    default = Rules().to_dict()
    for g in sorted(groups, key=lambda g: (-g["n"], g["rules_key"])):
        rules = (
            RoundRecordRow.objects.filter(rules_key=g["rules_key"])
            .order_by()
            .values_list("rules", flat=True)[:1]
        )
        found = rules[0] if rules else {}
        changed = [f"{k}={v}" for k, v in sorted(found.items()) if default.get(k) != v]
        label = f"goal {found.get('winning_goal')}/{found.get('losing_goal')}"
        other = [c for c in changed if not c.startswith(("winning_goal", "losing_goal"))]
        if other:
            label += ", " + ", ".join(other)
        out.append({"key": g["rules_key"], "label": label, "rounds": g["n"] // 2})
    return out


def bot_names_in_use() -> list[str]:
    """The partnerships' bot keys in the tallies ('BIS+SRP', 'A/B' for two bots)."""
    return sorted(
        RoundTally.objects.filter(span="a", start=ALL_TIME, figure=BID_SUM)
        .exclude(bot="")
        .order_by()
        .values_list("bot", flat=True)
        .distinct()
    )
