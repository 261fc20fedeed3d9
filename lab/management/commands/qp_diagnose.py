"""``manage.py qp_diagnose``: QP's decisions against SRP's card, where contracts are lost.

    python manage.py qp_diagnose --weights bots/data/qp.npz [--deals 2000] [--seed 1] \\
        [--selfplay] [--data DIR] [--output FILE.json]

On the QP gauge's held-out deals (``"<seed>/qpself-gauge"``, bid by BIS, kept in
``--data``), the rounds without a nil played both ways against SRP (or QP at
every seat with ``--selfplay``); at each of QP's decisions where SRP's card
differs, SRP's card is played and the round played on (:mod:`lab.training.qp_diagnose`).
Prints and writes the set counts and the decisions grouped by kind.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Where QP's cards lose contracts SRP's make: decisions counted by kind."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--weights", default="bots/data/qp.npz")
        parser.add_argument("--deals", type=int, default=2000)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--selfplay", action="store_true", help="QP at every seat")
        parser.add_argument("--data", default="bots/data/qp_self.data", help="bid rounds kept")
        parser.add_argument("--output", help="the summary as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        from bots.learned.mlp import WeightsError, read_mlp
        from bots.srp_compiled import sure_table
        from lab.training.qp_diagnose import diagnose, summary
        from lab.training.qp_self import load_rounds, net_arrays

        if opts["deals"] < 1:
            raise CommandError("--deals is at least 1")
        try:
            net = read_mlp(opts["weights"])
        except WeightsError as e:
            raise CommandError(str(e)) from None
        rounds = load_rounds(Path(opts["data"]), f"{opts['seed']}/qpself-gauge", 0, opts["deals"])
        start = time.process_time()
        result = summary(diagnose(rounds, net_arrays(net), sure_table(), opts["selfplay"]))
        result["run"] = {
            "weights": net.checksum,
            "deals": opts["deals"],
            "seed": opts["seed"],
            "selfplay": opts["selfplay"],
            "cpu_seconds": round(time.process_time() - start, 1),
        }
        text = json.dumps(result, indent=1)
        if opts["output"]:
            Path(opts["output"]).write_text(text + "\n")
        self.stdout.write(text)
