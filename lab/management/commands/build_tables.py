"""``manage.py build_tables``: regenerate the BIS probability tables (``bots/data/pt.json``).

    python manage.py build_tables --seed 1 --deals 100000 [--output bots/data/pt.json]
    python manage.py build_tables --seed 1 --deals 100000 --check

The side-suit high-card tables (the paper's Tables 1, 5, 6) are exact, with a
seeded Monte Carlo cross-check; the 1,469 nil-table rows are Monte Carlo
estimates from ``--deals`` seeded deals each (:mod:`bots.tables`). Every row
has its own generator seeded from ``--seed`` and the row's key, so the same
seed and deal count give the same file. The file records the seed, the deals
per row and the generator. ``--check`` builds the tables and compares them with
the existing ``--output`` file instead of writing it (same seed and deals: no
row may differ).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, TextIO

from django.core.management.base import BaseCommand, CommandError

from bots import tables as pt


class _Bar:
    """A one-line progress bar over the nil-table rows, redrawn at most 5 times a second."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.t0 = time.monotonic()
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self.stream is None or (now - self.last < 0.2 and done < total):
            return
        self.last = now
        width = 30
        filled = width * done // total
        rate = done / max(now - self.t0, 1e-9)
        eta = time.strftime("%H:%M:%S", time.gmtime((total - done) / rate)) if rate else "-"
        self.stream.write(f"\rnil tables [{'#' * filled}{'.' * (width - filled)}] "
                          f"{done}/{total} rows  ETA {eta} ")  # fmt: skip
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


class Command(BaseCommand):
    help = "Regenerate the BIS probability tables (side-suit and nil tables) with a seed."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
        parser.add_argument("--deals", "--samples", dest="deals", type=int, default=100_000,
                            help="seeded deals per table row (default 100000)")  # fmt: skip
        parser.add_argument("--output", default=str(pt.DEFAULT_PATH),
                            help="the data file (default bots/data/pt.json)")  # fmt: skip
        parser.add_argument(
            "--check",
            action="store_true",
            help="compare with the existing --output file instead of writing",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **o: Any) -> None:
        deals, seed = o["deals"], o["seed"]
        if deals < 1:
            raise CommandError("--deals must be at least 1")
        output = Path(o["output"])
        if o["check"] and not output.exists():
            raise CommandError(f"--check: {output} does not exist")
        if not o["check"] and not output.parent.exists():
            raise CommandError(f"folder {output.parent} does not exist")
        stream = None if o["no_progress"] else getattr(self.stderr, "_out", sys.stderr)
        start = time.monotonic()
        data = pt.build(deals, seed, _Bar(stream), generator="manage.py build_tables")
        seconds = time.monotonic() - start
        rows = len(data["nil"]["rows"])
        if o["check"]:
            diff = pt.compare_rows(data, output)
            self.stdout.write(
                f"built with seed {seed}, {deals} deals per row, {rows} nil rows "
                f"in {seconds:.1f}s; "
                f"{output} (seed {diff['seed']}, {diff['samples']} deals per row): "
                f"{diff['differ']} of {diff['rows']} nil rows differ, largest difference "
                f"{diff['nil_max_diff']:.6f} (nil), {diff['high_card_max_diff']:.6f} "
                "(high-card Monte Carlo)"
            )
            return
        pt.write(data, output)
        self.stdout.write(
            f"wrote {output}: seed {seed}, {deals} deals per row, {rows} nil rows, "
            f"3 exact high-card tables with their Monte Carlo cross-check, {seconds:.1f}s"
        )
