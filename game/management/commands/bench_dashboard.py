"""``manage.py bench_dashboard``: the dashboard and the exports on a big round log.

    DATABASE_URL=postgres://... python manage.py migrate
    DATABASE_URL=postgres://... python manage.py bench_dashboard --rounds 200000

Fills the database with synthetic but valid rounds: a pool of real
bot-vs-bot rounds is played (``--pool-matches`` matches, seeded) and each
stored row takes one of those records, with its own seats (a varied mix of
humans and bots), bot names and finish time; tables of ``ROUNDS_PER_MATCH``
rounds get a match result. Rows go in with ``bulk_create``. Then it times
the dashboard page (as a staff user, through Django's test client), the
analyses with a filter, and both exports (rounds/s). The bench tables
(public ids ``bench-...``) are deleted afterwards unless ``--keep``.
Targets: the dashboard within 2 s, exports at least 5,000 rounds/s.
"""

from __future__ import annotations

import json
import random
import resource
import statistics
import sys
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from bots.tournament import ProgressBar
from game import analytics, exports
from game.analytics import Filters
from game.engine import Match, Rules, record_of, view_for
from game.models import MatchResult, RoundRecordRow, Seat, Table
from game.storage import result_row, round_row_from_record

ROUNDS_PER_MATCH = 10
KINDS = ["BBBB", "HBBB", "BHBB", "BBHB", "BBBH", "HHBB", "HBHB", "HHHH", "HBBH"]
BOTS = ["BIS+SRP", "RB+SRP", "MS+SRP", "BIS+WRP", "RB+WRP"]
PREFIX = "bench-"


def _pool(matches: int, seed: str) -> list[dict[str, Any]]:
    """Round records of real matches between fast bots (RB+WRP vs MS+WRP)."""
    from bots.registry import make_bot

    bots = (make_bot("RB+WRP"), make_bot("MS+WRP"))
    records: list[dict[str, Any]] = []
    for g in range(matches):
        rules = Rules(winning_goal=200, losing_goal=-100) if g % 3 else Rules()
        match = Match(rules, f"{seed}/pool/{g}")
        rng = random.Random(f"{seed}/pool/{g}/bots")
        while not match.is_over and len(match.rounds) < 60:
            seat = match.round.to_act
            match.apply(bots[seat & 1].act(view_for(match, seat), rng))
        records += [record_of(r) for r in match.rounds if r.result is not None]
    return records


class Command(BaseCommand):
    help = "Fill the database with synthetic rounds and time the dashboard and the exports."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rounds", type=int, default=200_000)
        parser.add_argument("--pool-matches", type=int, default=30)
        parser.add_argument("--seed", default="bench")
        parser.add_argument("--keep", action="store_true", help="keep the bench rows")
        parser.add_argument(
            "--reuse",
            action="store_true",
            help="time the bench rows already stored (no fill; they are kept)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        vendor = connection.vendor
        if vendor != "postgresql":
            self.stderr.write(f"note: this is {vendor}, not PostgreSQL: figures will differ")
        if opts["rounds"] < ROUNDS_PER_MATCH:
            raise CommandError(f"--rounds must be at least {ROUNDS_PER_MATCH}")
        try:
            if not opts["reuse"]:
                self._fill(opts["rounds"], opts["pool_matches"], opts["seed"])
            self._time()
        finally:
            if not opts["keep"] and not opts["reuse"]:
                t0 = time.perf_counter()
                Table.objects.filter(public_id__startswith=PREFIX).delete()
                self.stdout.write(f"bench rows deleted in {time.perf_counter() - t0:.1f} s")

    def _fill(self, n_rounds: int, pool_matches: int, seed: str) -> None:
        t0 = time.perf_counter()
        records = _pool(pool_matches, seed)
        by_rules: dict[str, list[dict[str, Any]]] = {}
        for rec in records:
            by_rules.setdefault(json.dumps(rec["rules"], sort_keys=True), []).append(rec)
        pool = list(by_rules.values())
        self.stdout.write(
            f"pool: {len(records)} real rounds from {pool_matches} matches "
            f"in {time.perf_counter() - t0:.1f} s (seed {seed!r})"
        )
        rng = random.Random(seed)
        now = timezone.now()
        matches = n_rounds // ROUNDS_PER_MATCH
        bar = ProgressBar(matches, 0, getattr(self.stderr, "_out", sys.stderr))
        t0 = time.perf_counter()
        batch_tables = 500
        for start in range(0, matches, batch_tables):
            count = min(batch_tables, matches - start)
            with transaction.atomic():
                self._fill_batch(start, count, pool, rng, now)
            bar.update(count)
        bar.close()
        if connection.vendor == "postgresql":
            # A live database has autovacuum's statistics and visibility map (the
            # analyses read covering indexes only where pages are all-visible);
            # freshly bulk-loaded rows have neither yet.
            with connection.cursor() as cursor:
                for model in (Table, Seat, RoundRecordRow, MatchResult):
                    cursor.execute(
                        f"VACUUM ANALYZE {connection.ops.quote_name(model._meta.db_table)}"
                    )
        elapsed = time.perf_counter() - t0
        self.stdout.write(
            f"filled {matches * ROUNDS_PER_MATCH} rounds ({matches} matches) in {elapsed:.1f} s "
            f"({matches * ROUNDS_PER_MATCH / elapsed:,.0f} rounds/s)"
        )

    def _fill_batch(
        self,
        start: int,
        count: int,
        pool: list[list[dict[str, Any]]],
        rng: random.Random,
        now: Any,
    ) -> None:
        tables = []
        plans = []
        for i in range(start, start + count):
            kinds = rng.choice(KINDS)
            bots = [rng.choice(BOTS) if k == "B" else None for k in kinds]
            finished = now - timedelta(days=rng.uniform(0, 365))
            same_rules = pool[rng.randrange(len(pool))]
            first = rng.randrange(len(same_rules))
            recs = [same_rules[(first + k) % len(same_rules)] for k in range(ROUNDS_PER_MATCH)]
            rules = recs[0]["rules"]
            tables.append(
                Table(
                    public_id=f"{PREFIX}{i}",
                    rules=rules,
                    status=Table.Status.FINISHED,
                    finished_at=finished,
                    stand_in_bots=False,
                )  # fmt: skip
            )
            plans.append((kinds, bots, finished, recs))
        Table.objects.bulk_create(tables)
        seats: list[Seat] = []
        rows: list[RoundRecordRow] = []
        results: list[MatchResult] = []
        for table, (kinds, bots, finished, recs) in zip(tables, plans, strict=True):
            mine = {}
            for p, k in enumerate(kinds):
                seat = (
                    Seat(table=table, position=p, kind=Seat.Kind.BOT, bot_name=bots[p])
                    if k == "B"
                    else Seat(table=table, position=p, guest_id=f"bench-{rng.randrange(5000)}")
                )
                mine[p] = seat
                seats.append(seat)
            for n, rec in enumerate(recs, start=1):
                row = round_row_from_record(
                    rec, table=table, version=0, kinds=kinds, bot_names=bots,
                    finished_at=finished - timedelta(minutes=3 * (len(recs) - n)),
                )  # fmt: skip
                row.round_number = n
                rows.append(row)
            last = recs[-1]
            results.append(
                result_row(
                    table,
                    winner=rng.randrange(2),
                    scores=last["scores_after"],
                    bags=last["bags_after"],
                    rounds=len(recs),
                    version=0,
                    seats=mine,
                    finished_at=finished,
                )  # fmt: skip
            )
        Seat.objects.bulk_create(seats)
        RoundRecordRow.objects.bulk_create(rows, batch_size=1000)
        MatchResult.objects.bulk_create(results)

    def _time(self) -> None:
        rounds = RoundRecordRow.objects.count()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.stdout.write(
            f"database: {connection.vendor}, {rounds} rounds stored; process memory {rss:.0f} MB"
        )
        user, _ = get_user_model().objects.get_or_create(
            username="bench-dashboard-staff", defaults={"is_staff": True}
        )
        client = Client()
        client.force_login(user)
        allowed = settings.ALLOWED_HOSTS
        host = allowed[0] if allowed and allowed[0] not in ("*", ".localhost") else "localhost"
        for label, params in (
            ("dashboard, no filter", {}),
            ("dashboard, human+bot rounds of one bot", {"makeup": "HB", "bots": "BIS+SRP"}),
            ("dashboard, one month", {"date_from": (timezone.now() - timedelta(days=30)).date()}),
        ):
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                response = client.get("/dashboard/", params, HTTP_HOST=host)
                times.append(time.perf_counter() - t0)
                if response.status_code != 200:
                    raise CommandError(f"/dashboard/ answered {response.status_code}")
            median = statistics.median(times)
            verdict = "ok" if median <= 2.0 else "SLOWER than 2 s"
            self.stdout.write(
                f"{label}: median of 5 {median:.3f} s, best {min(times):.3f} s, "
                f"worst {max(times):.3f} s ({verdict})"
            )
        t0 = time.perf_counter()
        analytics.all_analyses(Filters(makeups=("HB",)))
        self.stdout.write(f"analyses alone (human+bot): {time.perf_counter() - t0:.3f} s")
        user.delete()
        for fmt, make in (("csv", exports.iter_csv), ("jsonl", exports.iter_jsonl)):
            t0 = time.perf_counter()
            size = 0
            for chunk in make(Filters()):
                size += len(chunk)
            elapsed = time.perf_counter() - t0
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            rate = rounds / elapsed if elapsed else 0.0
            verdict = "ok" if rate >= 5000 else "BELOW 5,000 rounds/s"
            self.stdout.write(
                f"export {fmt}: {rounds} rounds, {size / 1e6:.1f} MB in {elapsed:.1f} s "
                f"= {rate:,.0f} rounds/s ({verdict}); peak memory of the process {rss:.0f} MB"
            )
