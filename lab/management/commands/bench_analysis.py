"""``manage.py bench_analysis``: a whole round's double-dummy analysis (game/replays/), timed."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.bench import analysis_bench as bench


class Command(BaseCommand):
    help = "Time the double-dummy analysis of whole rounds played by a bot (CPU and wall)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--rounds", type=int, default=50)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--bot", default="BIS+SRP", help="the bot in every seat")
        parser.add_argument("--alternatives", action="store_true", help="time them too")
        parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["rounds"] < 1:
            raise CommandError("--rounds must be at least 1")
        figures = bench.run(
            opts["rounds"], opts["seed"], opts["bot"], opts["alternatives"], self.stdout.write
        )
        if opts["json"]:
            with open(opts["json"], "w") as f:
                json.dump(figures, f, indent=2)
