"""``manage.py bidinfo_error``: the average error of bid-informed inference.

    python manage.py bidinfo_error --deals 2000 --seed 2 [--table bots/data/bidinfo.json]

On ``--deals`` fresh deals bid by the table's bidder (use a seed the table was
not learned from), each seat's inferred location of every card it cannot see
after the bidding, uniform and from the table, against the truth: the mean
absolute error per (card, seat) as in AI Factory's article, and the Brier
score (mean squared error) as a check that a lower error is not mere
overconfidence (:func:`bots.bidinfo.average_error`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bots import bidinfo
from bots.registry import make_bot
from lab.management.commands.train_bidinfo import seed_value


class Command(BaseCommand):
    help = "Average error of card-location inference: uniform against the bid table."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--deals", type=int, default=2000, help="held-out deals (default 2000)")
        parser.add_argument(
            "--seed", default="2", help="seed of the held-out deals (default 2; the table used 1)"
        )
        parser.add_argument(
            "--table",
            default=str(bidinfo.DATA_FILE),
            help="the table file (default bots/data/bidinfo.json)",
        )
        parser.add_argument(
            "--alpha",
            type=float,
            default=bidinfo.DEFAULT_ALPHA,
            help=f"smoothing pseudo-count (default {bidinfo.DEFAULT_ALPHA:g})",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **o: Any) -> None:
        if o["deals"] < 1:
            raise CommandError("--deals must be at least 1")
        path = Path(o["table"])
        try:
            content = json.loads(path.read_text())
            table = bidinfo.BidTable(content, o["alpha"])
        except (OSError, ValueError, KeyError) as e:
            raise CommandError(f"cannot read the table {path}: {e}") from None
        seed = seed_value(str(o["seed"]))
        if str(seed) == str(table.meta.get("seed")):
            self.stderr.write("warning: the held-out seed is the table's own seed")
        stream = getattr(self.stderr, "_out", self.stderr)
        progress = None if o["no_progress"] else bidinfo.ProgressBar("held-out", stream)
        bidder = str(table.meta.get("bidder", bidinfo.DEFAULT_BIDDER))
        r = bidinfo.average_error(table, o["deals"], seed, make_bot(bidder), bidder, progress)
        self.stdout.write(
            f"held-out deals {r['deals']} (seed {seed}, bid by {bidder}); table {path} "
            f"(seed {table.meta.get('seed')}, {table.meta.get('deals')} deals, "
            f"alpha {o['alpha']:g}); {r['terms']} (card, seat) terms"
        )
        self.stdout.write(f"  average error, uniform: {100 * r['uniform']:.2f}%   "
                          f"Brier {r['uniform_brier']:.4f}")  # fmt: skip
        self.stdout.write(f"  average error, learned: {100 * r['learned']:.2f}%   "
                          f"Brier {r['learned_brier']:.4f}")  # fmt: skip
