"""``manage.py train_qp_self``: QP, the card-play value network, by self-play alone.

    python manage.py train_qp_self [--iterations 200] [--rounds 4000] [--pool 200000]
        [--explore 0.05] [--lambda 0.7] [--steps 400] [--batch 1024] [--lr 1e-3]
        [--buffer 4] [--branch 0] [--advantage 1] [--hidden 256,256,128]
        [--gauge-deals 2000] [--gauge-every 5]
        [--seed 1] [--output bots/data/qp.npz] [--data DIR] [--plot FILE.png]
        [--init NPZ] [--match] [--srp-share 0] [--league-share 0] [--league-every 10]
        [--league NPZ ...] [--inputs 292]

The Four Hundred paper's training (``lab.training.qp_self``): from random
weights, the network plays all four seats of bid rounds (compiled), each
after-state it enters is labelled by the λ-return of the round's Spades score
(``--lambda 1``: the round's score alone, the paper's label), and it is fitted
to them in batches, iteration after iteration. No rule of play and no other
player's games. ``--branch p``: a share p of the decisions also has every legal
card played on the true deal and labelled by the value the network gives the
seat's next position (or the round's score), fitted with an advantage loss.
``--init``: start from a weights file (an earlier run's, to go on at a lower
``--lr``) instead of seeded random weights. The league (issue 62): ``--match``
deals the pool from match situations; ``--srp-share`` and ``--league-share``
are the shares of rounds the network plays at one partnership against SRP and
against an earlier network (``--league`` files and the run's snapshots).
``--inputs 300`` adds issue 62's inputs for the contract and the trick in play
to the issue-46 state (292, the default, the shipped runs'); an ``--init``
network with fewer inputs than the run's has the new inputs' weights started
at zero.

The bid rounds (BIS, in Python: the slow part, about 4 ms a round) are kept
in ``--data`` (default ``<output>.data``; runs may share it), the rows of the
last iterations in ``<output>.rows``; the run resumes from
``<output>.ckpt.pt``. The learning curve: the greedy network against SRP on
``--gauge-deals`` held-out deals, each played twice with the partnerships
swapped, every ``--gauge-every`` iterations. Needs the ``train`` extra.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bots.learned.features import PLAY_FEATURES, SPADES_FEATURES
from lab.management.commands.train_nnb import report


def curve_plot(h: dict[str, list[float]], path: str, title: str) -> None:
    """The learning curve: points a round against SRP (±2 standard errors) and the loss."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4), dpi=100)
    x = h["gauge_at"]
    low = [g - 2 * s for g, s in zip(h["gauge"], h["gauge_se"], strict=True)]
    high = [g + 2 * s for g, s in zip(h["gauge"], h["gauge_se"], strict=True)]
    a.fill_between(x, low, high, alpha=0.25)
    a.plot(x, h["gauge"], marker=".")
    a.axhline(0, color="grey", lw=0.8)
    a.set_title("QP against SRP, duplicate (held-out deals)")
    a.set_xlabel("iteration")
    a.set_ylabel("points a round, QP's side - SRP's")
    b.plot(h["iteration"], h["loss"])
    b.set_title("squared error to the λ-returns")
    b.set_xlabel("iteration")
    for ax in (a, b):
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


class Command(BaseCommand):
    help = "Train QP by self-play alone (the Four Hundred paper's card play)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--iterations", type=int, default=200)
        parser.add_argument(
            "--rounds", type=int, default=4000, help="self-play rounds an iteration"
        )
        parser.add_argument("--pool", type=int, default=200_000, help="bid rounds, cycled")
        parser.add_argument("--explore", type=float, default=0.05, help="random card share")
        parser.add_argument("--lambda", dest="lam", type=float, default=0.7, help="λ-return")
        parser.add_argument("--steps", type=int, default=400, help="Adam steps an iteration")
        parser.add_argument("--batch", type=int, default=1024, help="rows a step")
        parser.add_argument("--lr", type=float, default=1e-3)
        parser.add_argument("--buffer", type=int, default=4, help="iterations of rows kept")
        parser.add_argument(
            "--branch", type=float, default=0.0, help="share of decisions with every card labelled"
        )
        parser.add_argument(
            "--advantage", type=float, default=1.0, help="advantage loss weight (branched rows)"
        )
        parser.add_argument("--hidden", default="256,256,128")
        parser.add_argument("--gauge-deals", type=int, default=2000)
        parser.add_argument("--gauge-every", type=int, default=5)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--output", default="bots/data/qp.npz")
        parser.add_argument("--data", help="folder of the bid rounds")
        parser.add_argument("--plot", help="the learning curve as a PNG")
        parser.add_argument("--init", metavar="NPZ", help="start from these weights")
        parser.add_argument("--report", metavar="NPZ", help="print a weights file's record")
        parser.add_argument(
            "--match", action="store_true",
            help="deal the pool from match situations (scores drawn: end-game bids, blind nils)",
        )  # fmt: skip
        parser.add_argument(
            "--srp-share", type=float, default=0.0, help="share of rounds against SRP"
        )
        parser.add_argument(
            "--league-share", type=float, default=0.0,
            help="share of rounds against an earlier network (--league and the run's snapshots)",
        )  # fmt: skip
        parser.add_argument(
            "--league-every", type=int, default=10, help="iterations between snapshots"
        )
        parser.add_argument(
            "--league", action="append", default=[], metavar="NPZ",
            help="an opponent network of the league (repeatable)",
        )  # fmt: skip
        parser.add_argument(
            "--inputs", type=int, default=SPADES_FEATURES,
            help=f"the first N inputs of a state ({PLAY_FEATURES}: with issue 62's)",
        )  # fmt: skip

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["report"]:
            self.stdout.write(report(opts["report"]))
            return
        from bots.learned.mlp import WeightsError, read_mlp
        from lab.training.qp_league import League
        from lab.training.qp_self import train
        from lab.training.train import TrainError

        out = Path(opts["output"])
        try:
            hidden = tuple(int(h) for h in opts["hidden"].split(","))
        except ValueError:
            raise CommandError("--hidden is sizes separated by commas, e.g. 256,256,128") from None
        if not 0 < opts["inputs"] <= PLAY_FEATURES:
            raise CommandError(f"--inputs is 1..{PLAY_FEATURES}")
        if opts["gauge_deals"] < 0 or opts["gauge_every"] < 1:
            raise CommandError("--gauge-deals >= 0 and --gauge-every >= 1")
        try:
            init = read_mlp(opts["init"]) if opts["init"] else None
            league = tuple(read_mlp(p) for p in opts["league"])
        except WeightsError as e:
            raise CommandError(str(e)) from None
        try:
            opponents = None
            if opts["srp_share"] or opts["league_share"]:
                opponents = League(
                    opts["srp_share"], opts["league_share"], opts["league_every"], league
                )
        except TrainError as e:
            raise CommandError(str(e)) from None
        data = Path(opts["data"] or str(out) + ".data")
        try:
            net, info = train(
                data,
                out.with_name(out.name + ".rows"),
                seed=opts["seed"],
                iterations=opts["iterations"],
                rounds=opts["rounds"],
                pool=opts["pool"],
                explore=opts["explore"],
                lam=opts["lam"],
                steps=opts["steps"],
                batch=opts["batch"],
                lr=opts["lr"],
                buffer=opts["buffer"],
                hidden=hidden,
                gauge_deals=opts["gauge_deals"],
                gauge_every=opts["gauge_every"],
                checkpoint=out.with_name(out.name + ".ckpt.pt"),
                branch=opts["branch"],
                advantage=opts["advantage"],
                init=init,
                progress=sys.stderr,
                match=opts["match"],
                opponents=opponents,
                inputs=opts["inputs"],
            )
        except TrainError as e:
            raise CommandError(str(e)) from None
        # No wall time in the record: a resumed run's would be its last part's.
        net.meta.update(bot="QP", init=None if init is None else init.checksum)
        net.save(out)
        h = info["history"]
        gauge = ", ".join(
            f"{i}: {g:+.1f} ± {s:.1f}"
            for i, g, s in zip(h["gauge_at"], h["gauge"], h["gauge_se"], strict=True)
        )
        self.stdout.write(
            f"{out}: {opts['iterations']} iterations of {opts['rounds']} self-play rounds "
            f"(seed {opts['seed']}); loss first {h['loss'][0]:.4f}, last {h['loss'][-1]:.4f}; "
            f"points a round against SRP by iteration {gauge or '-'}; sha256 {net.checksum}"
        )
        if opts["plot"]:
            title = (
                f"QP by self-play, λ {opts['lam']:g}, explore {opts['explore']:g}, "
                f"lr {opts['lr']:g}, {opts['rounds']} rounds an iteration"
                + (f", from {init.checksum[:8]}" if init is not None else "")
                + (f", SRP {opts['srp_share']:g}" if opts["srp_share"] else "")
                + (f", league {opts['league_share']:g}" if opts["league_share"] else "")
                + (", match deals" if opts["match"] else "")
            )
            curve_plot(h, opts["plot"], title)
            self.stdout.write(f"curves: {opts['plot']}")
