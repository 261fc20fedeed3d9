"""``manage.py analyse_rounds [--since DATE] [--limit N]``: the double-dummy
analysis of stored rounds that have none (old rounds, tournaments stored with
``--store``, rounds ended while analyses were off), oldest first, with a
progress bar. Each round is stored as soon as it is analysed, so Ctrl-C loses
at most the round in hand and a second run goes on where the first stopped,
never analysing a round twice (``game.replays.tasks``)."""

from __future__ import annotations

import datetime
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from bots.bidinfo import ProgressBar
from game.replays.models import RoundAnalysis
from game.replays.tasks import analyse_rows, unanalysed


def parse_since(text: str) -> datetime.datetime:
    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--since takes a date like 2026-11-27, not {text!r}") from None
    return timezone.make_aware(datetime.datetime.combine(day, datetime.time()))


class Command(BaseCommand):
    help = "Analyse (double-dummy) the stored rounds that have no analysis yet, oldest first."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--since", help="only rounds finished on or after this date (ISO)")
        parser.add_argument("--limit", type=int, help="at most this many rounds")
        parser.add_argument(
            "--no-alternatives",
            action="store_true",
            help="skip the second pass (every legal card's value at every card)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        rows = unanalysed()
        if opts["since"]:
            rows = rows.filter(finished_at__gte=parse_since(opts["since"]))
        limit = opts["limit"]
        if limit is not None and limit < 1:
            raise CommandError("--limit must be at least 1")
        total = rows.count() if limit is None else min(limit, rows.count())
        if total == 0:
            self.stdout.write("no round to analyse")
            return
        wanted = list(rows.values_list("pk", flat=True)[:total])
        bar = ProgressBar("analysing rounds", self.stderr._out)
        started = time.perf_counter()
        done = 0
        try:
            # a fresh read per batch: rows stay small in memory, and a round
            # analysed meanwhile by the task is skipped (analyse_rows checks)
            for i in range(0, len(wanted), 100):
                batch = list(rows.filter(pk__in=wanted[i : i + 100]))  # no cursor left open
                done += analyse_rows(
                    batch,
                    progress=lambda n, base=i: bar(base + n, total),
                    with_alternatives=not opts["no_alternatives"],
                )
        except KeyboardInterrupt:
            done = RoundAnalysis.objects.filter(round_id__in=wanted).count()
            self.stdout.write(f"\nstopped: {done} round(s) analysed; run again to go on")
            raise SystemExit(130) from None
        spent = time.perf_counter() - started
        self.stdout.write(f"analysed {done} round(s) in {spent:.1f} s")
