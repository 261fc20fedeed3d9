"""``manage.py train_nnb``: NNB's trick regression (the Four Hundred bet model).

    python manage.py train_nnb [--rounds 100000] [--seed 1] [--workers 2]
        [--loss asym|sym] [--epochs 20] [--data bots/data/nnb.samples.jsonl]
        [--output bots/data/nnb.npz] [--plot FILE.png] [--report FILE.npz]

Self-play data first (BIS+SRP at four seats, ``lab.training.data``; resumable,
the samples log is kept), then the network (PyTorch, ``lab.training.train``;
resumable from ``<output>.ckpt.pt``). ``--rounds`` takes the first rounds of
the log, so smaller training sets (the learning curve) reuse the same data.
The weights file records the seed, data size, loss history and SHA-256;
``--report`` prints them. Needs the ``train`` extra (PyTorch, matplotlib).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bots.learned.mlp import WeightsError, read_mlp
from lab.training.data import DataError, arrays, generate


def report(path: str) -> str:
    try:
        meta = read_mlp(path).meta
    except WeightsError as e:
        raise CommandError(str(e)) from None
    hist = meta.pop("history", {})
    lines = [f"{path}:"] + [f"  {k}: {json.dumps(v)}" for k, v in sorted(meta.items())]
    for name, ys in hist.items():
        if ys:
            lines.append(f"  {name} loss: first {ys[0]:.4f}, last {ys[-1]:.4f} ({len(ys)})")
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Train NNB (or NNB-sym with --loss sym) from BIS+SRP self-play."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--rounds", type=int, default=100_000, help="self-play rounds")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--workers", type=int, default=2, help="self-play processes")
        parser.add_argument(
            "--loss",
            choices=["asym", "sym"],
            default="asym",
            help="asym: the paper's asymmetric loss (NNB); sym: squared",
        )
        parser.add_argument("--epochs", type=int, default=20)
        parser.add_argument("--chunk-rounds", type=int, default=100)
        parser.add_argument("--data", default="bots/data/nnb.samples.jsonl")
        parser.add_argument("--output", default="bots/data/nnb.npz")
        parser.add_argument("--plot", help="loss curves as a PNG")
        parser.add_argument("--report", metavar="NPZ", help="print a weights file's record")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["report"]:
            self.stdout.write(report(opts["report"]))
            return
        from lab.training.train import TrainError, plot, train_regression

        try:
            chunks = generate(
                opts["seed"],
                opts["rounds"],
                opts["data"],
                opts["workers"],
                opts["chunk_rounds"],
                progress=sys.stderr,
            )
            x, y, bis = arrays(chunks)
            rounds = sum(c["rounds"] for c in chunks)
            self.stdout.write(f"data: {rounds} rounds, {len(x)} regular bids (seed {opts['seed']})")
            out = Path(opts["output"])
            net, info = train_regression(
                x,
                y,
                loss=opts["loss"],
                seed=opts["seed"],
                epochs=opts["epochs"],
                checkpoint=out.with_name(out.name + ".ckpt.pt"),
                progress=sys.stderr,
                meta={
                    "bot": "NNB" if opts["loss"] == "asym" else "NNB-sym",
                    "rounds": rounds,
                    "data_source": "BIS+SRP self-play, goal 200 / -100",
                    "bis_mean_bid": float(bis.mean()),
                    "mean_tricks": float(y.mean()),
                },
            )
        except (DataError, TrainError) as e:
            raise CommandError(str(e)) from None
        net.save(out)
        hist = info["history"]
        self.stdout.write(
            f"{out}: loss {opts['loss']}, train {hist['train'][0]:.4f} -> {hist['train'][-1]:.4f}, "
            f"validation {hist['validation'][0]:.4f} -> {hist['validation'][-1]:.4f}; "
            f"sha256 {net.checksum}"
        )
        if opts["plot"]:
            plot(
                hist, opts["plot"], f"{info['bot']} ({opts['loss']} loss), {rounds} rounds", "epoch"
            )
            self.stdout.write(f"loss curves: {opts['plot']}")
