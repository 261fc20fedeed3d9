"""``manage.py train_bidinfo``: learn the bid-informed card-location table.

    python manage.py train_bidinfo --deals 200000 --seed 1 [--bidder BIS+SRP]
        [--output bots/data/bidinfo.json]

Deals ``--deals`` random hands, lets the bidder bid all four seats and counts,
per (position in the bidding order, bid 0-7), how often each card was in the
bidder's hand (:mod:`bots.bidinfo`). The file keeps the raw counts with the
seed, the deal count and the bidder; the smoothing is applied when loading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bots import bidinfo
from bots.registry import make_bot


def seed_value(text: str) -> int | str:
    return int(text) if text.lstrip("-").isdigit() else text


class Command(BaseCommand):
    help = "Learn the card-location table by (bidding position, bid) from bot bidding."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--deals", type=int, default=200_000, help="deals to bid (default 200000)"
        )
        parser.add_argument("--seed", default="1", help="seed (default 1)")
        parser.add_argument(
            "--bidder",
            default=bidinfo.DEFAULT_BIDDER,
            help=f"the bot that bids (default {bidinfo.DEFAULT_BIDDER})",
        )
        parser.add_argument(
            "--output",
            default=str(bidinfo.DATA_FILE),
            help="the table file (default bots/data/bidinfo.json)",
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **o: Any) -> None:
        if o["deals"] < 1:
            raise CommandError("--deals must be at least 1")
        output = Path(o["output"])
        if output.suffix != ".json":
            raise CommandError("--output must be a .json file")
        seed = seed_value(str(o["seed"]))
        stream = getattr(self.stderr, "_out", self.stderr)
        progress = None if o["no_progress"] else bidinfo.ProgressBar("bidding", stream)
        try:
            content = bidinfo.count_bids(
                o["deals"], seed, make_bot(o["bidder"]), o["bidder"], progress
            )
        except ValueError as e:
            raise CommandError(str(e)) from None
        bidinfo.save(content, output)
        table = bidinfo.BidTable(content)
        self.stdout.write(
            f"{o['deals']} deals bid by {o['bidder']}, seed {seed}; "
            f"{content['blind_bids_skipped']} blind bids skipped"
        )
        self.stdout.write("hands per (position, bid 0..7):")
        for pos in range(bidinfo.POSITIONS):
            cells = " ".join(f"{int(n):>7}" for n in table.hands[pos])
            self.stdout.write(f"  bidder {pos + 1}: {cells}")
        self.stdout.write(f"table written to {output}")
