"""``manage.py nnb_curve``: NNB's learning curve, win rate against RB by training size.

    python manage.py nnb_curve --sizes 1000,5000,25000,100000 --games 4000 --seed 1
        [--workers 2] [--epochs 20] [--data bots/data/nnb.samples.jsonl] [--chunk-rounds 100]
        [--dir artifacts/nnb_curve] [--output lab/results/nnb_learning_curve.json]
        [--plot lab/results/nnb_learning_curve.png]

For each size: NNB (asymmetric loss, seed ``--seed``) trained on the first
that many rounds of the self-play log (``train_nnb`` makes and extends it),
its weights kept in ``--dir``, then a duplicate tournament NNB+SRP vs RB+SRP of
``--games`` games, goal 200 / -100, tournament seed ``--seed``: the same deals
for every size. Needs the ``train`` extra.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bots.base import Bot
from bots.learned.bidders import NNB
from bots.registry import make_bot
from bots.srp import SRP
from lab.tournaments.pool import worker_pool
from lab.tournaments.tournament import TournamentConfig, play_game, summarize
from lab.training.data import DataError, arrays, generate

_GAME: dict[str, Any] = {}


def _init(config: TournamentConfig, weights: str) -> None:
    _GAME.update(config=config, a=Bot(NNB(weights), SRP()), b=make_bot(config.ew))


def _play(index: int) -> dict[str, Any]:
    return play_game(_GAME["config"], index, _GAME["a"], _GAME["b"])


def curve_point(weights: str, games: int, seed: int, workers: int) -> dict[str, Any]:
    """NNB (these weights)+SRP vs RB+SRP, duplicate, goal 200 / -100."""
    config = TournamentConfig(ns="NNB+SRP", ew="RB+SRP", games=games, seed=seed, duplicate=True)
    if workers <= 1:
        _init(config, weights)
        records = [_play(i) for i in range(games)]
    else:
        with worker_pool(workers, _init, (config, weights)) as pool:
            records = list(pool.imap_unordered(_play, range(games), chunksize=20))
    return summarize(config, records)


class Command(BaseCommand):
    help = "NNB's win rate against RB+SRP at several training sizes."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--sizes",
            default="1000,5000,25000,100000",
            help="training sizes in self-play rounds, comma-separated",
        )
        parser.add_argument("--games", type=int, default=4000)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--workers", type=int, default=2)
        parser.add_argument("--epochs", type=int, default=20)
        parser.add_argument("--data", default="bots/data/nnb.samples.jsonl")
        parser.add_argument(
            "--chunk-rounds",
            type=int,
            default=100,
            help="rounds per chunk of the self-play log, as train_nnb's (default 100): "
            "a size is rounded up to whole chunks",
        )
        parser.add_argument("--dir", default="artifacts/nnb_curve")
        parser.add_argument("--output", default="lab/results/nnb_learning_curve.json")
        parser.add_argument("--plot", help="win rate by training size as a PNG")

    def handle(self, *args: Any, **opts: Any) -> None:
        from lab.training.train import TrainError, train_regression

        try:
            sizes = [int(s) for s in opts["sizes"].split(",")]
        except ValueError:
            raise CommandError("--sizes: whole numbers separated by commas") from None
        if opts["games"] < 2 or opts["games"] % 2:
            raise CommandError("--games must be even (duplicate pairs)")
        folder = Path(opts["dir"])
        folder.mkdir(parents=True, exist_ok=True)
        points = []
        for size in sizes:
            weights = folder / f"nnb_r{size}.npz"
            try:
                chunks = generate(
                    opts["seed"], size, opts["data"], opts["workers"], opts["chunk_rounds"],
                    progress=sys.stderr,
                )  # fmt: skip
                x, y, _ = arrays(chunks)
                net, info = train_regression(
                    x,
                    y,
                    loss="asym",
                    seed=opts["seed"],
                    epochs=opts["epochs"],
                    checkpoint=weights.with_name(weights.name + ".ckpt.pt"),
                    progress=sys.stderr,
                    meta={"bot": "NNB", "rounds": size},
                )
            except (DataError, TrainError) as e:
                raise CommandError(str(e)) from None
            net.save(weights)
            s = summarize_point(
                curve_point(str(weights), opts["games"], opts["seed"], opts["workers"])
            )
            point = {
                "rounds": size,
                "samples": len(x),
                "sha256": net.checksum,
                **s,
                "validation_loss": info["history"]["validation"][-1],
            }
            points.append(point)
            lo, hi = point["win_rate_ci95"]
            self.stdout.write(
                f"{size} rounds ({len(x)} bids): NNB+SRP vs RB+SRP "
                f"{100 * point['win_rate']:.1f}% ({100 * lo:.1f}-{100 * hi:.1f}%)"
            )
        result = {
            "command": "manage.py nnb_curve "
            + " ".join(f"--{k} {opts[k]}" for k in ("sizes", "games", "seed", "epochs")),
            "games": opts["games"],
            "seed": opts["seed"],
            "points": points,
        }
        Path(opts["output"]).write_text(json.dumps(result, indent=2) + "\n")
        if opts["plot"]:
            plot_curve(points, opts["plot"], opts["games"])


def summarize_point(summary: dict[str, Any]) -> dict[str, Any]:
    a = summary["sides"][0]
    return {
        "win_rate": a["win_rate"],
        "win_rate_ci95": a["win_rate_ci95"],
        "points_per_round": a["points_per_round"],
    }


def plot_curve(points: list[dict[str, Any]], path: str, games: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [p["rounds"] for p in points]
    ys = [100 * p["win_rate"] for p in points]
    err = [
        [100 * (p["win_rate"] - p["win_rate_ci95"][0]) for p in points],
        [100 * (p["win_rate_ci95"][1] - p["win_rate"]) for p in points],
    ]
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=100)
    ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3)
    ax.axhline(50, color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("self-play rounds of training data")
    ax.set_ylabel("NNB+SRP win rate vs RB+SRP (%)")
    ax.set_title(f"NNB learning curve ({games} duplicate games a point, 95% CI)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
