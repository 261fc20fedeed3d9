"""``manage.py analyse_rounds [--since DATE] [--limit N] [--celery]``: the double-dummy
analysis of stored rounds that have none (old rounds, tournaments stored with
``--store``, rounds ended while analyses were off), oldest first, with a
progress bar. Each round is stored as soon as it is analysed, so Ctrl-C (or
SIGTERM, a process manager's stop: the same) loses at most the round in hand
and a second run goes on where the first stopped, never analysing a round
twice (``game.replays.tasks``). With ``--celery`` the
rounds go in batches to the ``replays`` workers of any number of machines,
and the command watches the database (``game.replays.spread``)."""

from __future__ import annotations

import datetime
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from bots.bidinfo import ProgressBar
from game.replays import spread
from game.replays.models import RoundAnalysis
from game.replays.tasks import analyse_rows, to_analyse


def parse_since(text: str) -> datetime.datetime:
    """A date (from its midnight) or a date and time, ISO; the site's time zone
    unless it names one."""
    try:
        day = datetime.date.fromisoformat(text)
        return timezone.make_aware(datetime.datetime.combine(day, datetime.time()))
    except ValueError:
        pass
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(
            f"--since takes a date like 2026-11-27 or a date and time like "
            f"2026-11-27T08:30, not {text!r}"
        ) from None
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment)


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does, so that a process
    manager's stop (or ``kill``) reports what is stored and exits cleanly. A
    compiled search in hand finishes first: Python runs the handler after it
    returns. Only the main thread may set handlers (not so under some test
    runners): there the default stays."""
    try:
        before = signal.signal(signal.SIGTERM, signal.default_int_handler)
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


class Command(BaseCommand):
    help = "Analyse (double-dummy) the stored rounds that have no analysis yet, oldest first."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--since", help="only rounds finished on or after this date, or date and time (ISO)"
        )
        parser.add_argument("--limit", type=int, help="at most this many rounds")
        parser.add_argument(
            "--no-alternatives",
            action="store_true",
            help="skip the second pass (every legal card's value at every card)",
        )
        parser.add_argument(
            "--celery",
            action="store_true",
            help="send the rounds in batches to the 'replays' queue (workers: celery -A "
            "spadesite worker -Q replays, on any machine with the database) and watch",
        )
        parser.add_argument(
            "--broker", help="with --celery: the broker's Redis URL (default: REDIS_URL)"
        )
        parser.add_argument(
            "--batch", type=int, default=spread.BATCH, help="with --celery: rounds a task"
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=spread.TIMEOUT,
            help="with --celery: seconds without progress before a taken batch is sent "
            f"again (its worker died; default {spread.TIMEOUT:.0f})",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        rows = to_analyse(not opts["no_alternatives"])
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
        with sigterm_as_ctrl_c():
            if opts["celery"]:
                self.spread(wanted, bar, opts)
            else:
                self.analyse_here(rows, wanted, total, bar, opts)

    def analyse_here(
        self, rows: Any, wanted: list[int], total: int, bar: ProgressBar, opts: dict[str, Any]
    ) -> None:
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

    def spread(self, wanted: list[int], bar: ProgressBar, opts: dict[str, Any]) -> None:
        try:
            run = spread.Spread(wanted, spread.broker_url(opts["broker"]), opts["batch"],
                                opts["timeout"], not opts["no_alternatives"], bar)  # fmt: skip
        except spread.SpreadError as e:
            raise CommandError(str(e)) from None
        started = time.perf_counter()
        try:
            done = run.run()
        except KeyboardInterrupt:
            done = len(wanted) - len(run.left(wanted))
            self.stdout.write(
                f"\nstopped watching: {done} round(s) analysed; the batches sent are "
                "analysed still; run again to send what is left"
            )
            raise SystemExit(130) from None
        spent = time.perf_counter() - started
        again = f", {run.sent_again} batch(es) sent again" if run.sent_again else ""
        self.stdout.write(f"analysed {done} round(s) in {spent:.1f} s on the replays "
                          f"workers{again}")  # fmt: skip
