"""``manage.py nil_sets``: of a side's set nils, how many were set on partner's lead.

    python manage.py nil_sets --ns BIS+SRP --ew RB+SRP --games 2000 --seed 1 \\
        --duplicate --workers 2 [--goal 200] [--lose -100] [--json FILE]

Replays the tournament's games (the same games as ``manage.py tournament``
with the same options, :mod:`bots.nil_sets`) and prints, per side, the nils,
the set ones, and who led the trick that set each: the niler, the niler's
partner, or an opponent.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bots.nil_sets import nil_sets
from bots.tournament import TournamentConfig, TournamentError, _seed_value


class Command(BaseCommand):
    help = "Who led the trick that set each nil, over a tournament's replayed games."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--ns", required=True)
        parser.add_argument("--ew", required=True)
        parser.add_argument("--games", type=int, default=2000)
        parser.add_argument("--goal", type=int, default=200)
        parser.add_argument("--lose", type=int, default=-100)
        parser.add_argument("--seed", default="1")
        parser.add_argument("--duplicate", action="store_true")
        parser.add_argument("--workers", type=int, default=1)
        parser.add_argument("--json", default=None, help="also write the figures to FILE")

    def handle(self, *args: Any, **o: Any) -> None:
        seed = _seed_value(str(o["seed"]))
        config = TournamentConfig(o["ns"], o["ew"], o["games"], o["goal"], o["lose"], seed,
                                  o["duplicate"])  # fmt: skip
        try:
            result = nil_sets(config, max(1, o["workers"]))
        except TournamentError as e:
            raise CommandError(str(e)) from None
        for side in result["sides"]:
            share = side["set_on_partners_lead_share"]
            lo, hi = side["set_on_partners_lead_ci95"]
            led = side["set_by_leader"]
            self.stdout.write(
                f"{side['bot']}: {side['nils']} nils, {side['set']} set; set on the lead of "
                f"the niler {led['niler']}, partner {led['partner']}, an opponent "
                f"{led['opponent']}; on partner's lead "
                + (f"{share:.1%} (95% CI {lo:.1%}-{hi:.1%})" if share is not None else "-")
                + f"; blind nils {side['blind_nils']}, set {side['blind_set']}"
            )
        if o["json"]:
            with open(o["json"], "w") as f:
                json.dump(result, f, indent=2)
                f.write("\n")
