"""``manage.py bench_engine``: full random rounds per second through the engine."""

from __future__ import annotations

import json
import os
from typing import Any

from django.core.management.base import BaseCommand

from lab.bench import engine_bench as bench


class Command(BaseCommand):
    help = "Random rounds per second (deal, four bids, 52 legal plays, scoring); median of runs."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--rounds", type=int, default=20_000, help="rounds per run")
        parser.add_argument("--runs", type=int, default=5, help="runs (the median is reported)")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
        parser.add_argument(
            "--peer-python",
            default=os.environ.get("SPADES_PEER_PYTHON"),
            help="a Python with open_spiel installed, to time OpenSpiel in the same run",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["rounds"] < 1 or opts["runs"] < 1:
            self.stderr.write("--rounds and --runs must be at least 1")
            return
        figures = bench.run(
            rounds=opts["rounds"],
            runs=opts["runs"],
            seed=opts["seed"],
            out=self.stdout.write,
            peer_python=opts["peer_python"],
        )
        if opts["json"]:
            with open(opts["json"], "w") as f:
                json.dump(figures, f, indent=2)
