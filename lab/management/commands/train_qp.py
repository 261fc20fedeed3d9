"""``manage.py train_qp``: QP-srp, QP's network fitted to every legal card played out.

    python manage.py train_qp [--rounds 40000] [--chunk 1000] [--explore 0.1]
        [--features spades|plain] [--hidden 256,256,128] [--epochs 4] [--batch 1024]
        [--lr 1e-3] [--advantage 1.0] [--curve-games 0] [--points 1] [--seed 1]
        [--output bots/data/qp_srp.npz] [--data DIR] [--plot FILE.png]
        [--rollout srp|qp] [--rollout-weights bots/data/qp.npz] [--rollout-srp-share 0]
        [--init NPZ]

Rounds dealt and bid (BIS) in Python, played in the compiled engine: at every
decision each legal card is played out to the round's end by SRP on the true
deal and labelled with the Spades score (``lab.training.qp_data``); the
network is fitted to those labels (``lab.training.qp_train``). The labelled
chunks are kept in ``--data`` (default ``<output>.data``; made again only if
missing), the fit resumes from ``<output>.ckpt.pt``. Needs the ``train`` extra.

Policy iteration: ``--rollout qp`` plays the rounds and the roll-outs with QP
(the network of ``--rollout-weights``, compiled: ``lab.training.qp_compiled``)
instead of SRP, on other deals (named after the network's checksum), and
``--rollout-srp-share p`` lets SRP play each seat of a decision's roll-outs
with probability p (a mix), and ``--init`` starts the fit from a weights file
instead of seeded weights.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.management.commands.train_nnb import report


class Command(BaseCommand):
    help = "Train QP-srp (QP's network on SRP's roll-outs) or QP-plain."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--rounds", type=int, default=40000)
        parser.add_argument("--chunk", type=int, default=1000, help="rounds per data file")
        parser.add_argument("--explore", type=float, default=0.1, help="random card share")
        parser.add_argument("--features", choices=("spades", "plain"), default="spades")
        parser.add_argument("--hidden", default="256,256,128")
        parser.add_argument("--epochs", type=int, default=4)
        parser.add_argument("--batch", type=int, default=1024, help="decisions per step")
        parser.add_argument("--lr", type=float, default=1e-3)
        parser.add_argument("--advantage", type=float, default=1.0, help="advantage loss weight")
        parser.add_argument("--curve-games", type=int, default=0, help="games per curve point")
        parser.add_argument("--points", type=int, default=1, help="curve points per epoch")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--output", default="bots/data/qp_srp.npz")
        parser.add_argument("--data", help="folder of the labelled rounds")
        parser.add_argument("--plot", help="loss and learning curves as a PNG")
        parser.add_argument("--report", metavar="NPZ", help="print a weights file's record")
        parser.add_argument(
            "--rollout", choices=("srp", "qp"), default="srp", help="who plays the roll-outs"
        )
        parser.add_argument(
            "--rollout-weights", default="bots/data/qp.npz", help="QP's network for --rollout qp"
        )
        parser.add_argument(
            "--rollout-srp-share",
            type=float,
            default=0.0,
            help="with --rollout qp: the chance that a seat plays SRP in a decision's roll-outs",
        )
        parser.add_argument("--init", metavar="NPZ", help="start the fit from these weights")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["report"]:
            self.stdout.write(report(opts["report"]))
            return
        import time

        from bots.learned.mlp import WeightsError, read_mlp
        from lab.training.qp_train import (
            fit,
            make_data,
            plot_curves,
            situation_counts,
            split_last_chunk,
        )
        from lab.training.train import TrainError

        out = Path(opts["output"])
        try:
            hidden = tuple(int(h) for h in opts["hidden"].split(","))
        except ValueError:
            raise CommandError("--hidden is sizes separated by commas, e.g. 256,256,128") from None
        if opts["rounds"] < 1 or opts["chunk"] < 1:
            raise CommandError("--rounds and --chunk must be at least 1")
        try:
            rollout = read_mlp(opts["rollout_weights"]) if opts["rollout"] == "qp" else None
            init = read_mlp(opts["init"]) if opts["init"] else None
        except WeightsError as e:
            raise CommandError(str(e)) from None
        share = opts["rollout_srp_share"]
        if not 0 <= share <= 1 or (share and rollout is None):
            raise CommandError("--rollout-srp-share is a probability, with --rollout qp")
        described = None
        if rollout is not None:
            described = f"qp {rollout.checksum}" + (f" srp {share:g}" if share else "")
        extra = {} if described is None else {"rollout": described}
        t0 = time.monotonic()
        data = make_data(
            Path(opts["data"] or str(out) + ".data"),
            seed=opts["seed"],
            rounds=opts["rounds"],
            chunk=opts["chunk"],
            explore=opts["explore"],
            progress=sys.stderr,
            rollout=rollout,
            srp_share=share,
        )
        t1 = time.monotonic()
        situations = situation_counts(data["types"])
        held = None
        if len(data["chunks"]) > 1:  # the last chunk is held out, for the gain over SRP
            data, held = split_last_chunk(data, int(data["chunks"][-1]))
        try:
            net, info = fit(
                data,
                seed=opts["seed"],
                features=opts["features"],
                hidden=hidden,
                epochs=opts["epochs"],
                checkpoint=out.with_name(out.name + ".ckpt.pt"),
                batch=opts["batch"],
                lr=opts["lr"],
                advantage=opts["advantage"],
                curve_games=opts["curve_games"],
                points=opts["points"],
                held=held,
                progress=sys.stderr,
                init=init,
                extra=extra,
            )
        except TrainError as e:
            raise CommandError(str(e)) from None
        net.meta.update(
            bot="QP-srp" if opts["features"] == "spades" else "QP-plain",
            rounds=opts["rounds"],
            explore=opts["explore"],
            rollout=described or "srp",
            init=None if init is None else init.checksum,
            situations=situations,
            held_out=0 if held is None else len(held["types"]),
            minutes={
                "data": round((t1 - t0) / 60, 1),
                "fit": round((time.monotonic() - t1) / 60, 1),
            },
        )
        net.save(out)
        h = info["history"]
        self.stdout.write(
            f"{out}: {info['rows']} cards of {info['decisions']} decisions from "
            f"{opts['rounds']} rounds (seed {opts['seed']}); loss per epoch "
            + ", ".join(f"{a:.4f}" for a in h["loss"])
            + "; advantage loss "
            + ", ".join(f"{a:.4f}" for a in h["advantage_loss"])
            + f"; held-out gain over {opts['rollout'].upper()}'s card (points / 100) "
            + ", ".join(f"{a:+.4f}" for a in h["held_gain"])
            + "; win rate vs BIS+WRP "
            + (", ".join(f"{c:.3f}" for c in h["curve"]) or "-")
            + f"; decisions by round type {situations}; sha256 {net.checksum}"
        )
        if opts["plot"]:
            title = f"QP ({opts['features']}), {opts['rounds']} rounds"
            if rollout is not None:
                title += f", roll-outs QP {rollout.checksum[:8]}"
                title += f" (SRP at {share:g} of seats)" if share else ""
            title += f", from {init.checksum[:8]}" if init is not None else ""
            plot_curves(h, opts["plot"], title, opts["rollout"].upper())
            self.stdout.write(f"curves: {opts['plot']}")
