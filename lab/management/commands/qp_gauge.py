"""``manage.py qp_gauge``: QP networks on the gauge's deals, each beside the first, deal by deal.

    python manage.py qp_gauge --weights bots/data/qp_trick.npz --weights OTHER.npz ... \\
        [--deals 10000] [--seed 1] [--data DIR] [--symmetric] [--output FILE.json]

``train_qp_self``'s gauge (:func:`lab.training.qp_self.gauge_gaps`: the held-out
deals ``"<seed>/qpself-gauge"``, bid by BIS and kept in ``--data``, each played
twice against the compiled SRP with the partnerships swapped) for each weights
file, and each file's difference from the first, paired by deal. The training
gauges 2,000 deals (a standard error of about 1.3 points a round); 10,000 bring it
to about 0.6, what it takes to tell two snapshots of a run apart. With
``--symmetric`` each network is gauged a second time as the shipped QP plays it,
each card's value the mean over the six relabellings of the plain suits.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "QP networks against SRP on the gauge's deals, each beside the first, deal by deal."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--weights", action="append", required=True, help="repeatable")
        parser.add_argument("--deals", type=int, default=2000)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--data", default="bots/data/qp_self.data", help="bid rounds kept")
        parser.add_argument(
            "--symmetric", action="store_true",
            help="each network also with its values averaged over the suits' relabellings",
        )  # fmt: skip
        parser.add_argument("--output", help="the figures as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        import numpy as np

        from bots.learned.mlp import WeightsError, read_mlp
        from lab.training.qp_self import gauge_gaps, load_rounds, net_arrays

        if opts["deals"] < 2:
            raise CommandError("--deals is at least 2")
        try:
            nets = [read_mlp(w) for w in opts["weights"]]
        except WeightsError as e:
            raise CommandError(str(e)) from None
        rounds = load_rounds(Path(opts["data"]), f"{opts['seed']}/qpself-gauge", 0, opts["deals"])
        n = opts["deals"]

        def mean_se(x: np.ndarray) -> list[float]:
            return [round(float(x.mean()), 3), round(float(x.std(ddof=1) / np.sqrt(n)), 3)]

        first = None
        rows = []
        runs = [(p, net, False) for p, net in zip(opts["weights"], nets, strict=True)]
        if opts["symmetric"]:
            runs += [(p, net, True) for p, net, _ in runs]
        for path, net, symmetric in runs:
            start = time.process_time()
            gaps = gauge_gaps(rounds, net_arrays(net, symmetric))
            row: dict[str, Any] = {
                "weights": path, "symmetric": symmetric, "sha256": net.checksum,
                "gap": mean_se(gaps),
            }  # fmt: skip
            name = f"{path} (suits averaged)" if symmetric else path
            text = f"{name}: {row['gap'][0]:+.2f} ± {row['gap'][1]:.2f} points a round"
            if first is None:
                first = gaps
            else:
                row["less_the_first"] = mean_se(gaps - first)
                d = row["less_the_first"]
                text += f"; less the first, deal by deal: {d[0]:+.2f} ± {d[1]:.2f}"
            row["cpu_seconds"] = round(time.process_time() - start, 1)
            rows.append(row)
            self.stdout.write(text)
        result = {"deals": n, "seed": opts["seed"], "networks": rows}
        if opts["output"]:
            Path(opts["output"]).write_text(json.dumps(result, indent=1) + "\n")
