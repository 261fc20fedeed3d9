"""``manage.py train_qp``: QP's card-play value network by batched fitted Q-iteration.

    python manage.py train_qp [--iterations 6] [--rounds 1500] [--against-srp 2]
        [--epochs 4] [--seed 1] [--output bots/data/qp.npz] [--plot FILE.png]

Iteration 0 plays SRP at every seat, the next ``--against-srp`` iterations one
QP seat (epsilon-greedy) among SRP players, the rest QP at every seat; BIS
bids. Each iteration labels the states it saw (``gamma^(13-t) R + 1{won}``) and
fits the network to them (``lab.training.train.train_qp``). Resumable from
``<output>.ckpt.pt``. Needs the ``train`` extra.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.management.commands.train_nnb import report


class Command(BaseCommand):
    help = "Train QP, the card-play value network."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--iterations", type=int, default=6)
        parser.add_argument("--rounds", type=int, default=1500, help="rounds per iteration")
        parser.add_argument("--against-srp", type=int, default=2)
        parser.add_argument("--epochs", type=int, default=4, help="epochs per iteration")
        parser.add_argument("--batch", type=int, default=512, help="minibatch size")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--output", default="bots/data/qp.npz")
        parser.add_argument("--plot", help="loss curves as a PNG")
        parser.add_argument("--report", metavar="NPZ", help="print a weights file's record")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["report"]:
            self.stdout.write(report(opts["report"]))
            return
        from lab.training.train import TrainError, plot, train_qp

        out = Path(opts["output"])
        try:
            net, info = train_qp(
                seed=opts["seed"],
                iterations=opts["iterations"],
                rounds=opts["rounds"],
                epochs=opts["epochs"],
                batch=opts["batch"],
                against_srp=opts["against_srp"],
                checkpoint=out.with_name(out.name + ".ckpt.pt"),
                progress=sys.stderr,
            )
        except TrainError as e:
            raise CommandError(str(e)) from None
        net.meta["bot"] = "QP"
        net.save(out)
        h = info["history"]
        self.stdout.write(
            f"{out}: {info['samples']} states from {opts['iterations']} x {opts['rounds']} "
            f"rounds (seed {opts['seed']}); loss per iteration, first -> last epoch: "
            + ", ".join(
                f"{a:.2f}->{b:.2f}" for a, b in zip(h["first_epoch"], h["last_epoch"], strict=True)
            )
            + f"; sha256 {net.checksum}"
        )
        if opts["plot"]:
            plot(
                {"train (per epoch)": h["train"]},
                opts["plot"],
                f"QP fitted Q-iteration, {opts['rounds']} rounds a step",
                "epoch",
            )
            self.stdout.write(f"loss curves: {opts['plot']}")
