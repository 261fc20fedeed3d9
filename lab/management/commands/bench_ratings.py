"""``manage.py bench_ratings``: the leaderboard and a profile on a big rating history.

    python manage.py bench_ratings --accounts 100000 --matches 1000000

Fills the database with ``--accounts`` accounts, each with a rating (random
mu, sigma and matches, a third under the leaderboard's minimum), five rated
bot kinds, and ``--matches`` finished tables each with one history row
(``RatingChange``) of a random account; the profiled account has ``--mine``
of those, with its seat and the match's result, so its profile lists games
and draws a chart of ``--mine`` points. Then it times ``/leaderboard/``,
``/profile/`` (that account, signed in) and, as the same run's reference,
the lobby's home page ``/``, through Django's test client: the median and
the slowest of ``--loads`` loads after a warm-up, and each page's ratio to
the home page. Target: both pages under 100 ms. The bench rows (usernames
and public ids ``bench-r-...``) are deleted afterwards unless ``--keep``.
The profile's play figures read the account's stored rounds (at most
``lobby.player_stats.ROUNDS``), which this fill does not make.
"""

from __future__ import annotations

import random
import statistics
import time
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone

from game.models import MatchResult, Seat, Table
from game.ratings import compute
from game.ratings.models import Rating, RatingChange

PREFIX = "bench-r-"
BATCH = 5000
BOTS = ["RB+WRP", "RB+SRP", "BIS+SRP", "NNB+SRP", "SIM75+SRP"]
TARGET = 0.100


class Command(BaseCommand):
    help = "Time /leaderboard/ and /profile/ on many rated accounts and matches."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--accounts", type=int, default=100_000)
        parser.add_argument("--matches", type=int, default=1_000_000)
        parser.add_argument("--mine", type=int, default=200, help="the profiled account's")
        parser.add_argument("--loads", type=int, default=20)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--keep", action="store_true")

    def handle(self, *args: Any, **opts: Any) -> None:
        rng = random.Random(opts["seed"])
        started = time.perf_counter()
        me = self.fill(rng, opts["accounts"], opts["matches"], min(opts["mine"], opts["matches"]))
        self.stdout.write(
            f"filled {opts['accounts']} accounts, {opts['matches']} matches "
            f"({connection.display_name}) in {time.perf_counter() - started:.1f} s"
        )
        try:
            self.time_pages(me, opts["loads"])
        finally:
            if not opts["keep"]:
                self.clean()
                self.stdout.write("bench rows deleted")

    def fill(self, rng: random.Random, accounts: int, matches: int, mine: int) -> Any:
        users = get_user_model()
        password = make_password(None)  # unusable: no hashing per account
        now = timezone.now()
        with transaction.atomic():
            for start in range(0, accounts, BATCH):
                users.objects.bulk_create(
                    users(username=f"{PREFIX}{i}", password=password)
                    for i in range(start, min(accounts, start + BATCH))
                )
            ids = list(
                users.objects.filter(username__startswith=PREFIX)
                .order_by("id")
                .values_list("id", flat=True)
            )
            ratings = []
            for uid in ids:
                mu, sigma = rng.gauss(25, 4), rng.uniform(0.8, 8.3)
                ratings.append(Rating(key=f"u:{uid}", kind="user", user_id=uid, mu=mu,
                                      sigma=sigma, conservative=compute.conservative(mu, sigma),
                                      matches=rng.randrange(0, 60), wins=0))  # fmt: skip
            for bot in BOTS:
                mu, sigma = rng.gauss(25, 3), rng.uniform(0.5, 2)
                ratings.append(Rating(key=f"b:{bot}", kind="bot", name=bot, mu=mu, sigma=sigma,
                                      conservative=compute.conservative(mu, sigma),
                                      matches=matches, wins=0))  # fmt: skip
            Rating.objects.bulk_create(ratings, batch_size=BATCH, ignore_conflicts=True)
            rating_ids = dict(Rating.objects.filter(user_id__in=ids).values_list("user_id", "id"))
            me = ids[0]
            for start in range(0, matches, BATCH):
                count = min(matches, start + BATCH) - start
                tables = Table.objects.bulk_create(
                    Table(public_id=f"{PREFIX}{start + i}", status=Table.Status.FINISHED,
                          finished_at=now - timedelta(minutes=matches - start - i))
                    for i in range(count)
                )  # fmt: skip
                changes, seats, results = [], [], []
                for i, table in enumerate(tables):
                    n = start + i
                    uid = me if n >= matches - mine else rng.choice(ids)
                    won = rng.random() < 0.5
                    mu0 = rng.gauss(25, 3)
                    changes.append(RatingChange(rating_id=rating_ids[uid], table_id=table.pk,
                                                finished_at=table.finished_at, mu_before=mu0,
                                                sigma_before=3.0, mu=mu0 + (1 if won else -1),
                                                sigma=2.9, won=won))  # fmt: skip
                    if uid == me:
                        seats.append(Seat(table_id=table.pk, position=2, user_id=me))
                        results.append(MatchResult(table_id=table.pk, winner=0 if won else 1,
                                                   score_ns=250, score_ew=120, bags_ns=3,
                                                   bags_ew=4, rounds=9, version=480))  # fmt: skip
                RatingChange.objects.bulk_create(changes)
                Seat.objects.bulk_create(seats)
                MatchResult.objects.bulk_create(results)
        return users.objects.get(pk=me)

    def time_pages(self, me: Any, loads: int) -> None:
        client = Client()
        client.force_login(me)
        medians = {}
        for url in ("/", "/leaderboard/", "/profile/"):
            response = client.get(url)  # the warm-up
            assert response.status_code == 200, (url, response.status_code)
            times = []
            for _ in range(max(1, loads)):
                t0 = time.perf_counter()
                client.get(url)
                times.append(time.perf_counter() - t0)
            medians[url] = statistics.median(times)
            ratio = medians[url] / medians["/"]
            self.stdout.write(
                f"{url}: median {medians[url] * 1000:.1f} ms, slowest {max(times) * 1000:.1f} ms "
                f"over {len(times)} loads; {ratio:.2f} x the home page"
                + ("" if url == "/" else f"; target {TARGET * 1000:.0f} ms "
                   + ("met" if medians[url] < TARGET else "MISSED"))
            )  # fmt: skip

    def clean(self) -> None:
        # The leaves first, each one DELETE: the tables' and accounts' own cascades
        # then find nothing (collecting a million tables' rows took longer than the fill).
        with transaction.atomic():
            bench_tables = {"table__public_id__startswith": PREFIX}
            for model in (RatingChange, MatchResult, Seat):
                model.objects.filter(**bench_tables).delete()
            Rating.objects.filter(user__username__startswith=PREFIX).delete()
            Table.objects.filter(public_id__startswith=PREFIX).delete()
            get_user_model().objects.filter(username__startswith=PREFIX).delete()
            Rating.objects.filter(key__in=[f"b:{b}" for b in BOTS], matches__gt=0).filter(
                changes__isnull=True
            ).delete()
