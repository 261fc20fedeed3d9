"""``manage.py train_spb``: SPB's bidding policy by self-play, no bidding rule written.

    python manage.py train_spb [--iterations 20] [--deals 2000] [--seed 1]
        [--hidden 64,64] [--lr 1e-3] [--temperature 0.3] [--max-bags 0]
        [--score-inputs [--match-return]]
        [--eval-every 5] [--eval-games 400] [--gauge GAMES] [--gauge-bidder RB]
        [--pool-bidders BIS,SIM75 --pool-bidder-share 0.5 [--sim-deals N]] [--init NPZ]
        [--output bots/data/spb.npz] [--plot FILE.png] [--report FILE.npz]
    python manage.py train_spb --method pg --iterations 300 [--batch 128] ...

``--method cfq`` (the default): counterfactual fitted Q-iteration on the compiled
simulator (``lab.training.spb_q``): for each learner seat of ``--deals`` deals an
iteration, every bid is played out and the network fitted to the 14 returns.
``--eval-every``: the learning curve, duplicate matches against RB every so many
iterations (``lab.training.spb_eval``); ``--gauge``: that many more after training
(seed ``gauge``); ``--gauge-bidder``: the bidder of both (RB by default; BIS measures
what the tournaments against BIS do). ``--pool-bidders``: registry bidders (BIS,
SIM75...) bid for the opponents in ``--pool-bidder-share`` of the deals (``--sim-deals``:
a SIM bidder's sampled deals a bid there); ``--init``: a warm start from a weights
file. ``--score-inputs``: the match's score and bags are inputs too (SPB-score), its
rounds drawn from match positions; ``--match-return``: a round's return is the change it
makes to the chance of winning the match (``lab.training.match_value``) instead of its
points gap. ``--method pg``: the first SPB (issue 22), actor-critic policy
gradient on the Python engine (``lab.training.train.train_spb``).
Resumable from ``<output>.ckpt.pt``. Needs the ``train`` extra.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.management.commands.train_nnb import report


def curve_plot(h: dict[str, list[float]], path: str, title: str, against: str = "RB") -> None:
    """The learning curve: win rate against ``against`` (95% band) and the greedy nil rate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.6), dpi=100)
    x = h["eval_iteration"]
    a.fill_between(x, h["eval_low"], h["eval_high"], alpha=0.25)
    a.plot(x, h["eval_win_rate"], marker="o", label=f"SPB+SRP vs {against}+SRP")
    a.axhline(0.5, color="grey", lw=0.8)
    a.axhline(0.55, color="grey", lw=0.8, ls="--")
    a.set_xlabel("iteration")
    a.set_ylabel("win rate (duplicate, 95% CI)")
    a.legend()
    a.grid(alpha=0.3)
    it = range(1, len(h["nil_rate"]) + 1)
    b.plot(it, h["nil_rate"], label="nil share (greedy, training deals)")
    b.plot(x, h["eval_nil_made"], marker="o", label=f"nil made (vs {against})")
    b.plot(it, [m / 13 for m in h["mean_bid"]], label="mean regular bid / 13")
    b.set_xlabel("iteration")
    b.legend(fontsize=8)
    b.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


class Command(BaseCommand):
    help = "Train SPB, the self-play bidder (counterfactual fitted Q; --method pg: the first one)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--method", choices=["cfq", "pg"], default="cfq")
        parser.add_argument("--iterations", type=int, default=20)
        parser.add_argument("--deals", type=int, default=2000, help="cfq: deals per iteration")
        parser.add_argument("--batch", type=int, default=128, help="pg: rounds per iteration")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--lr", type=float, default=1e-3)
        parser.add_argument("--hidden", default="64,64", help="cfq: hidden layer sizes")
        parser.add_argument("--epochs", type=int, default=2, help="cfq: passes per iteration")
        parser.add_argument("--temperature", type=float, default=0.3, help="cfq: softmax T")
        parser.add_argument("--max-bags", type=int, default=0, help="cfq: bags before, 0..N")
        parser.add_argument(
            "--score-inputs", action="store_true", help="cfq: SPB-score (score and bags as input)"
        )
        parser.add_argument(
            "--match-return",
            action="store_true",
            help="cfq, with --score-inputs: return by the chance of winning the match",
        )
        parser.add_argument("--eval-every", type=int, default=5)
        parser.add_argument("--eval-games", type=int, default=400)
        parser.add_argument("--gauge", type=int, default=0, help="games vs RB after training")
        parser.add_argument("--gauge-bidder", default="RB", help="cfq: the gauges' opponent")
        parser.add_argument(
            "--pool-bidders", default="", help="cfq: registry bidders in the pool, e.g. BIS,SIM75"
        )
        parser.add_argument(
            "--pool-bidder-share", type=float, default=0.0, help="cfq: their share of the deals"
        )
        parser.add_argument("--sim-deals", type=int, help="cfq: a pool SIM's deals a bid")
        parser.add_argument("--init", metavar="NPZ", help="cfq: start from these weights")
        parser.add_argument("--output", default="bots/data/spb.npz")
        parser.add_argument("--plot", help="the curves as a PNG")
        parser.add_argument("--report", metavar="NPZ", help="print a weights file's record")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["report"]:
            self.stdout.write(report(opts["report"]))
            return
        from lab.training.train import TrainError, plot, train_spb

        out = Path(opts["output"])
        checkpoint = out.with_name(out.name + ".ckpt.pt")
        try:
            if opts["method"] == "pg":
                net, info = train_spb(
                    seed=opts["seed"],
                    iterations=opts["iterations"],
                    batch=opts["batch"],
                    lr=opts["lr"],
                    checkpoint=checkpoint,
                    progress=sys.stderr,
                )
            else:
                from bots.learned.mlp import read_mlp
                from lab.training.spb_q import train_spb_q

                hidden = tuple(int(n) for n in opts["hidden"].split(","))
                pool = tuple(n for n in opts["pool_bidders"].split(",") if n)
                net, info = train_spb_q(
                    seed=opts["seed"],
                    iterations=opts["iterations"],
                    deals=opts["deals"],
                    hidden=hidden,
                    lr=opts["lr"],
                    epochs=opts["epochs"],
                    temperature=opts["temperature"],
                    max_bags=opts["max_bags"],
                    score_inputs=opts["score_inputs"],
                    match_return=opts["match_return"],
                    pool_bidders=pool,
                    pool_bidder_share=opts["pool_bidder_share"],
                    sim_deals=opts["sim_deals"],
                    init=read_mlp(opts["init"]) if opts["init"] else None,
                    gauge_bidder=opts["gauge_bidder"],
                    eval_every=opts["eval_every"],
                    eval_games=opts["eval_games"],
                    checkpoint=checkpoint,
                    progress=sys.stderr,
                )
        except TrainError as e:
            raise CommandError(str(e)) from None
        net.meta["bot"] = "SPB"
        net.save(out)
        h = info["history"]
        if opts["method"] == "pg":
            self.stdout.write(
                f"{out}: {info['rounds']} rounds (seed {opts['seed']}); reward "
                f"{h['reward'][0]:+.3f} -> {h['reward'][-1]:+.3f}, value loss "
                f"{h['value_loss'][0]:.3f} -> {h['value_loss'][-1]:.3f}; sha256 {net.checksum}"
            )
            if opts["plot"]:
                plot(
                    {k: h[k] for k in ("reward", "value_loss", "nil_rate")},
                    opts["plot"],
                    f"SPB self-play, {opts['batch']} rounds an iteration",
                    "iteration",
                )
                self.stdout.write(f"curves: {opts['plot']}")
            return
        curve = ", ".join(
            f"{i}: {w:.3f}" for i, w in zip(h["eval_iteration"], h["eval_win_rate"], strict=True)
        )
        against = opts["gauge_bidder"]
        self.stdout.write(
            f"{out}: {info['rounds']} deals, {info['simulated_rounds']} simulated rounds "
            f"(seed {opts['seed']}); loss {h['loss'][0]:.3f} -> {h['loss'][-1]:.3f}, nil "
            f"{h['nil_rate'][-1]:.3f}, mean bid {h['mean_bid'][-1]:.2f}; vs {against} {curve}; "
            f"sha256 {net.checksum}"
        )
        if opts["gauge"]:
            from bots.learned.bidders import SPB
            from lab.training.spb_eval import duplicate_gauge
            from lab.training.spb_q import pool_bidder

            opponent = pool_bidder(against, opts["sim_deals"])
            g = duplicate_gauge(SPB(net), opponent, opts["gauge"], "gauge")
            low, high = g.interval()
            self.stdout.write(
                f"gauge: SPB+SRP-rule vs {against}+SRP-rule {g.wins}/{g.games} = {g.rate:.3f} "
                f"({low:.3f}-{high:.3f}); SPB nil {g.nils / max(g.bids, 1):.3f}, made "
                f"{g.nils_made / max(g.nils, 1):.3f}"
            )
        if opts["plot"] and h["eval_iteration"]:
            curve_plot(
                h, opts["plot"], f"SPB (cfq), {opts['deals']} deals an iteration", against
            )
            self.stdout.write(f"curves: {opts['plot']}")
