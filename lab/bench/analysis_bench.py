"""``manage.py bench_analysis``: a whole round's double-dummy analysis, timed.

Rounds are dealt from a seed and played by a bot in every seat; each is
analysed by ``game.replays.analysis.analyse_play`` (every card's points and
tricks given away: 53 positions, each solved for the points gap and the trick
count) under its budget (a round over it is counted, as the site marks it),
without the alternatives unless asked. Times are CPU seconds of this
process (one core: the solver runs on one thread) and wall seconds. The
same-run reference is one double-dummy trick count of the same deal at its
first lead (``bots.solver_compiled.max_tricks``, what ``bench_solver`` times
against DDS at 13 cards): the ratio says what the analysis costs in such solves.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from bots.registry import make_bot
from bots.solver import Position
from bots.solver_compiled import ANALYSIS_TABLE_BITS, max_tricks, use_table_bits, warm_up
from game.engine import Rules, record_of, view_for
from game.engine.deal import deal_hands
from game.engine.state import Phase, RoundState
from game.engine.tricks import legal_play_mask_for, trick_winner
from game.replays.analysis import BUDGET_SECONDS, OverBudget, analyse_play, spots_of
from game.replays.rounds import all_alternatives
from lab.bench.solver_bench import time_dds


def played_round(seed: int, i: int, bot: str) -> dict[str, Any]:
    rng = random.Random(f"{seed}/{i}")
    b = make_bot(bot)
    r = RoundState(Rules(), dealer=i % 4, hands=deal_hands(f"bench-analysis/{seed}/{i}"))
    while r.phase is not Phase.DONE:
        r.apply(b.act(view_for(r, r.to_act), rng))
    return record_of(r)


def _timed(f: Callable[[], Any]) -> tuple[Any, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    value = f()
    return value, time.process_time() - cpu, time.perf_counter() - wall


def _quantiles(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    at = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731 - the nearest rank
    return {"median": statistics.median(xs), "p90": at(0.9), "p99": at(0.99), "max": xs[-1]}


def run(
    rounds: int, seed: int, bot: str, alternatives: bool, out: Callable[[str], Any]
) -> dict[str, Any]:
    use_table_bits(ANALYSIS_TABLE_BITS)  # as game.replays.rounds analyses a round
    warm_up()  # after: the table is allocated before the timing
    rows = []
    for i in range(rounds):
        doc = played_round(seed, i, bot)
        _, spots = spots_of(doc)
        first = spots[0]
        position = Position(first.hands, first.leader, first.trick, first.spades_broken)
        _, ref_cpu, _ = _timed(lambda p=position: max_tricks(p, 0))
        a, cpu, wall = _timed(lambda d=doc: _analysed(d))
        over = a is None
        lost = None if over else sum(c["points_lost"] for c in a["cards"])
        row = {"round": i, "cpu_s": cpu, "wall_s": wall, "solves": None if over else a["solves"],
               "reference_cpu_s": ref_cpu, "points_lost": lost, "over_budget": over}  # fmt: skip
        if alternatives and not over:
            _, alt_cpu, _ = _timed(lambda d=doc: all_alternatives(d))
            row["alternatives_cpu_s"] = alt_cpu
        rows.append(row)
        out(f"round {i}: {cpu:.3f} s CPU ({wall:.3f} s wall), "
            f"{'over the budget' if over else str(a['solves']) + ' solves'}, "
            f"reference {ref_cpu * 1000:.1f} ms")  # fmt: skip
    figures: dict[str, Any] = {
        "rounds": rounds, "seed": seed, "bot": bot,
        "analysis_cpu_s": _quantiles([r["cpu_s"] for r in rows]),
        "analysis_wall_s": _quantiles([r["wall_s"] for r in rows]),
        "reference_cpu_s": _quantiles([r["reference_cpu_s"] for r in rows]),
        "ratio_median": statistics.median(r["cpu_s"] / r["reference_cpu_s"] for r in rows),
        "analysis_cpu_s_mean": statistics.mean(r["cpu_s"] for r in rows),
        "budget_s": BUDGET_SECONDS, "over_budget": sum(r["over_budget"] for r in rows),
        "rows": rows,
    }  # fmt: skip
    if alternatives and any("alternatives_cpu_s" in r for r in rows):
        alts = [r["alternatives_cpu_s"] for r in rows if "alternatives_cpu_s" in r]
        figures["alternatives_cpu_s"] = _quantiles(alts)
    a, ref = figures["analysis_cpu_s"], figures["reference_cpu_s"]
    out(f"analysis of a round (every card, points and tricks), CPU s: "
        f"median {a['median']:.3f}, p90 {a['p90']:.3f}, p99 {a['p99']:.3f}, "
        f"max {a['max']:.3f}, mean {figures['analysis_cpu_s_mean']:.3f} over {rounds} rounds; "
        f"{figures['over_budget']} over the budget of {BUDGET_SECONDS:g} s")  # fmt: skip
    out(f"reference (one 13-card trick count of the deal), CPU ms: "
        f"median {ref['median'] * 1000:.1f}; analysis / reference, "
        f"median of the ratios: {figures['ratio_median']:.1f}x")  # fmt: skip
    if "alternatives_cpu_s" in figures:
        alt = figures["alternatives_cpu_s"]
        out(f"alternatives (every legal card at every card), CPU s: median {alt['median']:.3f}, "
            f"p90 {alt['p90']:.3f}, max {alt['max']:.3f}")  # fmt: skip
    return figures


def _analysed(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The round's analysis, or None if it ran over its budget."""
    try:
        return analyse_play(doc)
    except OverBudget:
        return None


# ----- the per-card tricks given away against DDS ------------------------------------------


def _ns_tricks(
    hands: tuple[int, ...], leader: int, trick: tuple[int, ...], won: int, dds: dict
) -> int:
    """North/South's tricks in the round under best play for tricks: the current
    trick searched here card by card, every later trick start from ``dds`` (a
    position missing from it is recorded there as None, to be solved)."""
    if len(trick) == 4:
        winner = trick_winner(leader, trick)
        won += winner % 2 == 0
        if not any(hands):
            return won
        key = (hands, winner)
        if dds.get(key) is None:
            dds[key] = None
            return won
        return won + dds[key]
    seat = (leader + len(trick)) & 3
    legal = legal_play_mask_for(hands[seat], trick, True, False)
    values = []
    for c in range(52):
        if legal >> c & 1:
            h = list(hands)
            h[seat] &= ~(1 << c)
            values.append(_ns_tricks(tuple(h), leader, (*trick, c), won, dds))
    return max(values) if seat % 2 == 0 else min(values)


def dds_check(
    rounds: int, seed: int, bot: str, how: str, from_trick: int, out: Callable[[str], Any]
) -> dict[str, Any]:
    """Every card from trick ``from_trick`` on, in a trick that starts with spades
    broken (DDS plays bridge: a trump may be led at any time): the tricks it
    gives away by the analysis and by DDS (each later trick start solved by
    DDS, the current trick searched in Python). Returns the counts."""
    checked, disagreements = 0, []
    for i in range(rounds):
        doc = played_round(seed, i, bot)
        a = analyse_play(doc, first_trick=from_trick)
        _, spots = spots_of(doc)
        chosen = [s for s in spots[4 * (from_trick - 1) :] if s.spades_broken]
        dds: dict = {}
        for _ in range(2):  # first gather the trick starts, then solve them and look again
            got = []
            for s in chosen:
                won = s.tricks_won[0] + s.tricks_won[2]
                before = _ns_tricks(s.hands, s.leader, s.trick, won, dds)
                h = list(s.hands)
                h[s.seat] &= ~(1 << s.card)
                after = _ns_tricks(tuple(h), s.leader, (*s.trick, s.card), won, dds)
                got.append((1 if s.seat % 2 == 0 else -1) * (before - after))
            missing = [k for k, v in dds.items() if v is None]
            if not missing:
                break
            ps = [Position(k[0], k[1], (), True) for k in missing]  # type: ignore[arg-type]
            solved, _ = time_dds(ps, how)
            dds.update(zip(missing, solved, strict=True))
        for s, lost in zip(chosen, got, strict=True):
            checked += 1
            mine = a["cards"][s.index - 4 * (from_trick - 1)]["tricks_lost"]
            if mine != lost:
                disagreements.append({"round": i, "card": s.index, "solver": mine, "dds": lost})
    out(f"DDS check: {checked} cards from trick {from_trick} with spades broken, "
        f"{len(disagreements)} disagreements")  # fmt: skip
    return {"checked": checked, "disagreements": disagreements, "from_trick": from_trick}
