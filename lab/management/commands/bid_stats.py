"""``manage.py bid_stats``: bid accuracy, set rate and the trick-minus-bid histogram of
both sides of a tournament, from its games log (``*.games.jsonl``).

    python manage.py bid_stats lab/results/x.games.jsonl [--plot FILE.png] [--json FILE]

See ``lab.training.analysis`` for the definitions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.training.analysis import bid_stats, plot_histograms, read_games


class Command(BaseCommand):
    help = "Bid accuracy, set rate and trick-minus-bid histograms of a tournament's games log."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("log", help="a tournament's games log (*.games.jsonl)")
        parser.add_argument("--plot", help="the two histograms as a PNG")
        parser.add_argument("--json", help="also write the figures as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["log"])
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        header = json.loads(path.read_text().split("\n", 1)[0])
        config = header.get("config", {})
        names = [config.get("ns", "A"), config.get("ew", "B")]
        games = read_games(path)
        stats = bid_stats(games)
        for name, s in zip(names, stats, strict=True):
            self.stdout.write(
                f"{name}: {s['regular_bids']} regular bids, exact {100 * s['exact']:.1f}%, "
                f"over (tricks < bid) {100 * s['over']:.1f}%, mean tricks - bid "
                f"{s['mean_tricks_minus_bid']:+.2f}; set in {100 * s['set_rate']:.1f}% of "
                f"{s['contracts']} contracts"
            )
        if opts["json"]:
            out = {
                "log": str(path),
                "games": len(games),
                "sides": [{"bot": n, **s} for n, s in zip(names, stats, strict=True)],
            }
            Path(opts["json"]).write_text(json.dumps(out, indent=2) + "\n")
        if opts["plot"]:
            series = {n.split("+")[0]: s["histogram"] for n, s in zip(names, stats, strict=True)}
            plot_histograms(series, opts["plot"], f"{names[0]} vs {names[1]}, {len(games)} games")
            self.stdout.write(f"histograms: {opts['plot']}")
