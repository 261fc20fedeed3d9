"""``manage.py bench_analysis``: a whole round's double-dummy analysis (game/replays/), timed."""

from __future__ import annotations

import json
import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.bench import analysis_bench as bench
from lab.bench.solver_bench import dds_available


class Command(BaseCommand):
    help = "Time the double-dummy analysis of whole rounds played by a bot (CPU and wall)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--rounds", type=int, default=50)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--bot", default="BIS+SRP", help="the bot in every seat")
        parser.add_argument("--alternatives", action="store_true", help="time them too")
        parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
        parser.add_argument(
            "--peer-python",
            default=os.environ.get("SPADES_PEER_PYTHON"),
            help="a Python with endplay (DDS): check every card's tricks given away against it",
        )
        parser.add_argument(
            "--dds-from-trick", type=int, default=6, help="the DDS check from this trick on"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["rounds"] < 1:
            raise CommandError("--rounds must be at least 1")
        figures = bench.run(
            opts["rounds"], opts["seed"], opts["bot"], opts["alternatives"], self.stdout.write
        )
        how = dds_available(opts["peer_python"])
        if how is not None:
            if not 1 <= opts["dds_from_trick"] <= 13:
                raise CommandError("--dds-from-trick is 1..13")
            figures["dds"] = bench.dds_check(opts["rounds"], opts["seed"], opts["bot"], how,
                                             opts["dds_from_trick"], self.stdout.write)  # fmt: skip
        if opts["json"]:
            with open(opts["json"], "w") as f:
                json.dump(figures, f, indent=2)
        if figures.get("dds", {}).get("disagreements"):
            raise CommandError(f"the analysis and DDS disagree: {figures['dds']['disagreements']}")
