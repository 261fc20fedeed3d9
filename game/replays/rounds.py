"""A round's whole analysis: its play (``analysis``) and its bids (``bids``)."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings

from bots import solver_compiled

from .analysis import ALTERNATIVES_BUDGET_SECONDS, Values, alternatives_at, analyse_play, spots_of
from .bids import analyse_bids


def _use_analysis_table() -> None:
    """The solver's larger table for analyses (SPADES_ANALYSIS_TABLE_BITS)."""
    bits = getattr(settings, "SPADES_ANALYSIS_TABLE_BITS", solver_compiled.ANALYSIS_TABLE_BITS)
    solver_compiled.use_table_bits(bits)


def analyse_round(doc: dict[str, Any]) -> dict[str, Any]:
    """The whole analysis of a finished round's record: the play, the bids
    (what BIS would have bid) and the double-dummy makeable tricks."""
    started = time.perf_counter()
    _use_analysis_table()
    result = analyse_play(doc)
    result["bids"] = analyse_bids(doc)
    # double-dummy makeable tricks per partnership from the first lead
    result["makeable"] = [result["tricks"][0], 13 - result["tricks"][0]]
    result["seconds"] = round(time.perf_counter() - started, 3)
    return result


def all_alternatives(
    doc: dict[str, Any], budget: float | None = ALTERNATIVES_BUDGET_SECONDS
) -> list[list[dict[str, Any]]]:
    """Every card's legal alternatives with their values (``analysis.alternatives``).
    Past ``budget`` CPU seconds (None: no limit), an ``analysis.OverBudget``."""
    start, spots = spots_of(doc)
    _use_analysis_table()
    solver = Values(start, budget)
    # Backwards: each trick's positions share the solvers' tables with the next.
    return [alternatives_at(solver, s) for s in reversed(spots)][::-1]
