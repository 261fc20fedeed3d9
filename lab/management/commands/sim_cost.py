"""``manage.py sim_cost``: what a SIM bid costs, and how often it leaves BIS's bid.

    python manage.py sim_cost [--views 200] [--seed 1] [--deals 3,6,10] [--weights 0.25,0.5,1]

Seeded bidding views: a random deal and dealer, random match scores (-90..190
in tens, goal 200 / -100) and 0 to 3 BIS bids before the seat. For each deal
count, the CPU time of one SIM bid (``time.process_time``, so a loaded machine
counts only this process's time), the mean number of candidates, and for each
blend weight how often the bid differs from BIS's (on the same simulated
values: the blend is the only difference between the weights).
"""

from __future__ import annotations

import random
import statistics
import time
from typing import Any

from django.core.management.base import BaseCommand

from bots.registry import make_bot
from bots.sim import SIM, blend
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import RoundState
from game.engine.view import SeatView, view_for


def bidding_views(n: int, seed: int) -> list[SeatView]:
    rng = random.Random(f"{seed}/sim-cost")
    bis = make_bot("BIS+SRP")
    rules = Rules(winning_goal=200, losing_goal=-100)
    views = []
    for i in range(n):
        scores = (10 * rng.randint(-9, 19), 10 * rng.randint(-9, 19))
        r = RoundState(rules, rng.randrange(4), deal_hands(f"{seed}/sim-cost/{i}"), scores)
        for _ in range(rng.randrange(4)):
            r.apply(bis.act(view_for(r, r.to_act), rng))
        view = view_for(r, r.to_act)
        while view.hand is None:  # a seat that may bid blind nil looks first here
            r.apply(bis.act(view, rng))
            view = view_for(r, r.to_act)
        views.append(view)
    return views


class Command(BaseCommand):
    help = "CPU time of a SIM bid by deal count, and how often it differs from BIS's bid."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--views", type=int, default=200)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--deals", default="3,6,10")
        parser.add_argument("--weights", default="0.25,0.5,1")

    def handle(self, *args: Any, **opts: Any) -> None:
        views = bidding_views(opts["views"], opts["seed"])
        weights = [float(w) for w in opts["weights"].split(",")]
        sim = SIM(1.0)
        self.stdout.write(f"{len(views)} bidding views, seed {opts['seed']}")
        for deals in (int(d) for d in opts["deals"].split(",")):
            cpu, cands, changed = [], [], dict.fromkeys(weights, 0)
            for i, view in enumerate(views):
                t0 = time.process_time()
                result = sim.search(view, random.Random(f"{opts['seed']}/{i}"), deals=deals)
                cpu.append(time.process_time() - t0)
                cands.append(len(result.knowledge))
                values = {c: [v] for c, v in result.simulated.items()}  # the means
                for k in weights:
                    bid, _, _ = blend(result.bis_bid, result.knowledge, values, k, None)
                    changed[k] += bid != result.bis_bid
            self.stdout.write(
                f"deals {deals:>3}: CPU per bid median {1000 * statistics.median(cpu):.1f} ms, "
                f"mean {1000 * statistics.fmean(cpu):.1f} ms; candidates "
                f"{statistics.fmean(cands):.2f}; bid not BIS's: "
                + ", ".join(f"k_s {k} {100 * changed[k] / len(views):.1f}%" for k in weights)
            )
