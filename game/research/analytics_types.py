"""Win rates by round type: the mission's headline table (the BIS paper's section 5.2).

For each of the ten SRP round types and each kind of measured partnership
(human+human, human+bot, bot+bot, and bot+bot per bot), the partnership-rounds
of that type (the type seen by either of its seats: a nil round is *we nil*
for the partnership and also *partner nil*), how often the partnership won the
round (scored more points in it than its opponents; a tie is not a win), how
often it made its contract, and its points per round; rates with Wilson 95%
intervals. The human-vs-bot gap per type is the human+bot win rate minus the
bot+bot one, with Newcombe's interval for a difference of two proportions
(built from the two Wilson intervals). Beside them, the match's winner by
the round types it held: of the finished matches in which the partnership had
a round of that type, how many it won.
"""

from __future__ import annotations

from collections import defaultdict
from math import sqrt
from typing import Any

from game.engine.round_types import RoundType
from game.research.analytics_filters import Filters, ratio, side_label, tallied
from game.research.intervals import wilson_interval
from game.research.tally_keys import MATCH_BY_TYPE, ROUND_TYPE

POOLED = (("HH", "human+human"), ("HB", "human+bot"), ("BB", "bot+bot"))


def _cell(c: list[int]) -> dict[str, Any]:
    n, won, made, points = c
    return {
        "n": n,
        "won": won,
        "win_rate": ratio(won, n),
        "win_ci95": list(wilson_interval(won, n)),
        "made": made,
        "made_rate": ratio(made, n),
        "made_ci95": list(wilson_interval(made, n)),
        "points_per_round": ratio(points, n),
    }


def difference(a: tuple[int, int], b: tuple[int, int]) -> dict[str, Any] | None:
    """The difference of two rates (wins, n) with Newcombe's 95% interval (method 10)."""
    (wa, na), (wb, nb) = a, b
    if not na or not nb:
        return None
    pa, pb = wa / na, wb / nb
    la, ua = wilson_interval(wa, na)
    lb, ub = wilson_interval(wb, nb)
    d = pa - pb
    lo = d - sqrt((pa - la) ** 2 + (ub - pb) ** 2)
    hi = d + sqrt((ua - pa) ** 2 + (pb - lb) ** 2)
    return {"difference": d, "ci95": [lo, hi]}


def _by_kind(groups: list[dict[str, Any]], bots: set[str]) -> dict[tuple[int, str], list[int]]:
    """(round type, kind column) -> [n, won, made, points], BB also per bot key."""
    cells: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for g in groups:
        columns = [g["makeup"]]
        if g["makeup"] == "BB":
            columns.append("BB:" + g["bot"])
            bots.add(g["bot"])
        for column in columns:
            c = cells[g["a"], column]
            for i, s in enumerate(("n", "won", "made", "points")):
                c[i] += g[s]
    return cells


def _match_cell(c: list[int]) -> dict[str, Any]:
    n, won = c[0], c[1]
    return {
        "n": n,
        "won": won,
        "win_rate": ratio(won, n),
        "win_ci95": list(wilson_interval(won, n)),
    }


def round_type_win_rates(filters: Filters) -> dict[str, Any]:
    """Per round type and kind of measured partnership: n, win, made and points; the gap;
    and the match win rate of the partnerships whose matches held that type."""
    bots: set[str] = set()
    cells = _by_kind(tallied(filters, ROUND_TYPE, "a", "makeup", "bot"), bots)
    held = _by_kind(tallied(filters, MATCH_BY_TYPE, "a", "makeup", "bot"), bots)
    kinds = [{"key": k, "label": label} for k, label in POOLED]
    kinds += [{"key": "BB:" + b, "label": side_label("BB", b)} for b in sorted(bots)]
    rows = []
    for t in RoundType:
        by_kind = {k["key"]: _cell(cells[int(t), k["key"]]) for k in kinds}
        matches = {k["key"]: _match_cell(held[int(t), k["key"]]) for k in kinds}
        hb, bb = by_kind["HB"], by_kind["BB"]
        mhb, mbb = matches["HB"], matches["BB"]
        rows.append(
            {
                "type": int(t),
                "label": t.label,
                "cells": [by_kind[k["key"]] for k in kinds],
                "by_kind": by_kind,
                "gap": difference((hb["won"], hb["n"]), (bb["won"], bb["n"])),
                "match_cells": [matches[k["key"]] for k in kinds],
                "matches_by_kind": matches,
                "match_gap": difference((mhb["won"], mhb["n"]), (mbb["won"], mbb["n"])),
            }
        )
    return {"kinds": kinds, "rows": rows}


def round_types_by_condition(
    filters: Filters, conditions: list[tuple[int, str]]
) -> list[dict[str, Any]]:
    """The round-type win rates read per study condition (the dashboard's, when a
    study is chosen): for each of ``conditions`` (id, name), the kinds of measured
    partnership it has rounds of, and per round type each kind's n, won and win
    rate with its 95% Wilson interval. One grouped query of the tallies."""
    groups = tallied(filters, ROUND_TYPE, "study_condition", "a", "makeup", "bot")
    out = []
    for condition, name in conditions:
        bots: set[str] = set()
        cells = _by_kind([g for g in groups if g["study_condition"] == condition], bots)
        # Bot+bot per bot key only where the condition has several (else the same column).
        keys = [k for k, _ in POOLED] + ["BB:" + b for b in sorted(bots) if len(bots) > 1]
        present = [k for k in keys if any(cells[int(t), k][0] for t in RoundType)]
        kinds = [{"key": k, "label": _kind_label(k)} for k in present]
        rows = [
            {"type": int(t), "label": t.label,
             "cells": [_cell(cells[int(t), k["key"]]) for k in kinds]}
            for t in RoundType
        ]  # fmt: skip
        out.append({"id": condition, "name": name, "kinds": kinds, "rows": rows})
    return out


def _kind_label(key: str) -> str:
    return side_label("BB", key[3:]) if key.startswith("BB:") else dict(POOLED)[key]
