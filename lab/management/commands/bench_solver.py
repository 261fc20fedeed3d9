"""``manage.py bench_solver``: the compiled solver, the reference and DDS on the same positions.

    python manage.py bench_solver [--k 5,6,7,8,13] [--samples 200] [--seed 1]
        [--reference-max-k 7] [--peer-python /tmp/peers/bin/python] [--json FILE]

Medians and 99th percentiles per k (``lab/bench/solver_bench.py``); DDS's when
``endplay`` is importable here or in ``--peer-python``'s environment (or
``SPADES_PEER_PYTHON``), with the ratio. Any disagreement in tricks fails
the command.
"""

from __future__ import annotations

import json
import os
import platform
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.bench import solver_bench


class Command(BaseCommand):
    help = "Exact solver speed per k against the reference and DDS (endplay) on the same positions."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--k", default="5,6,7,8,13", help="cards per hand, comma-separated")
        parser.add_argument("--samples", type=int, default=200, help="positions per k")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--reference-max-k",
            type=int,
            default=7,
            help="time the pure-Python solver up to this k",
        )
        parser.add_argument("--peer-python", default=os.environ.get("SPADES_PEER_PYTHON"))
        parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            ks = [int(x) for x in opts["k"].split(",") if x.strip()]
        except ValueError:
            raise CommandError("--k takes numbers, e.g. 5,6,7") from None
        if not ks or any(not 1 <= k <= 13 for k in ks) or opts["samples"] < 1:
            raise CommandError("--k: each 1..13; --samples at least 1")
        how = solver_bench.dds_available(opts["peer_python"])
        self.stdout.write(
            f"bench_solver: Python {platform.python_version()}, {os.cpu_count()} CPUs, "
            f"load {os.getloadavg()[0]:.2f}; DDS: {how or 'not available (no endplay)'}"
        )
        try:
            rows = solver_bench.run(
                ks,
                opts["samples"],
                opts["seed"],
                opts["reference_max_k"],
                opts["peer_python"],
                out=self.stdout.write,
            )
        except solver_bench.Disagreement as e:
            raise CommandError(f"disagreement: {e}") from None
        if opts["json"]:
            with open(opts["json"], "w") as f:
                json.dump(rows, f, indent=2)
