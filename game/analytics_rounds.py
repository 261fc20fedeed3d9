"""Per-round and per-match analyses: win rates by make-up, nil by position, points by
bid sum and their histogram, the SRP round types (the BIS paper's section 5.2)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Case, Count, IntegerField, Sum, Value, When

from bots.tournament import wilson_interval
from game.analytics_filters import (
    BID_SUM,
    HISTOGRAM_BIN,
    MAKEUP_LABELS,
    SIDES,
    Filters,
    grouped,
    ratio,
    seat_kind,
)
from game.engine.round_types import RoundType
from game.round_columns import MAKEUPS, NIL_CATEGORIES, NO_NIL, SEATS

# ----- match win rates ----------------------------------------------------------------


def win_rates(filters: Filters) -> dict[str, Any]:
    """Match win rates per partnership make-up and per pairing, with Wilson 95% intervals."""
    groups = grouped(filters.matches(), "makeup_ns", "makeup_ew", "winner", n=Count("*"))
    played: dict[str, int] = defaultdict(int)
    won: dict[str, int] = defaultdict(int)
    pair_played: dict[tuple[str, str], int] = defaultdict(int)
    pair_won: dict[tuple[str, str], int] = defaultdict(int)  # wins of the first of the pair
    matches = 0
    for g in groups:
        ns, ew, winner, n = g["makeup_ns"], g["makeup_ew"], g["winner"], g["n"]
        matches += n
        for side, mk in ((0, ns), (1, ew)):
            played[mk] += n
            if winner == side:
                won[mk] += n
        # Pairings in a fixed order (BB before HB before HH), the first side's wins.
        first, second = sorted((ns, ew), key=MAKEUPS.index)
        first_side = 0 if ns == first else 1
        pair_played[first, second] += n
        if ns == ew:
            pair_won[first, second] += n if winner == 0 else 0  # N/S's wins when alike
        elif winner == first_side:
            pair_won[first, second] += n
    by_makeup = []
    for mk in MAKEUPS:
        if played[mk]:
            lo, hi = wilson_interval(won[mk], played[mk])
            by_makeup.append(
                {
                    "makeup": mk,
                    "label": MAKEUP_LABELS[mk],
                    "partnership_matches": played[mk],
                    "wins": won[mk],
                    "win_rate": won[mk] / played[mk],
                    "ci95": [lo, hi],
                }
            )
    pairings = []
    for (a, b), n in sorted(
        pair_played.items(), key=lambda x: (MAKEUPS.index(x[0][0]), MAKEUPS.index(x[0][1]))
    ):
        lo, hi = wilson_interval(pair_won[a, b], n)
        pairings.append(
            {
                "first": a,
                "second": b,
                "label": f"{MAKEUP_LABELS[a]} vs {MAKEUP_LABELS[b]}",
                "first_is": "North/South" if a == b else MAKEUP_LABELS[a],
                "matches": n,
                "first_wins": pair_won[a, b],
                "win_rate": pair_won[a, b] / n,
                "ci95": [lo, hi],
            }
        )
    return {"matches": matches, "by_makeup": by_makeup, "pairings": pairings}


# ----- Table 3: nil positions -----------------------------------------------------------


def nil_positions(filters: Filters) -> dict[str, Any]:
    """The paper's Table 3: per nil position, rounds, points per round and nil success
    of each partnership make-up (see ``game.round_columns`` for the positions)."""
    qs = filters.rounds()
    counts: dict[str, int] = defaultdict(int)
    cells: dict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: {"rounds": 0, "points": 0, "nil_bids": 0, "nil_made": 0}
    )
    # One scan: grouped by both partnerships' make-ups, each group counted for both sides.
    for g in grouped(
        qs,
        "nil_category",
        "makeup_ns",
        "makeup_ew",
        n=Count("*"),
        **{
            f"{name}_{side}": Sum(f"{column}_{side}")
            for side, _, _ in SIDES
            for name, column in (
                ("points", "points"),
                ("nil_bids", "nil_bids"),
                ("nil_made", "nil_made"),
            )
        },  # fmt: skip
    ):
        counts[g["nil_category"]] += g["n"]
        for side, _, _ in SIDES:
            c = cells[g["nil_category"], g[f"makeup_{side}"]]
            c["rounds"] += g["n"]
            c["points"] += g[f"points_{side}"] or 0
            c["nil_bids"] += g[f"nil_bids_{side}"] or 0
            c["nil_made"] += g[f"nil_made_{side}"] or 0
    rows = []
    for cat in NIL_CATEGORIES:
        by_makeup = {}
        for mk in MAKEUPS:
            c = cells.get((cat, mk))
            if not c or not c["rounds"]:
                continue
            by_makeup[mk] = {
                "partnership_rounds": c["rounds"],
                "points_per_round": c["points"] / c["rounds"],
                "nil_bids": c["nil_bids"],
                "nil_made": c["nil_made"],
                "nil_success": ratio(c["nil_made"], c["nil_bids"]),
            }
        rows.append({"position": cat, "rounds": counts.get(cat, 0), "by_makeup": by_makeup})
    return {"rounds": sum(counts.values()), "rows": rows}


# ----- Figures 4 and 5: the sum of the bids ----------------------------------------------


def points_by_bid_sum(filters: Filters) -> dict[str, Any]:
    """Figure 4: average points per round in no-nil rounds by the sum of the four bids,
    per partnership make-up."""
    qs = filters.rounds().filter(nil_category=NO_NIL)
    cells: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    rounds: dict[int, int] = defaultdict(int)
    # One scan: grouped by both partnerships' make-ups, each group counted for both sides.
    for g in grouped(qs, ("bid_sum", BID_SUM), "makeup_ns", "makeup_ew", n=Count("*"),
                      points_ns=Sum("points_ns"), points_ew=Sum("points_ew")):  # fmt: skip
        rounds[g["bid_sum"]] += g["n"]
        for side, _, _ in SIDES:
            c = cells[g["bid_sum"], g[f"makeup_{side}"]]
            c[0] += g["n"]
            c[1] += g[f"points_{side}"] or 0
    rows = []
    for total in sorted(rounds):
        rows.append(
            {
                "bid_sum": total,
                "rounds": rounds[total],
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
    return {"rounds": sum(rounds.values()), "rows": rows}


def bid_sum_distribution(filters: Filters) -> dict[str, Any]:
    """Figure 5: how often each sum of the four bids occurs (nil counts 0), and the mean."""
    qs = filters.rounds()
    counts = {g["bid_sum"]: g["n"] for g in grouped(qs, ("bid_sum", BID_SUM), n=Count("*"))}
    n = sum(counts.values())
    return {
        "rounds": n,
        "mean": sum(k * v for k, v in counts.items()) / n if n else None,
        "rows": [
            {"bid_sum": k, "rounds": counts[k], "share": counts[k] / n} for k in sorted(counts)
        ],
    }


# ----- Figure 2: points per round, nil or not ---------------------------------------------


def points_histogram(filters: Filters, bin_size: int = HISTOGRAM_BIN) -> dict[str, Any]:
    """Figure 2: per seat-round, the seat's partnership's points, for seats that bid nil
    and seats that did not (bins of ``bin_size`` points, labelled by their lower edge)."""
    qs = filters.rounds()
    hist: dict[str, dict[int, int]] = {"nil": defaultdict(int), "not_nil": defaultdict(int)}
    sums = {"nil": 0, "not_nil": 0}
    for side, a, b in SIDES:
        # One query per side: the side's points and how many of its two seats bid nil.
        nils = Case(When(**{f"bid_{SEATS[a]}": 0}, then=Value(1)), default=Value(0),
                    output_field=IntegerField()) + Case(
            When(**{f"bid_{SEATS[b]}": 0}, then=Value(1)), default=Value(0),
            output_field=IntegerField())  # fmt: skip
        for g in grouped(qs, ("nils", nils), f"points_{side}", n=Count("*")):
            points = g[f"points_{side}"]
            edge = (points // bin_size) * bin_size
            for key, seats in (("nil", g["nils"]), ("not_nil", 2 - g["nils"])):
                if seats:
                    hist[key][edge] += seats * g["n"]
                    sums[key] += points * seats * g["n"]
    out: dict[str, Any] = {"bin_size": bin_size}
    for key, h in hist.items():
        n = sum(h.values())
        out[key] = {
            "seat_rounds": n,
            "mean": sums[key] / n if n else None,
            "bins": [{"from": k, "to": k + bin_size - 1, "count": h[k]} for k in sorted(h)],
        }
    seen = set(hist["nil"]) | set(hist["not_nil"])
    out["edges"] = list(range(min(seen), max(seen) + 1, bin_size)) if seen else []
    return out


# ----- the ten SRP round types ---------------------------------------------------------------


def round_types(filters: Filters) -> dict[str, Any]:
    """Per SRP round type (seen from each seat) and seat kind: seat-rounds, the seat's
    partnership's average points, and how often that partnership made or was set."""
    qs = filters.rounds()
    cells: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for side, a, b in SIDES:
        made = Case(When(**{f"made_{side}": True}, then=Value(1)), default=Value(0),
                    output_field=IntegerField())  # fmt: skip
        # One query per side, grouped by both seats' types and kinds.
        la, lb = SEATS[a], SEATS[b]
        for g in grouped(qs, f"round_type_{la}", ("kind_a", seat_kind(a)), f"round_type_{lb}",
                          ("kind_b", seat_kind(b)), n=Count("*"), points=Sum(f"points_{side}"),
                          made=Sum(made)):  # fmt: skip
            for letter, kind in ((la, "kind_a"), (lb, "kind_b")):
                c = cells[g[f"round_type_{letter}"], g[kind]]
                c[0] += g["n"]
                c[1] += g["points"] or 0
                c[2] += g["made"] or 0
    rows = []
    for t in RoundType:
        by_kind = {}
        total = [0, 0, 0]
        for kind in ("H", "B"):
            c = cells.get((int(t), kind))
            if c and c[0]:
                by_kind[kind] = _type_cell(c)
                total = [x + y for x, y in zip(total, c, strict=True)]
        rows.append({"type": int(t), "label": t.label, "all": _type_cell(total),
                     "by_kind": by_kind})  # fmt: skip
    return {"seat_rounds": sum(r["all"]["seat_rounds"] for r in rows), "rows": rows}


def _type_cell(c: list[int]) -> dict[str, Any]:
    n, points, made = c
    return {
        "seat_rounds": n,
        "points_per_round": ratio(points, n),
        "make_rate": ratio(made, n),
        "set_rate": ratio(n - made, n),
    }
