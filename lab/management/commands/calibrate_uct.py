"""``manage.py calibrate_uct``: how many iterations a UCT player's search makes in its budget.

    python manage.py calibrate_uct [--tricks 3,5,7] [--positions 20] [--budget 1.0]
        [--root ucb|paired] [--solver compiled|reference] [--playout compiled|reference]
        [--clock wall|cpu] [--seed 11] [--json FILE]

Tournaments run UCT players on a fixed iteration count (``SPADES_UCT_ITERATIONS``)
equal to what the time budget buys on a quiet core, so that their results
are reproducible by seed whatever else the machine runs. This measures that
count: seeded rounds are bid and played by ``BIS+SRP``; of the positions
where ``UCT<X>`` would search (its last X tricks, more than one choice that
matters) one is kept per round, drawn at random, until ``--positions``
positions per X, so the figures stand on as many rounds as positions; then
each position is searched once for ``--budget`` seconds of wall-clock time.
It prints the median and the 10th and 90th percentiles of the iterations
made, the median per tricks left (a tournament's budget is the median at the
window's first trick: no move then takes much over the budget), and how many
searched moves a round has (all four seats). ``--root paired`` measures the paired root
(``UCT<X>p``), whose iterations are playouts too. ``--solver reference`` ends the
playouts with the pure-Python solver instead of the compiled one (the same values:
a before/after measure on the same positions); ``--playout reference`` plays SRP's
cards and draws the deals in Python instead of the compiled kernels (the same
deals and cards). ``--clock cpu`` counts the budget in this process's CPU
seconds, so a loaded machine slows the run but not the figures. Otherwise run it on a quiet machine:
the load average is printed beside the figures (this command keeps one core
busy itself).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bots.registry import make_bot
from bots.uct import PLAYOUTS, ROOTS, SOLVERS, UCT, UCTSearch
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import SeatView, view_for

MAX_ROUNDS = 10_000  # per X: enough for any sane --positions


def search_positions(tricks: int, count: int, seed: int) -> tuple[list[SeatView], float]:
    """``count`` views where ``UCT<tricks>`` would search, one from each of
    ``count`` seeded BIS+SRP rounds (a round's searched positions share its
    deal, so taking them all would rest the figures on a few deals), and the
    searched moves per round (all seats) in those rounds."""
    bot = make_bot("BIS+SRP")
    uct = UCT(tricks=tricks)
    rng = random.Random(f"calibrate-uct/{seed}/{tricks}")
    pick = random.Random(f"calibrate-uct/{seed}/{tricks}/pick")  # apart: play stays as seeded
    views: list[SeatView] = []
    searched = 0
    rounds = 0
    while len(views) < count:
        if rounds >= MAX_ROUNDS:
            raise CommandError(f"found only {len(views)} positions in {rounds} rounds")
        hands = deal_hands(f"calibrate-uct/{seed}/{rounds}")
        r = RoundState(Rules(), dealer=rounds % 4, hands=hands)
        rounds += 1
        in_round: list[SeatView] = []
        while r.phase is not Phase.DONE:
            view = view_for(r, r.to_act)
            if uct.needs_search(view):
                in_round.append(view)
            r.apply(bot.act(view, rng))
        searched += len(in_round)
        if in_round:
            views.append(pick.choice(in_round))
    return views, searched / rounds


def _percentile(values: list[int], q: int) -> float:
    if len(values) == 1:
        return float(values[0])
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


class Command(BaseCommand):
    help = (
        "Iterations a UCT player's search makes within its time budget (median, p10, p90) "
        "at seeded positions, for setting SPADES_UCT_ITERATIONS in tournaments."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--tricks", default="3,5,7", help="X of UCT<X>, comma-separated")
        parser.add_argument("--positions", type=int, default=20, help="positions per X")
        parser.add_argument("--budget", type=float, default=1.0, help="seconds per search")
        parser.add_argument("--root", choices=ROOTS, default="ucb", help="the search's root rule")
        parser.add_argument(
            "--solver", choices=SOLVERS, default="compiled", help="the exact solver of the playouts"
        )
        parser.add_argument(
            "--playout",
            choices=PLAYOUTS,
            default="compiled",
            help="SRP's playout cards and the deal sampler: compiled kernels or Python",
        )
        parser.add_argument(
            "--clock",
            choices=("wall", "cpu"),
            default="wall",
            help="the budget in wall-clock seconds or this process's CPU seconds "
            "(what the budget buys on one core, whatever else the machine runs)",
        )
        parser.add_argument("--seed", type=int, default=11)
        parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            tricks = [int(x) for x in opts["tricks"].split(",") if x.strip()]
        except ValueError:
            raise CommandError("--tricks takes numbers, e.g. 3,5,7") from None
        if not tricks or any(not 1 <= x <= 13 for x in tricks):
            raise CommandError("--tricks: each X is 1..13")
        if opts["positions"] < 1 or opts["budget"] <= 0:
            raise CommandError("--positions and --budget must be positive")
        self.stdout.write(
            f"calibrate_uct: {opts['positions']} positions per X, {opts['budget']} s each, "
            f"seed {opts['seed']}, {opts['solver']} solver, {opts['playout']} playout, "
            f"{opts['clock']} clock, {os.cpu_count()} CPUs"
        )
        rows = []
        for x in tricks:
            views, per_round = search_positions(x, opts["positions"], opts["seed"])
            made = []
            by_left: dict[int, list[int]] = {}
            for i, view in enumerate(views):
                rng = random.Random(f"calibrate-uct/{opts['seed']}/{x}/{i}")
                search = UCTSearch(
                    view, root=opts["root"], solver=opts["solver"], playout=opts["playout"]
                )
                clock = time.process_time if opts["clock"] == "cpu" else time.perf_counter
                n = search.run(rng, budget=opts["budget"], clock=clock).iterations
                made.append(n)
                by_left.setdefault(13 - len(view.tricks), []).append(n)
            row = {
                "player": f"UCT{x}" + ("p" if opts["root"] == "paired" else ""),
                "positions": len(made),
                "budget_seconds": opts["budget"],
                "median": statistics.median(made),
                "p10": _percentile(made, 10),
                "p90": _percentile(made, 90),
                "searched_moves_per_round": round(per_round, 2),
                # The overall median mixes the window's first tricks (the dearest
                # deals to solve) with its last; this shows each apart.
                "by_tricks_left": {
                    str(left): {"positions": len(ns), "median": statistics.median(ns)}
                    for left, ns in sorted(by_left.items(), reverse=True)
                },
                "seed": opts["seed"],
                "solver": opts["solver"],
                "playout": opts["playout"],
                "clock": opts["clock"],
                # The 1-minute load average after the searches; this command keeps
                # one core busy itself, so above ~1.5 something else was running.
                "load_average": round(os.getloadavg()[0], 2),
            }
            rows.append(row)
            self.stdout.write(
                f"  {row['player']}: iterations in {opts['budget']} s median {row['median']:,.0f}"
                f" (p10 {row['p10']:,.0f}, p90 {row['p90']:,.0f}) over {row['positions']}"
                f" positions; {row['searched_moves_per_round']} searched moves per round"
                f" (load average {row['load_average']:.2f}"
                + (": busy machine, the counts are low)" if row["load_average"] > 1.5 else ")")
            )
            self.stdout.write(
                "    by tricks left: "
                + ", ".join(
                    f"{left}: {b['median']:,.0f} ({b['positions']})"
                    for left, b in row["by_tricks_left"].items()
                )
                + "  (median iterations, positions)"
            )
        if opts["json"]:
            with open(opts["json"], "w") as f:
                json.dump(rows, f, indent=2)
