"""``manage.py bench_dashboard``: the dashboard and the exports on a big round log.

    DATABASE_URL=postgres://... python manage.py migrate
    DATABASE_URL=postgres://... python manage.py bench_dashboard --rounds 2000000

Fills the database with synthetic but valid rounds: a pool of real
bot-vs-bot rounds is played (``--pool-matches`` matches, seeded) and each
stored row takes one of those records, with its own seats (a varied mix of
humans and bots, one bot kind per partnership but for ``MIXED_SHARE`` of them),
stand-in moves for a few human seat-rounds, and finish times over a year;
tables of ``ROUNDS_PER_MATCH`` rounds get a match result; one table in
``STUDY_EVERY`` is a table of the bench study (``bench-study``, two
conditions; one of its tables in ``PILOT_EVERY`` pilot data); sides with people
take the rating bands in turn. Every round has a double-dummy analysis
(``RoundAnalysis``) but one in ``UNANALYSED_EVERY`` (not analysed yet) and one in
``FAILED_EVERY`` (could not be analysed): made up, not solved (a solve takes a
second a round), each card of a pool round giving away points and tricks drawn
from a seeded distribution (:func:`_made_up_analysis`), so the dashboard's card
play quality table has its tallies and the exports their figures. On PostgreSQL the
rows go in with COPY (the fast bulk path) and the tallies are then rebuilt
(``tallies.rebuild``, timed: it is ``manage.py rebuild_tallies``); elsewhere
with ``bulk_create`` and the tallies added batch by batch, as the imports do.
Then it times the dashboard page (as a staff user, through Django's test
client; the median of ``--loads`` loads after a warm-up), unfiltered and
with each one filter (the study's and its per-condition table among them),
and both exports (rounds/s). The bench tables (public ids ``bench-...``) and
study are deleted afterwards unless ``--keep`` (and the tallies rebuilt).
Targets: the dashboard's median under 300 ms unfiltered and under 500 ms with
one filter; exports at least 10,000 rounds/s.
"""

from __future__ import annotations

import json
import random
import re
import resource
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, models, transaction
from django.test import Client
from django.utils import timezone

from game.engine import Match, Rules, record_of, view_for
from game.models import MatchResult, RoundRecordRow, RoundTally, Seat, Table
from game.replays.analysis import FORMAT, seat_losses
from game.replays.models import RoundAnalysis
from game.research import exports, tallies
from game.research.analytics import Filters
from game.research.round_columns import (
    ROUND_TYPE_BY_LABEL,
    held_round_types,
    result_values,
    round_values,
)
from game.research.storage import result_row, round_row_from_record
from lab.tournaments.tournament import ProgressBar
from studies.models import Study

ROUNDS_PER_MATCH = 10
KINDS = ["BBBB", "HBBB", "BHBB", "BBHB", "BBBH", "HHBB", "HBHB", "HHHH", "HBBH"]
BOTS = ["BIS+SRP", "RB+SRP", "MS+SRP", "BIS+WRP", "RB+WRP"]
MIXED_SHARE = 0.1  # bot+bot partnerships of two different bots
STAND_IN_BID, STAND_IN_PLAYS = 0.02, 0.02  # of human seat-rounds: a stand-in bid / 5 cards
PREFIX = "bench-"
TARGET_UNFILTERED, TARGET_FILTERED, TARGET_EXPORT = 0.300, 0.500, 10_000
BATCH_TABLES = 2000
STUDY_EVERY, PILOT_EVERY = 20, 5  # a study's table; of those, a pilot one
BENCH_STUDY = "bench-study"
ROUNDS_SHOWN = re.compile(r'id="dash-total"><strong>(\d+)</strong> rounds')
ANALYSED_SHOWN = re.compile(r'id="quality-analysed"><strong>(\d+)</strong>')
UNANALYSED_EVERY, FAILED_EVERY = 100, 1000  # of the rounds: no analysis yet; a failed one

Plan = tuple[str, list[str | None], Any, list[dict[str, Any]], list[tuple[list[int], str]], int]


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


def _plan(rng: random.Random, pool: list[list[dict[str, Any]]], now: Any) -> Plan:
    """One bench table: seat kinds, bots, finish time, its rounds' records and stand-ins."""
    kinds = rng.choice(KINDS)
    side_bots = [rng.choice(BOTS), rng.choice(BOTS)]
    bots: list[str | None] = []
    for p, k in enumerate(kinds):
        mixed = p >= 2 and rng.random() < MIXED_SHARE
        bots.append((rng.choice(BOTS) if mixed else side_bots[p & 1]) if k == "B" else None)
    finished = now - timedelta(days=rng.uniform(0, 365))
    same_rules = pool[rng.randrange(len(pool))]
    first = rng.randrange(len(same_rules))
    recs = [same_rules[(first + k) % len(same_rules)] for k in range(ROUNDS_PER_MATCH)]
    stand_ins = []
    for _ in recs:
        plays, bids = [0, 0, 0, 0], ["0"] * 4
        for p, k in enumerate(kinds):
            if k == "H" and rng.random() < STAND_IN_BID:
                bids[p] = "1"
            if k == "H" and rng.random() < STAND_IN_PLAYS:
                plays[p] = 5
        stand_ins.append((plays, "".join(bids)))
    return kinds, bots, finished, recs, stand_ins, rng.randrange(2)


def _made_up_analysis(record: dict[str, Any]) -> dict[str, Any]:
    """A pool round's stand-in for its double-dummy analysis (seeded by the round):
    per card 0 points given away mostly, a few small (1-9), fewer large (10-120)."""
    rng = random.Random(json.dumps(record["tricks"]))
    cards = []
    for trick in record["tricks"]:
        leader = "NESW".index(trick["leader"])
        for k, card in enumerate(trick["cards"]):
            x = rng.random()
            points = 0 if x < 0.8 else rng.randint(1, 9) if x < 0.93 else rng.randint(10, 120)
            lost = int(points >= 10 and rng.random() < 0.6)
            cards.append({"seat": "NESW"[(leader + k) % 4], "card": card,
                          "points_lost": points, "tricks_lost": lost})  # fmt: skip
    return {"format": FORMAT, "made_up": "bench_dashboard", "cards": cards, "makeable": [7, 6]}


class _Analyses:
    """The bench's analyses: one made-up result per pool round (shared, so COPY
    writes its JSON text once), and which rounds have none or a failed one."""

    def __init__(self) -> None:
        self.made: dict[int, tuple[dict[str, Any], dict[str, list[int]]]] = {}
        self.rounds = 0

    def next(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """The next round's RoundAnalysis columns, None for one not analysed yet."""
        self.rounds += 1
        if self.rounds % UNANALYSED_EVERY == 0:
            return None
        if self.rounds % FAILED_EVERY == FAILED_EVERY // 2:
            return {"format": FORMAT, "seconds": 0.0, "result": None, "losses": None,
                    "error": "made up: the round does not replay"}  # fmt: skip
        made = self.made.get(id(record))
        if made is None:
            result = _made_up_analysis(record)
            made = self.made[id(record)] = (result, seat_losses(result))
        return {"format": FORMAT, "seconds": 0.0, "result": made[0], "losses": made[1],
                "error": ""}  # fmt: skip


def _bench_conditions() -> list[int]:
    """The bench study's two conditions (made if need be): real rows, so that the
    dashboard's filters offer them (``studies.dashboard_keys``)."""
    from studies.models import Condition, Study

    study, _ = Study.objects.get_or_create(
        slug=BENCH_STUDY,
        defaults={"title": "Bench study", "source": "", "source_name": "bench_dashboard",
                  "definition": {}, "definition_hash": "", "seed": 0},
    )  # fmt: skip
    plan = ["participant", "BIS+SRP", "participant", "BIS+SRP"]
    return [
        Condition.objects.get_or_create(
            study=study, position=k, defaults={"name": f"bench-{k}", "seat_plan": plan}
        )[0].pk
        for k in range(2)
    ]


def _study_of(i: int, conditions: list[int], kinds: str) -> dict[str, Any]:
    """The bench table ``i``'s study and rating band columns (a side with people in
    band 0 to the last in turn, a side of bots in 0)."""
    top = len(settings.SPADES_RATING_BANDS) + 1
    keys: dict[str, Any] = {f"band_{side}": (i + p) % top if "H" in kinds[p::2] else 0
                            for p, side in enumerate(("ns", "ew"))}  # fmt: skip
    if i % STUDY_EVERY:
        return {"study_condition": 0, "pilot": False, **keys}
    k = i // STUDY_EVERY
    return {"study_condition": conditions[k % 2], "pilot": k % PILOT_EVERY == 0, **keys}


def _held(recs: list[dict[str, Any]]) -> tuple[str, str]:
    return held_round_types([ROUND_TYPE_BY_LABEL[t] for t in r["round_types"]] for r in recs)


def _copy_text(value: Any) -> str:
    """A value in COPY's text format (the bench's values have no tabs or newlines)."""
    if value is None:
        return "\\N"
    if value is True:
        return "t"
    if value is False:
        return "f"
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":")).replace("\\", "\\\\")
    return str(value)


class _Copier:
    """Rows of one model streamed into PostgreSQL with COPY, ids given here.

    The columns are the model's: a column the bench gives no value takes the
    field's default (or NULL where it may be null), so a column added later
    needs no change here; one with neither, or a value for a column the model
    no longer has, stops the bench with the field's name."""

    def __init__(self, model: type[models.Model], cursor: Any) -> None:
        self.model = model
        self.fields = list(model._meta.concrete_fields)
        self.names = {f.attname for f in self.fields}
        self.numbered = model._meta.pk.attname == "id"  # else keyed by another row's id
        if self.numbered:
            cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {model._meta.db_table}")
            self.next_id = cursor.fetchone()[0] + 1
        self.lines: list[str] = []
        self.cached: dict[int, str] = {}  # JSON text of the pool's records, by id()

    def add(self, values: dict[str, Any], json_fields: tuple[str, ...] = ()) -> int:
        if self.numbered:
            values["id"] = self.next_id
            self.next_id += 1
        pk = values[self.model._meta.pk.attname]
        unknown = values.keys() - self.names
        if unknown:
            raise CommandError(
                f"bench_dashboard: {self.model.__name__} has no column {sorted(unknown)}"
            )
        out = []
        for field in self.fields:
            name = field.attname
            v = values[name] if name in values else self.default(field)
            if name in json_fields:
                text = self.cached.get(id(v))
                if text is None:
                    text = self.cached[id(v)] = _copy_text(v)
                out.append(text)
            else:
                out.append(_copy_text(v))
        self.lines.append("\t".join(out))
        return pk

    def default(self, field: models.Field) -> Any:
        if field.has_default():
            return field.get_default()
        if field.null:
            return None
        raise CommandError(
            f"bench_dashboard: no value for {self.model.__name__}.{field.attname}, a column "
            "with no default: give it one in bench_dashboard's _copy_batch"
        )

    def flush(self, cursor: Any) -> None:
        if not self.lines:
            return
        columns = ", ".join(connection.ops.quote_name(f.column) for f in self.fields)
        table = self.model._meta.db_table
        with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            copy.write("\n".join(self.lines) + "\n")
        self.lines = []

    def finish(self, cursor: Any) -> None:
        self.flush(cursor)
        if not self.numbered:
            return
        table = self.model._meta.db_table
        cursor.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
            f"(SELECT COALESCE(MAX(id), 1) FROM {table}))"
        )


class Command(BaseCommand):
    help = "Fill the database with synthetic rounds and time the dashboard and the exports."
    conditions: list[int]  # the bench study's

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rounds", type=int, default=200_000)
        parser.add_argument("--pool-matches", type=int, default=30)
        parser.add_argument("--seed", default="bench")
        parser.add_argument("--loads", type=int, default=7, help="dashboard loads per filter")
        parser.add_argument("--keep", action="store_true", help="keep the bench rows")
        parser.add_argument(
            "--reuse",
            action="store_true",
            help="time the bench rows already stored (no fill; they are kept)",
        )
        parser.add_argument("--no-exports", action="store_true", help="skip the export timing")

    def handle(self, *args: Any, **opts: Any) -> None:
        vendor = connection.vendor
        if vendor != "postgresql":
            self.stderr.write(f"note: this is {vendor}, not PostgreSQL: figures will differ")
        if opts["rounds"] < ROUNDS_PER_MATCH:
            raise CommandError(f"--rounds must be at least {ROUNDS_PER_MATCH}")
        if not opts["reuse"] and Table.objects.filter(public_id__startswith=PREFIX).exists():
            # A fill would collide with their public ids, and the clean-up delete them.
            raise CommandError(
                f"tables {PREFIX}... of a --keep run are stored: time them with --reuse, or "
                "delete them (Table.objects.filter(public_id__startswith="
                f"{PREFIX!r}).delete() in manage.py shell, then manage.py rebuild_tallies)"
            )
        self.conditions = _bench_conditions()
        try:
            if not opts["reuse"]:
                self._fill(opts["rounds"], opts["pool_matches"], opts["seed"])
            self._time(opts["loads"], not opts["no_exports"])
        finally:
            if not opts["keep"] and not opts["reuse"]:
                t0 = time.perf_counter()
                Table.objects.filter(public_id__startswith=PREFIX).delete()
                Study.objects.filter(slug=BENCH_STUDY).delete()
                tallies.rebuild()  # the bench rows were deleted outside the write paths
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
        copying = connection.vendor == "postgresql"
        self.analyses = _Analyses()
        fill: Callable[[list[Plan], int], None] = self._copy_batch if copying else self._orm_batch
        done = 0
        for start in range(0, matches, BATCH_TABLES):
            count = min(BATCH_TABLES, matches - start)
            batch = [_plan(rng, pool, now) for _ in range(count)]
            with transaction.atomic():
                fill(batch, start)
            done += count
            bar.update(count)
        bar.close()
        elapsed = time.perf_counter() - t0
        self.stdout.write(
            f"filled {done * ROUNDS_PER_MATCH} rounds ({done} matches) in {elapsed:.1f} s "
            f"({done * ROUNDS_PER_MATCH / elapsed:,.0f} rounds/s, "
            f"{'COPY' if copying else 'bulk_create with the tallies'})"
        )
        if copying:
            t0 = time.perf_counter()
            cells = tallies.rebuild()
            self.stdout.write(
                f"rebuild_tallies: {cells} tallies from {done * ROUNDS_PER_MATCH} rounds "
                f"in {time.perf_counter() - t0:.1f} s"
            )
            # A live database has autovacuum's statistics and visibility map; freshly
            # bulk-loaded rows have neither yet.
            with connection.cursor() as cursor:
                for model in (Table, Seat, RoundRecordRow, RoundAnalysis, MatchResult, RoundTally):
                    cursor.execute(
                        f"VACUUM ANALYZE {connection.ops.quote_name(model._meta.db_table)}"
                    )

    def _copy_batch(self, batch: list[Plan], start: int) -> None:
        with connection.cursor() as cursor:
            bench_models = (Table, Seat, RoundRecordRow, RoundAnalysis, MatchResult)
            copiers = {m: _Copier(m, cursor) for m in bench_models}
            for i, (kinds, bots, finished, recs, stand_ins, winner) in enumerate(batch, start):
                rules = recs[0]["rules"]
                study = _study_of(i, self.conditions, kinds)
                table_id = copiers[Table].add(
                    {"public_id": f"{PREFIX}{i}", "created_at": finished, "started_at": finished,
                     "finished_at": finished, "host_id": None, "rules": rules,
                     "status": Table.Status.FINISHED.value, "seed": f"{PREFIX}{i}",
                     "version": 0, "invite_token": f"{PREFIX}{i}-token", "turn_seconds": 30,
                     "stand_in_bots": False, "bot_delay": None, "turn_started_at": None,
                     "last_human_at": finished, **study},
                    ("rules",),
                )  # fmt: skip
                for p, k in enumerate(kinds):
                    copiers[Seat].add(
                        {"table_id": table_id, "position": p, "kind": "bot" if k == "B"
                         else "human", "user_id": None,
                         "guest_id": "" if k == "B" else f"bench-{(i * 4 + p) % 5000}",
                         "guest_name": "", "bot_name": bots[p] or "", "away": False,
                         "played_for": []},
                    )  # fmt: skip
                stand_in_rounds = 0
                for n, (rec, (plays, bids)) in enumerate(zip(recs, stand_ins, strict=True), 1):
                    values = round_values(
                        rec, version=0, kinds=kinds, bot_names=bots,
                        finished_at=finished - timedelta(minutes=3 * (len(recs) - n)),
                        stand_in_moves=sum(plays) + bids.count("1"), stand_in_plays=plays,
                        stand_in_bids=bids,
                    )  # fmt: skip
                    values.update(table_id=table_id, round_number=n, **study)
                    stand_in_rounds += values["stand_in_round"]
                    round_id = copiers[RoundRecordRow].add(values, ("record", "rules"))
                    analysis = self.analyses.next(rec)
                    if analysis is not None:
                        analysis.update(round_id=round_id, analysed_at=values["finished_at"])
                        copiers[RoundAnalysis].add(analysis, ("result", "losses"))
                last = recs[-1]
                result = result_values(
                    rules, winner=winner, scores=last["scores_after"], bags=last["bags_after"],
                    rounds=len(recs), version=0, kinds=kinds, bot_names=bots,
                    finished_at=finished, stand_in_rounds=stand_in_rounds,
                    round_types=_held(recs),
                )  # fmt: skip
                result.update(table_id=table_id, **study)
                copiers[MatchResult].add(result)
            for copier in copiers.values():
                copier.finish(cursor)

    def _orm_batch(self, batch: list[Plan], start: int) -> None:
        tables = [
            Table(public_id=f"{PREFIX}{i}", rules=recs[0]["rules"], finished_at=finished,
                  status=Table.Status.FINISHED, stand_in_bots=False,
                  **_study_of(i, self.conditions, kinds))
            for i, (kinds, _, finished, recs, _, _) in enumerate(batch, start)
        ]  # fmt: skip
        Table.objects.bulk_create(tables)
        seats: list[Seat] = []
        rows: list[RoundRecordRow] = []
        results: list[MatchResult] = []
        for table, (kinds, bots, finished, recs, stand_ins, winner) in zip(tables, batch,
                                                                          strict=True):  # fmt: skip
            mine = {}
            for p, k in enumerate(kinds):
                seat = (
                    Seat(table=table, position=p, kind=Seat.Kind.BOT, bot_name=bots[p])
                    if k == "B"
                    else Seat(table=table, position=p, guest_id=f"bench-{p}")
                )
                mine[p] = seat
                seats.append(seat)
            for n, (rec, (plays, bids)) in enumerate(zip(recs, stand_ins, strict=True), 1):
                row = round_row_from_record(
                    rec, table=table, version=0, kinds=kinds, bot_names=bots,
                    finished_at=finished - timedelta(minutes=3 * (len(recs) - n)),
                    stand_in_plays=plays, stand_in_bids=bids,
                )  # fmt: skip
                row.round_number = n
                row.study_condition, row.pilot = table.study_condition, table.pilot
                row.band_ns, row.band_ew = table.band_ns, table.band_ew
                rows.append(row)
            last = recs[-1]
            result = result_row(
                table, winner=winner, scores=last["scores_after"], bags=last["bags_after"],
                rounds=len(recs), version=0, seats=mine, finished_at=finished,
                round_types=_held(recs),
            )  # fmt: skip
            result.stand_in_rounds = sum(r.stand_in_round for r in rows[-len(recs) :])
            result.study_condition, result.pilot = table.study_condition, table.pilot
            result.band_ns, result.band_ew = table.band_ns, table.band_ew
            results.append(result)
        Seat.objects.bulk_create(seats)
        RoundRecordRow.objects.bulk_create(rows, batch_size=1000)
        MatchResult.objects.bulk_create(results)
        tallies.add_rounds(rows)
        tallies.add_matches(results)
        analysed = [(row, self.analyses.next(row.record)) for row in rows]
        stored = [RoundAnalysis(round=row, **a) for row, a in analysed if a is not None]
        RoundAnalysis.objects.bulk_create(stored, batch_size=1000)
        tallies.add_analyses((a.round, a.losses) for a in stored)

    def _time(self, loads: int, with_exports: bool) -> None:
        rounds = RoundRecordRow.objects.count()
        cells = RoundTally.objects.count()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.stdout.write(
            f"database: {connection.vendor}, {rounds} rounds stored, {cells} tallies; "
            f"process memory {rss:.0f} MB"
        )
        user, _ = get_user_model().objects.get_or_create(
            username="bench-dashboard-staff", defaults={"is_staff": True}
        )
        client = Client()
        client.force_login(user)
        allowed = settings.ALLOWED_HOSTS
        host = allowed[0] if allowed and allowed[0] not in ("*", ".localhost") else "localhost"
        today = timezone.localdate()
        some_rules = RoundTally.objects.filter(span="a").values_list("rules_key", flat=True)[:1]
        cases: list[tuple[str, dict[str, Any], float]] = [
            ("no filter", {}, TARGET_UNFILTERED),
            ("bot = BIS+SRP", {"bot": "BIS+SRP"}, TARGET_FILTERED),
            ("measured make-up = human+bot", {"makeup": "HB"}, TARGET_FILTERED),
            ("against bot+bot", {"against": "BB"}, TARGET_FILTERED),
            ("one month (the last 30 days)", {"date_from": today - timedelta(days=30),
                                              "date_to": today}, TARGET_FILTERED),
            ("a quarter across months (days at both ends)",
             {"date_from": today - timedelta(days=120), "date_to": today - timedelta(days=25)},
             TARGET_FILTERED),
            ("one rule set", {"rules": some_rules[0] if some_rules else ""}, TARGET_FILTERED),
            ("stand-in rounds included", {"stand_ins": "on"}, TARGET_FILTERED),
            ("BIS+SRP human+bot v bot+bot (three filters)",
             {"bot": "BIS+SRP", "makeup": "HB", "against": "BB"}, TARGET_FILTERED),
            ("a study, with its per-condition table", {"study": BENCH_STUDY}, TARGET_FILTERED),
            ("one study condition", {"condition": str(self.conditions[1])}, TARGET_FILTERED),
            ("pilot data included", {"pilot": "on"}, TARGET_FILTERED),
            ("one rating band", {"band": "2"}, TARGET_FILTERED),
        ]  # fmt: skip
        for label, params, target in cases:
            times = []
            for k in range(loads + 1):
                t0 = time.perf_counter()
                response = client.get("/dashboard/", params, HTTP_HOST=host)
                if k:  # the first load warms this process's caches: not counted
                    times.append(time.perf_counter() - t0)
                shown = ROUNDS_SHOWN.search(response.content.decode())
                analysed = ANALYSED_SHOWN.search(response.content.decode())
                if response.status_code != 200 or shown is None or analysed is None:
                    raise CommandError(f"/dashboard/ answered {response.status_code} to {params}")
            median = statistics.median(times)
            verdict = "ok" if median <= target else f"SLOWER than {target * 1000:.0f} ms"
            n = int(shown.group(1))
            self.stdout.write(
                f"dashboard, {label}: median of {loads} {median * 1000:.0f} ms, best "
                f"{min(times) * 1000:.0f} ms, worst {max(times) * 1000:.0f} ms; {n} rounds, "
                f"{analysed.group(1)} analysed ({verdict})"
            )
        user.delete()
        if not with_exports:
            return
        everything = Filters(stand_ins=True, pilot=True)
        for fmt, make in (("csv", exports.iter_csv), ("jsonl", exports.iter_jsonl)):
            t0 = time.perf_counter()
            size = 0
            for chunk in make(everything):
                size += len(chunk)
            elapsed = time.perf_counter() - t0
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            rate = rounds / elapsed if elapsed else 0.0
            verdict = "ok" if rate >= TARGET_EXPORT else f"BELOW {TARGET_EXPORT:,} rounds/s"
            self.stdout.write(
                f"export {fmt}: {rounds} rounds, {size / 1e6:.1f} MB in {elapsed:.1f} s "
                f"= {rate:,.0f} rounds/s ({verdict}); peak memory of the process {rss:.0f} MB"
            )
