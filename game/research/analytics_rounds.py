"""Per-round and per-match analyses from the tallies: match win rates per partnership and
pairing, nil by position (the paper's Table 3), points by bid sum and their histogram
(Figures 4, 5 and 2). Each counts the measured partnerships (``Filters``)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from game.research.analytics_filters import MAKEUP_LABELS, Filters, once, ratio, side_label, tallied
from game.research.intervals import wilson_interval
from game.research.round_columns import MAKEUPS, NIL_CATEGORIES
from game.research.tally_keys import BID_SUM, MATCH, NIL_POSITION, POINTS, POINTS_BIN


def rate(wins: int, n: int) -> dict[str, Any]:
    lo, hi = wilson_interval(wins, n)
    return {"n": n, "wins": wins, "rate": ratio(wins, n), "ci95": [lo, hi]}


# ----- match win rates ----------------------------------------------------------------


def win_rates(filters: Filters) -> dict[str, Any]:
    """Match win rates of the measured partnerships per make-up and per pairing (who
    played whom: the bots named), with Wilson 95% intervals."""
    groups = tallied(filters, MATCH, "makeup", "bot", "opp_makeup", "who")
    played: dict[str, int] = defaultdict(int)
    won: dict[str, int] = defaultdict(int)
    pairs: dict[tuple[str, str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    matches = once(groups)
    for g in groups:
        played[g["makeup"]] += g["n"]
        won[g["makeup"]] += g["won"]
        cell = pairs[g["makeup"], g["bot"], g["opp_makeup"], g["who"]]
        cell[0] += g["n"]
        cell[1] += g["won"]
    by_makeup = []
    for mk in MAKEUPS:
        if played[mk]:
            r = rate(won[mk], played[mk])
            by_makeup.append({"makeup": mk, "label": MAKEUP_LABELS[mk],
                              "partnership_matches": r["n"], "wins": r["wins"],
                              "win_rate": r["rate"], "ci95": r["ci95"]})  # fmt: skip
    pairings = []
    for (mk, bot, opp_mk, opp_bot), (n, wins) in sorted(
        pairs.items(), key=lambda x: (MAKEUPS.index(x[0][0]), x[0][1], x[0][2], x[0][3])
    ):
        r = rate(wins, n)
        pairings.append(
            {
                "measured": side_label(mk, bot),
                "opponents": side_label(opp_mk, opp_bot),
                "label": f"{side_label(mk, bot)} vs {side_label(opp_mk, opp_bot)}",
                "matches": n,
                "wins": wins,
                "win_rate": r["rate"],
                "ci95": r["ci95"],
            }
        )
    return {"matches": matches, "by_makeup": by_makeup, "pairings": pairings}


# ----- Table 3: nil positions -----------------------------------------------------------


def nil_positions(filters: Filters) -> dict[str, Any]:
    """The paper's Table 3: per nil position of the round, rounds, and each measured
    make-up's points per round and nil success (see ``game.research.round_columns``)."""
    by_position: dict[str, list[dict[str, Any]]] = defaultdict(list)
    cells: dict[tuple[str, str], dict[str, int]] = {}
    for g in tallied(filters, NIL_POSITION, "a", "makeup"):
        cat = NIL_CATEGORIES[g["a"]]
        by_position[cat].append(g)
        cells[cat, g["makeup"]] = g
    counts = {cat: once(groups) for cat, groups in by_position.items()}
    rows = []
    for cat in NIL_CATEGORIES:
        by_makeup = {}
        for mk in MAKEUPS:
            c = cells.get((cat, mk))
            if not c or not c["n"]:
                continue
            by_makeup[mk] = {
                "partnership_rounds": c["n"],
                "points_per_round": c["points"] / c["n"],
                "nil_bids": c["nil_bids"],
                "nil_made": c["nil_made"],
                "nil_success": ratio(c["nil_made"], c["nil_bids"]),
            }
        rows.append({"position": cat, "rounds": counts.get(cat, 0), "by_makeup": by_makeup})
    return {"rounds": sum(counts.values()), "rows": rows}


# ----- Figures 4 and 5: the sum of the bids ----------------------------------------------


def bid_sums(filters: Filters) -> tuple[dict[str, Any], dict[str, Any]]:
    """(Figure 4, Figure 5) from one query: average points per round of each measured
    make-up in no-nil rounds by the sum of the four bids; how often each sum occurs
    (rounds with a measured partnership, nil counts 0) and the mean."""
    by_sum: dict[int, list[dict[str, Any]]] = defaultdict(list)
    by_sum_no_nil: dict[int, list[dict[str, Any]]] = defaultdict(list)
    cells: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    for g in tallied(filters, BID_SUM, "a", "b", "makeup"):
        total = g["a"]
        by_sum[total].append(g)
        if g["b"]:
            by_sum_no_nil[total].append(g)
            cells[total, g["makeup"]][0] += g["n"]
            cells[total, g["makeup"]][1] += g["points"]
    counts = {k: once(groups) for k, groups in by_sum.items()}
    no_nil = {k: once(groups) for k, groups in by_sum_no_nil.items()}
    rows4 = []
    for total in sorted(no_nil):
        rows4.append(
            {
                "bid_sum": total,
                "rounds": no_nil[total],
                "by_makeup": {
                    mk: {
                        "partnership_rounds": cells[total, mk][0],
                        "points_per_round": cells[total, mk][1] / cells[total, mk][0],
                    }
                    for mk in MAKEUPS
                    if cells.get((total, mk), [0])[0]
                },
            }
        )
    n = sum(counts.values())
    figure_5 = {
        "rounds": n,
        "mean": sum(k * v for k, v in counts.items()) / n if n else None,
        "rows": [
            {"bid_sum": k, "rounds": counts[k], "share": counts[k] / n}
            for k in sorted(counts)
            if counts[k]
        ],
    }
    return {"rounds": sum(no_nil.values()), "rows": rows4}, figure_5


def points_by_bid_sum(filters: Filters) -> dict[str, Any]:
    """Figure 4 (see :func:`bid_sums`)."""
    return bid_sums(filters)[0]


def bid_sum_distribution(filters: Filters) -> dict[str, Any]:
    """Figure 5 (see :func:`bid_sums`)."""
    return bid_sums(filters)[1]


# ----- Figure 2: points per round, nil or not ---------------------------------------------


def points_histogram(filters: Filters) -> dict[str, Any]:
    """Figure 2: per seat-round of a measured partnership, the partnership's points, for
    seats that bid nil and seats that did not (bins of POINTS_BIN, by lower edge)."""
    hist: dict[str, dict[int, int]] = {"nil": defaultdict(int), "not_nil": defaultdict(int)}
    sums = {"nil": 0, "not_nil": 0}
    for g in tallied(filters, POINTS, "a", "b"):
        nils = g["b"]
        for key, seats in (("nil", nils), ("not_nil", 2 - nils)):
            if seats and g["n"]:
                hist[key][g["a"]] += seats * g["n"]
                sums[key] += seats * g["points"]
    out: dict[str, Any] = {"bin_size": POINTS_BIN}
    for key, h in hist.items():
        n = sum(h.values())
        out[key] = {
            "seat_rounds": n,
            "mean": sums[key] / n if n else None,
            "bins": [{"from": k, "to": k + POINTS_BIN - 1, "count": h[k]} for k in sorted(h)],
        }
    seen = set(hist["nil"]) | set(hist["not_nil"])
    out["edges"] = list(range(min(seen), max(seen) + 1, POINTS_BIN)) if seen else []
    return out
