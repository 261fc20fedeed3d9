"""``manage.py nil_sets``: of a side's set nils, how many were set on partner's lead.

    python manage.py nil_sets --ns BIS+SRP --ew RB+SRP --games 2000 --seed 1 \\
        --duplicate --workers 2 [--goal 200] [--lose -100] [--json FILE]

Replays the tournament's games (the same games as ``manage.py tournament``
with the same options, :mod:`lab.training.nil_sets`) and prints, per side, the nils,
the set ones, and who led the trick that set each: the niler, the niler's
partner, or an opponent.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.tournaments.tournament import (
    TournamentConfig,
    TournamentError,
    _seed_value,
    wilson_interval,
)
from lab.training.nil_sets import nil_sets


def reliability_plot(result: dict[str, Any], path: str) -> None:
    """Side A's nils by predicted probability (tenths): the mean predicted against
    the share made, with 95% intervals; the diagonal is perfect calibration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    side = result["sides"][0]
    bins = [b for b in side["predicted"]["bins"] if b["nils"]]
    x = [b["mean_predicted"] for b in bins]
    y = [b["made"] / b["nils"] for b in bins]
    ci = [wilson_interval(int(b["made"]), int(b["nils"])) for b in bins]
    err = [[v - lo for v, (lo, _) in zip(y, ci, strict=True)],
           [hi - v for v, (_, hi) in zip(y, ci, strict=True)]]  # fmt: skip
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], color="0.7", lw=1)
    ax.errorbar(x, y, yerr=err, fmt="o", capsize=3)
    for xi, yi, b in zip(x, y, bins, strict=True):
        ax.annotate(str(b["nils"]), (xi, yi), textcoords="offset points", xytext=(5, -12),
                    fontsize=7)  # fmt: skip
    c = result["config"]
    title = f"{side['bot']} nils vs {c['ew']}, {c['games']} games, seed {c['seed']}"
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="predicted P(nil made)", ylabel="made", title=title)
    ax.title.set_fontsize(9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


class Command(BaseCommand):
    help = "Who led the trick that set each nil, over a tournament's replayed games."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--ns", required=True)
        parser.add_argument("--ew", required=True)
        parser.add_argument("--games", type=int, default=2000)
        parser.add_argument("--goal", type=int, default=200)
        parser.add_argument("--lose", type=int, default=-100)
        parser.add_argument("--seed", default="1")
        parser.add_argument("--duplicate", action="store_true")
        parser.add_argument("--workers", type=int, default=1)
        parser.add_argument("--json", default=None, help="also write the figures to FILE")
        parser.add_argument(
            "--plot", default=None, help="a reliability plot (PNG) of side A's nil probabilities"
        )

    def handle(self, *args: Any, **o: Any) -> None:
        seed = _seed_value(str(o["seed"]))
        config = TournamentConfig(o["ns"], o["ew"], o["games"], o["goal"], o["lose"], seed,
                                  o["duplicate"])  # fmt: skip
        try:
            result = nil_sets(config, max(1, o["workers"]))
        except TournamentError as e:
            raise CommandError(str(e)) from None
        for side in result["sides"]:
            share = side["set_on_partners_lead_share"]
            lo, hi = side["set_on_partners_lead_ci95"]
            led = side["set_by_leader"]
            self.stdout.write(
                f"{side['bot']}: {side['nils']} nils, {side['set']} set; set on the lead of "
                f"the niler {led['niler']}, partner {led['partner']}, an opponent "
                f"{led['opponent']}; on partner's lead "
                + (f"{share:.1%} (95% CI {lo:.1%}-{hi:.1%})" if share is not None else "-")
                + f"; blind nils {side['blind_nils']}, set {side['blind_set']}"
            )
            pred = side["predicted"]
            if pred["nils"]:
                lo, hi = pred["observed_ci95"]
                self.stdout.write(
                    f"  its nil probabilities: {pred['nils']} nils, predicted made "
                    f"{pred['predicted_made_rate']:.1%}, made {pred['observed_made_rate']:.1%} "
                    f"(95% CI {lo:.1%}-{hi:.1%})"
                )
        if o["plot"]:
            reliability_plot(result, o["plot"])
        if o["json"]:
            with open(o["json"], "w") as f:
                json.dump(result, f, indent=2)
                f.write("\n")
