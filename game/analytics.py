"""Human-vs-bot analyses over the stored rounds and matches (the BIS paper's section 5.2).

Every analysis takes a :class:`Filters` (date range, rule set, bot names,
partnership make-up) and returns plain dicts and lists (for the dashboard's
tables, its charts and JSON), each with its sample size. The work is done
in the database: GROUP BY aggregates over the query columns of
``RoundRecordRow`` and ``MatchResult`` (``game.round_columns``); Python only
merges a few dozen grouped rows. Per-seat analyses run one aggregate per
seat (N, E, S, W) and add them up; per-partnership ones one per side.

Vocabulary: a seat kind is ``H`` (human) or ``B`` (bot); a partnership's
*make-up* is ``BB`` (bot+bot), ``HB`` (human+bot) or ``HH`` (human+human).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connection, connections
from django.db.models import Count

from bots.tournament import wilson_interval
from game.analytics_bids import SeatGroup, bidding_accuracy, nil_bids, seat_bids
from game.analytics_filters import MAKEUP_LABELS, PARALLEL_QUERIES, Filters, grouped
from game.analytics_rounds import (
    bid_sum_distribution,
    nil_positions,
    points_by_bid_sum,
    points_histogram,
    round_types,
    win_rates,
)
from game.models import RoundRecordRow

__all__ = [
    "MAKEUP_LABELS",
    "Filters",
    "SeatGroup",
    "all_analyses",
    "bid_sum_distribution",
    "bidding_accuracy",
    "bot_names_in_use",
    "nil_bids",
    "nil_positions",
    "points_by_bid_sum",
    "points_histogram",
    "round_types",
    "rule_sets",
    "seat_bids",
    "summary",
    "wilson_interval",
    "win_rates",
]


# ----- everything, for the dashboard -----------------------------------------------------------


def summary(filters: Filters) -> dict[str, Any]:
    qs = filters.rounds()
    return {
        "rounds": qs.count(),
        "matches": filters.matches().count(),
    }


def _in_own_connection(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    finally:
        connections.close_all()  # this thread's connection, opened for this query


def _side_by_side() -> bool:
    return connection.vendor == "postgresql" and not connection.in_atomic_block


def _run_all(jobs: dict[str, Callable[[], Any]]) -> dict[str, Any]:
    """Run independent queries, at once on PostgreSQL (one connection each), else in turn.

    Inside a transaction (tests) other connections would not see its rows: in turn then.
    """
    if not _side_by_side():
        return {name: fn() for name, fn in jobs.items()}
    with ThreadPoolExecutor(max_workers=PARALLEL_QUERIES) as pool:
        futures = {name: pool.submit(_in_own_connection, fn) for name, fn in jobs.items()}
        return {name: f.result() for name, f in futures.items()}


def all_analyses(filters: Filters) -> dict[str, Any]:
    """Every analysis for one set of filters (what the dashboard shows).

    The analyses are a dozen aggregate queries over the same rows, independent
    of each other: PostgreSQL answers them side by side on its cores.
    """
    jobs: dict[str, Callable[[], Any]] = {
        "win_rates": lambda: win_rates(filters),
        "bid_sums": lambda: bid_sum_distribution(filters),
        "nil_positions": lambda: nil_positions(filters),
        "points_by_bid_sum": lambda: points_by_bid_sum(filters),
        "points_histogram": lambda: points_histogram(filters),
        "round_types": lambda: round_types(filters),
    }
    for seat in range(4):
        jobs[f"seat_bids_{seat}"] = lambda seat=seat: seat_bids(filters, (seat,))
    done = _run_all(jobs)
    groups = [g for seat in range(4) for g in done[f"seat_bids_{seat}"]]
    wins, bid_sums = done["win_rates"], done["bid_sums"]
    return {
        "summary": {"rounds": bid_sums["rounds"], "matches": wins["matches"]},
        "win_rates": wins,
        "nil_positions": done["nil_positions"],
        "points_by_bid_sum": done["points_by_bid_sum"],
        "bid_sums": bid_sums,
        "points_histogram": done["points_histogram"],
        "round_types": done["round_types"],
        "bidding_accuracy": bidding_accuracy(filters, groups),
        "nil_bids": nil_bids(filters, groups),
    }


def rule_sets() -> list[dict[str, Any]]:
    """The rule sets of the stored rounds: key, a short label, and the number of rounds."""
    from game.engine.rules import Rules

    out = []
    groups = grouped(RoundRecordRow.objects.all(), "rules_key", n=Count("*"))
    default = Rules().to_dict()
    for g in sorted(groups, key=lambda g: -g["n"]):
        rules = (
            RoundRecordRow.objects.filter(rules_key=g["rules_key"])
            .values_list("rules", flat=True)
            .first()
        ) or {}
        changed = [f"{k}={v}" for k, v in sorted(rules.items()) if default.get(k) != v]
        label = f"goal {rules.get('winning_goal')}/{rules.get('losing_goal')}"
        other = [c for c in changed if not c.startswith(("winning_goal", "losing_goal"))]
        if other:
            label += ", " + ", ".join(other)
        out.append({"key": g["rules_key"], "label": label, "rounds": g["n"]})
    return out


def bot_names_in_use() -> list[str]:
    """The bots that sat at any table (the seats table is small: no scan of the rounds)."""
    from game.models import Seat

    return sorted(
        Seat.objects.filter(kind=Seat.Kind.BOT)
        .exclude(bot_name="")
        .order_by()
        .values_list("bot_name", flat=True)
        .distinct()
    )
