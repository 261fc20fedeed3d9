"""``manage.py train_spb``: SPB's bidding policy by self-play policy gradient.

    python manage.py train_spb [--iterations 300] [--batch 128] [--seed 1]
        [--output bots/data/spb.npz] [--plot FILE.png] [--report FILE.npz]

Each iteration plays ``--batch`` rounds (SRP play, goal 200 / -100 rules, scores
0 : 0): the current policy bids for one partnership, a policy drawn from the
pool of its earlier versions for the other; reward = the partnership's round
points minus the opponents', / 100 (``lab.training.train.train_spb``).
Resumable from ``<output>.ckpt.pt``. Needs the ``train`` extra.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.management.commands.train_nnb import report


class Command(BaseCommand):
    help = "Train SPB, the self-play policy-gradient bidder."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--iterations", type=int, default=300)
        parser.add_argument("--batch", type=int, default=128, help="rounds per iteration")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--lr", type=float, default=1e-3)
        parser.add_argument("--output", default="bots/data/spb.npz")
        parser.add_argument("--plot", help="reward and losses as a PNG")
        parser.add_argument("--report", metavar="NPZ", help="print a weights file's record")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["report"]:
            self.stdout.write(report(opts["report"]))
            return
        from lab.training.train import TrainError, plot, train_spb

        out = Path(opts["output"])
        try:
            net, info = train_spb(
                seed=opts["seed"],
                iterations=opts["iterations"],
                batch=opts["batch"],
                lr=opts["lr"],
                checkpoint=out.with_name(out.name + ".ckpt.pt"),
                progress=sys.stderr,
            )
        except TrainError as e:
            raise CommandError(str(e)) from None
        net.meta["bot"] = "SPB"
        net.save(out)
        h = info["history"]
        self.stdout.write(
            f"{out}: {info['rounds']} rounds (seed {opts['seed']}); reward {h['reward'][0]:+.3f}"
            f" -> {h['reward'][-1]:+.3f}, value loss {h['value_loss'][0]:.3f} -> "
            f"{h['value_loss'][-1]:.3f}; sha256 {net.checksum}"
        )
        if opts["plot"]:
            plot(
                {k: h[k] for k in ("reward", "value_loss", "nil_rate")},
                opts["plot"],
                f"SPB self-play, {opts['batch']} rounds an iteration",
                "iteration",
            )
            self.stdout.write(f"curves: {opts['plot']}")
