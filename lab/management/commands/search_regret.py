"""``manage.py search_regret``: how many points a search's choice gives away.

    python manage.py search_regret [--tricks 13] [--min-left 7] [--positions 20]
        [--iterations 245] [--reference 3000] [--repeats 3] [--seed 11] [--json FILE]

At seeded positions where ``UCT<tricks>`` would search with at least
``--min-left`` tricks left (the positions of ``calibrate_uct``), a reference
plays every root card on the same sampled deals, ``--reference`` playouts in
all; its means (points gap, SRP playouts and exact solves, as in the search)
rank the cards. Then each root rule (:data:`bots.uct.ROOTS`) searches with
``--iterations`` iterations ``--repeats`` times, and SRP plays the position.
A choice's regret is the reference's best mean less the mean of the card
chosen. It also prints, for the reference's two best cards, the standard
error of their difference on the same deals against on independent deals
(the median ratio): how much pairing the deals sharpens a comparison.

The regrets are measured against the search's own model of the game (uniform
deals, SRP playouts), so they rank search settings; tournaments decide.
"""

from __future__ import annotations

import json
import math
import random
import statistics
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bots.srp import SRP
from bots.uct import ROOTS, UCTSearch
from lab.management.commands.calibrate_uct import search_positions

MAX_CANDIDATES = 20  # positions looked at per one asked for, to find those early enough


def reference_means(
    search: UCTSearch, playouts: int, rng: random.Random
) -> tuple[dict[int, float], float]:
    """Every root card on the same deals (``playouts`` in all): the means, and
    the ratio of the unpaired to the paired standard error of the difference
    between the two best cards."""
    choices = list(search.groups)
    deals = max(2, playouts // len(choices))
    gaps = []
    for _ in range(deals):
        hands = search.sampler.sample(rng)
        gaps.append([search._simulate(hands, card, rng) for card in choices])
    columns = {card: [g[j] for g in gaps] for j, card in enumerate(choices)}
    means = {card: statistics.fmean(col) for card, col in columns.items()}
    first, second = sorted(choices, key=lambda c: -means[c])[:2]
    a, b = columns[first], columns[second]
    unpaired = math.sqrt((statistics.variance(a) + statistics.variance(b)) / deals)
    paired = statistics.stdev([x - y for x, y in zip(a, b, strict=True)]) / math.sqrt(deals)
    return means, (unpaired / paired if paired else math.inf)


class Command(BaseCommand):
    help = (
        "Points a search's choice gives away against a long paired reference, per root "
        "rule (ucb, paired) and for SRP, at seeded positions."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--tricks", type=int, default=13, help="X of UCT<X>")
        parser.add_argument("--min-left", type=int, default=7, help="least tricks left")
        parser.add_argument("--positions", type=int, default=20)
        parser.add_argument("--iterations", type=int, default=245, help="per search")
        parser.add_argument("--reference", type=int, default=3000, help="reference playouts")
        parser.add_argument("--repeats", type=int, default=3, help="searches per root rule")
        parser.add_argument("--seed", type=int, default=11)
        parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")

    def handle(self, *args: Any, **o: Any) -> None:
        if not 1 <= o["tricks"] <= 13 or not 1 <= o["min_left"] <= o["tricks"]:
            raise CommandError("--tricks is 1..13 and --min-left 1..--tricks")
        if min(o["positions"], o["iterations"], o["reference"], o["repeats"]) < 1:
            raise CommandError("--positions, --iterations, --reference, --repeats: at least 1")
        candidates, _ = search_positions(o["tricks"], o["positions"] * MAX_CANDIDATES, o["seed"])
        views = [v for v in candidates if 13 - len(v.tricks) >= o["min_left"]]
        views = views[: o["positions"]]
        if not views:
            raise CommandError("no position with that many tricks left")
        regrets: dict[str, list[float]] = {name: [] for name in (*ROOTS, "srp")}
        best_chosen = dict.fromkeys(regrets, 0)
        ratios = []
        for i, view in enumerate(views):
            seed = f"search-regret/{o['seed']}/{i}"
            search = UCTSearch(view, root="paired")
            means, ratio = reference_means(search, o["reference"], random.Random(seed))
            ratios.append(ratio)
            best = max(means.values())
            head = {c: h for h, cards in search.groups.items() for c in cards}
            chosen = {"srp": [head[SRP().play(view, random.Random(f"{seed}/srp"))]]}
            for root in ROOTS:
                chosen[root] = [
                    UCTSearch(view, root=root)
                    .run(random.Random(f"{seed}/{root}/{r}"), budget=None,
                         iterations=o["iterations"])
                    .card
                    for r in range(o["repeats"])
                ]  # fmt: skip
            for name, cards in chosen.items():
                for card in cards:
                    regrets[name].append(best - means[card])
                    best_chosen[name] += means[card] == best
        rows = {
            name: {
                "mean_regret": statistics.fmean(values),
                "best_card_share": best_chosen[name] / len(values),
                "choices": len(values),
            }
            for name, values in regrets.items()
        }
        report = {
            "tricks": o["tricks"],
            "min_left": o["min_left"],
            "positions": len(views),
            "iterations": o["iterations"],
            "reference_playouts": o["reference"],
            "repeats": o["repeats"],
            "seed": o["seed"],
            "regret": rows,
            "se_ratio_unpaired_to_paired_median": statistics.median(ratios),
        }
        self.stdout.write(
            f"search_regret: {len(views)} positions of UCT{o['tricks']} with at least "
            f"{o['min_left']} tricks left, {o['iterations']} iterations a search, reference "
            f"{o['reference']} playouts, seed {o['seed']}"
        )
        for name, row in rows.items():
            self.stdout.write(
                f"  {name:7s} mean regret {row['mean_regret']:6.2f} points, best card "
                f"{row['best_card_share']:.0%} of {row['choices']} choices"
            )
        self.stdout.write(
            "  standard error of the two best cards' difference, independent deals / same "
            f"deals: median {report['se_ratio_unpaired_to_paired_median']:.2f}"
        )
        if o["json"]:
            with open(o["json"], "w") as f:
                json.dump(report, f, indent=2)
