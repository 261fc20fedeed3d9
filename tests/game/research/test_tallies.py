"""The tallies are kept exact on every write path, and give the figures a scan of the rounds
gives: checked on random data (live moves with stand-ins, stored tournaments, imports with
varied seats, days and stand-in moves) against tallies.scan() and a count by hand."""

from __future__ import annotations

import csv
import importlib
import io
import json
import os
import random
import threading
import time
from dataclasses import replace
from datetime import date, timedelta
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from game import master, seating
from game.driver import sweeper
from game.engine import Rules
from game.models import Action, MatchResult, Rating, RoundRecordRow, RoundTally, Table
from game.research import analytics, exports, imports, tallies, tally_flush
from game.research.analytics import Filters
from game.research.round_columns import side_bot
from game.research.storage import store_match
from game.sql import connections
from tests.support.analytics_fixtures import varied_import
from tests.support.helpers import (
    QUICK_RULES,
    SHORT_RULES,
    human_move,
    make_table,
    play_humans,
    random_match,
)

pytestmark = pytest.mark.django_db


@pytest.mark.django_db(transaction=True)  # moves schedule the stand-in after their commit
def test_a_stand_in_bid_on_a_live_table_makes_a_stand_in_round(live: Any) -> None:
    rules = Rules(winning_goal=SHORT_RULES.winning_goal, losing_goal=SHORT_RULES.losing_goal,
                  blind_nil=False)  # fmt: skip
    table = make_table("HHHH", rules, stand_in_bots=True)
    assert live.run_timers() == 1  # the first bidder's timer runs out: the stand-in bids
    play_humans(table, random.Random(3))
    first = RoundRecordRow.objects.filter(table=table).order_by("round_number").first()
    assert first is not None
    bidder = "NESW".index(first.record["bids"][0]["seat"])
    assert first.stand_in_bids == "".join("1" if s == bidder else "0" for s in range(4))
    assert first.stand_in_round and first.stand_in_moves >= 1
    result = MatchResult.objects.get(table=table)
    assert result.stand_in_rounds >= 1
    assert tallies.stored() == tallies.scan()
    n = RoundRecordRow.objects.filter(table=table).count()
    left_out = RoundRecordRow.objects.filter(table=table, stand_in_round=True).count()
    s = analytics.summary(Filters())
    assert (s["rounds"], s["stand_in_rounds"], s["matches"]) == (n - left_out, left_out, 0)
    assert analytics.summary(Filters(stand_ins=True))["rounds"] == n
    row = _csv_rows(Filters(stand_ins=True))[0]
    assert row[f"actor_{'nesw'[bidder]}"] == "human+stand-in"
    assert row[f"stand_in_bid_{'nesw'[bidder]}"] == "1" and row["stand_in_round"] == "1"
    assert _csv_rows(Filters(makeups=("HH",))) == [
        r for r in _csv_rows(Filters(stand_ins=True)) if r["stand_in_round"] == "0"
    ]


def _csv_rows(f: Filters) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO("".join(exports.iter_csv(f)))))


def _by_hand(f: Filters) -> tuple[int, dict[tuple[int, str], list[int]]]:
    """Rounds with a measured partnership, and (round type, make-up) -> [n, won] of the
    measured partnerships, counted from the round rows one by one."""
    rounds = 0
    cells: dict[tuple[int, str], list[int]] = {}
    for r in replace(f, conditions=(), pilot=True).rounds():  # the study's filters by hand
        if (r.pilot and not f.pilot) or (f.conditions and r.study_condition not in f.conditions):
            continue
        measured = False
        for side, opp, seats in (("ns", "ew", "ns"), ("ew", "ns", "ew")):
            mk, bot = getattr(r, f"makeup_{side}"), getattr(r, f"bot_{side}")
            if (f.makeups and mk not in f.makeups) or (f.bot and bot != f.bot):
                continue
            if f.against and getattr(r, f"makeup_{opp}") not in f.against:
                continue
            if f.bands and getattr(r, f"band_{side}") not in f.bands:
                continue
            measured = True
            won = getattr(r, f"points_{side}") > getattr(r, f"points_{opp}")
            for t in {getattr(r, f"round_type_{s}") for s in seats}:
                c = cells.setdefault((t, mk), [0, 0])
                c[0] += 1
                c[1] += won
        rounds += measured
    return rounds, cells


def _play_with_timeouts(table: Table, rng: random.Random, live: Any) -> None:
    """Random moves, and now and then a human's timer runs out (a stand-in moves)."""
    table.refresh_from_db()
    while table.status == Table.Status.PLAYING:
        if not (rng.random() < 0.08 and live.run_timers()):
            seat, action = human_move(table, rng)
            master.submit(table.pk, seat, action, table.version)
        table.refresh_from_db()


@pytest.mark.django_db(transaction=True)
def _matches_by_hand(f: Filters) -> tuple[int, dict[tuple[int, str], list[int]]]:
    """Matches with a measured partnership, and (round type held, make-up) -> [n, won]."""
    types: dict[int, list[set[int]]] = {}
    for r in RoundRecordRow.objects.all():
        held = types.setdefault(r.table_id, [set(), set()])
        for p, s in enumerate("nesw"):
            held[p & 1].add(getattr(r, f"round_type_{s}"))
    matches = 0
    cells: dict[tuple[int, str], list[int]] = {}
    for m in MatchResult.objects.all():
        day = m.finished_at.date()
        if (f.date_from and day < f.date_from) or (f.date_to and day > f.date_to):
            continue
        if m.stand_in_rounds and not f.stand_ins:
            continue
        if (m.pilot and not f.pilot) or (f.conditions and m.study_condition not in f.conditions):
            continue
        measured = False
        for p, side, opp in ((0, "ns", "ew"), (1, "ew", "ns")):
            mk, bot = getattr(m, f"makeup_{side}"), side_bot(
                (getattr(m, f"bot_{'ne'[p]}"), getattr(m, f"bot_{'sw'[p]}")))  # fmt: skip
            if (f.makeups and mk not in f.makeups) or (f.bot and bot != f.bot):
                continue
            if f.against and getattr(m, f"makeup_{opp}") not in f.against:
                continue
            if f.bands and getattr(m, f"band_{side}") not in f.bands:
                continue
            measured = True
            for t in types.get(m.table_id, [set(), set()])[p]:
                c = cells.setdefault((t, mk), [0, 0])
                c[0] += 1
                c[1] += m.winner == p
        matches += measured
    return matches, cells


@pytest.mark.django_db(transaction=True)  # the flush follows the move's commit
def test_live_round_ends_add_to_the_flushing_process_shard_and_readers_sum_the_shards(
    live: Any,
) -> None:
    rng = random.Random(5)
    varied_import(rng)  # the bulk path: shard 0
    played = [make_table("HHHH", QUICK_RULES, stand_in_bots=False) for _ in range(3)]
    for table in played:
        play_humans(table, rng)
    assert len({tallies.shard_of(t.pk) for t in played}) == 3
    flushed = os.getpid() % tallies.SHARDS  # the flush ran here, after each round's move
    assert not RoundRecordRow.objects.filter(tallied=False).exists()
    for table in played:
        # Every cell of the first round's tallies is in the flushing process's shard.
        row = RoundRecordRow.objects.filter(table=table).order_by("round_number").first()
        assert row is not None
        for (span, start, *rest), sums in tallies.round_tallies([row]).items():
            held = RoundTally.objects.filter(
                **dict(zip(tallies.KEY, (span, start, *rest), strict=True)), shard=flushed
            ).values_list("n", flat=True)
            assert list(held) and held[0] >= sums[0]
    # A match's end adds to its table's shard, in the move's transaction.
    assert set(RoundTally.objects.values_list("shard", flat=True)) == {
        0,
        flushed,
        *(tallies.shard_of(t.pk) for t in played),
    }
    # A cell spread over shards reads as one: the same as a scan of the rows,
    # and as after a rebuild (which puts every cell in shard 0).
    spread = RoundTally.objects.values("figure", "span", "start", "rules_key", "makeup", "bot",
                                       "who", "a", "b").distinct().count()  # fmt: skip
    assert RoundTally.objects.count() > spread
    before = analytics.summary(Filters())
    assert tallies.stored() == tallies.scan()
    tallies.rebuild()
    assert set(RoundTally.objects.values_list("shard", flat=True)) == {0}
    assert analytics.summary(Filters()) == before


STUDY_KEYS = ((0, False), (7, False), (7, True), (8, False))  # (study condition, pilot)


def test_tallies_give_the_scans_figures_on_random_data(live: Any) -> None:
    rng = random.Random(20)
    varied_import(rng)
    # Imported tables of studies (as the migration of studies' older tables would mark them).
    # And rating bands (0 for a side with no human, as a live start gives it).
    for table in Table.objects.all():
        condition, pilot = rng.choice(STUDY_KEYS)
        kinds = "".join("H" if s.kind == "human" else "B" for s in table.seats.order_by("position"))
        band_ns, band_ew = (rng.randrange(5) if "H" in kinds[p::2] else 0 for p in (0, 1))
        for model in (Table, RoundRecordRow, MatchResult):
            rows = model.objects.filter(
                **({"pk": table.pk} if model is Table else {"table": table})
            )
            rows.update(study_condition=condition, pilot=pilot, band_ns=band_ns, band_ew=band_ew)
    tallies.rebuild()
    # The live tables' people: rated guests (conservative 3, 24, 16: bands 1, 4, 3) and
    # one with no rated match yet (left out of its side's band).
    for g, mu, sigma, n in (("g0", 15.0, 4.0, 3), ("g1", 30.0, 2.0, 40), ("g2", 25.0, 3.0, 9),
                            ("g3", 25.0, 25 / 3, 0)):  # fmt: skip
        Rating.objects.create(key=f"g:{g}", kind="guest", guest_id=g, mu=mu, sigma=sigma,
                              conservative=mu - 3 * sigma, matches=n)  # fmt: skip
    expected = iter(((2, 0), (1, 4)))  # HBHB: mean of 3 and 16; HHBB: g0, g1
    for kinds, (condition, pilot) in zip(("HBHB", "HHBB", "HHHH"), STUDY_KEYS[1:], strict=True):
        # A study's live table: its rounds and match carry its keys as they end.
        table = make_table(kinds, QUICK_RULES, bot="Random+Random", stand_in_bots=True, start=False)
        table.study_condition, table.pilot = condition, pilot
        table.save(update_fields=["study_condition", "pilot"])
        seating.start_table(table)
        table.refresh_from_db()
        if kinds != "HHHH":  # (the first match has changed g0's and g2's ratings by then)
            assert (table.band_ns, table.band_ew) == next(expected)
        _play_with_timeouts(table, rng, live)
        # Its rows carry its bands at the start, though its end changed the ratings.
        keys = {(table.band_ns, table.band_ew)}
        assert (
            set(RoundRecordRow.objects.filter(table=table).values_list("band_ns", "band_ew"))
            == keys
        )
        assert (
            set(MatchResult.objects.filter(table=table).values_list("band_ns", "band_ew")) == keys
        )
    assert set(RoundRecordRow.objects.values_list("study_condition", "pilot")) == set(STUDY_KEYS)
    assert RoundRecordRow.objects.filter(stand_in_round=True).exists()
    assert RoundRecordRow.objects.filter(stand_in_round=False).count() >= 40
    tally_flush.flush_pending()  # as the dashboard does before it reads
    assert tallies.stored() == tallies.scan()
    bots = sorted({b for b in RoundRecordRow.objects.values_list("bot_ns", flat=True) if b})
    for k in range(40):
        lo = date(2026, 1, 1) + timedelta(days=rng.randrange(100))
        f = Filters(
            date_from=lo if rng.random() < 0.6 else None,
            date_to=lo + timedelta(days=rng.randrange(70)) if rng.random() < 0.6 else None,
            bot=rng.choice(bots) if k % 3 == 0 else "",
            makeups=tuple(rng.sample(("BB", "HB", "HH"), rng.randrange(3))),
            against=tuple(rng.sample(("BB", "HB", "HH"), rng.randrange(3))),
            stand_ins=rng.random() < 0.5,
            conditions=tuple(rng.sample((0, 7, 8), rng.randrange(3))),
            pilot=rng.random() < 0.5,
            bands=tuple(sorted(rng.sample(range(5), rng.randrange(3)))),
        )
        rounds, cells = _by_hand(f)
        assert analytics.summary(f)["rounds"] == rounds, f
        table = analytics.round_type_win_rates(f)
        got = {(r["type"], mk): [r["by_kind"][mk]["n"], r["by_kind"][mk]["won"]]
               for r in table["rows"] for mk in ("BB", "HB", "HH")}  # fmt: skip
        assert {k: v for k, v in got.items() if v[0]} == cells, f
        assert analytics.bid_sum_distribution(f)["rounds"] == rounds
        matches, held = _matches_by_hand(f)
        assert analytics.summary(f)["matches"] == matches, f
        got = {(r["type"], mk): [r["matches_by_kind"][mk]["n"], r["matches_by_kind"][mk]["won"]]
               for r in table["rows"] for mk in ("BB", "HB", "HH")}  # fmt: skip
        assert {k: v for k, v in got.items() if v[0]} == held, f
    before = analytics.all_analyses(Filters(stand_ins=True, pilot=True), [(7, "a"), (8, "b")])
    RoundTally.objects.update(n=0)  # spoil them; the rebuild puts them right
    assert analytics.all_analyses(Filters(stand_ins=True, pilot=True)) != before
    with pytest.raises(CommandError, match="differ"):
        call_command("rebuild_tallies", "--check")
    out = io.StringIO()
    call_command("rebuild_tallies", stdout=out)
    assert "rebuilt" in out.getvalue()
    assert (
        analytics.all_analyses(Filters(stand_ins=True, pilot=True), [(7, "a"), (8, "b")]) == before
    )
    call_command("rebuild_tallies", "--check", stdout=out)
    assert "match the stored rows" in out.getvalue()


def test_bad_stand_in_fields_in_an_import_are_refused() -> None:
    store_match(random_match("bad-1"), ["RB+SRP"] * 4)
    lines = "".join(exports.iter_jsonl(Filters())).splitlines()
    Table.objects.all().delete()
    tallies.rebuild()
    item = json.loads(lines[0])
    item["seats"][1]["stand_in_plays"] = 14
    lines[0] = json.dumps(item)
    item = json.loads(lines[1])
    item["seats"][2]["stand_in_bid"] = "yes"
    lines[1] = json.dumps(item)
    with pytest.raises(imports.ImportFailed) as e:
        imports.import_jsonl(lines)
    assert e.value.errors == [
        "line 1: seat E: 'stand_in_plays' must be 0 to 13",
        "line 2: seat S: 'stand_in_bid' must be true or false",
    ]
    assert not RoundRecordRow.objects.exists() and not RoundTally.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_migrations_0007_and_0009_backfill_from_the_action_log_and_rounds(live: Any) -> None:
    rules = Rules(winning_goal=100, losing_goal=-100, blind_nil=False)
    table = make_table("HHBB", rules, stand_in_bots=True, bot="Random+Random")
    # The first human's timer runs out while bidding: a stand-in round whatever
    # the deal (the table's seed is random; by chance alone a match may have none).
    while not Action.objects.filter(table=table, by_stand_in=True).exists():
        assert live.run_timers()
    _play_with_timeouts(table, random.Random(5), live)
    columns = ["stand_in_n", "stand_in_e", "stand_in_s", "stand_in_w", "stand_in_bids",
               "stand_in_round", "bot_ns", "bot_ew"]  # fmt: skip
    before = list(RoundRecordRow.objects.order_by("pk").values(*columns))
    assert any(r["stand_in_round"] for r in before)
    results = list(MatchResult.objects.values_list("stand_in_rounds", "round_types_ns",
                                                   "round_types_ew"))  # fmt: skip
    assert [r[0] for r in results] == [sum(r["stand_in_round"] for r in before)]
    assert all("1" in r[1] and "1" in r[2] for r in results)
    cells = tallies.stored()
    RoundRecordRow.objects.update(stand_in_n=0, stand_in_e=0, stand_in_s=0, stand_in_w=0,
                                  stand_in_bids="0000", stand_in_round=False, bot_ns="",
                                  bot_ew="")  # fmt: skip
    MatchResult.objects.update(stand_in_rounds=0, round_types_ns="0" * 10, round_types_ew="0" * 10)
    RoundTally.objects.all().delete()
    for name in ("0007_who_played_and_tallies", "0009_match_round_types"):
        importlib.import_module(f"game.migrations.{name}").backfill(django_apps, None)
    assert list(RoundRecordRow.objects.order_by("pk").values(*columns)) == before
    assert list(MatchResult.objects.values_list("stand_in_rounds", "round_types_ns",
                                                "round_types_ew")) == results  # fmt: skip
    assert tallies.stored() == cells


def _round(points_ns: int, points_ew: int) -> dict[str, Any]:
    """A stored round's columns as round_cells reads them: 4 bids 3, made."""
    from game.research.round_columns import NIL_CATEGORIES, SEATS

    r: dict[str, Any] = {
        "rules_key": "k", "stand_in_round": False, "nil_category": NIL_CATEGORIES[0],
        "seat_kinds": "HBHB", "dealer": 0, "blind_nils": "0000",
        "points_ns": points_ns, "points_ew": points_ew,
    }  # fmt: skip
    for s in SEATS:
        r.update({f"bid_{s}": 3, f"tricks_{s}": 3, f"round_type_{s}": 1, f"bot_{s}": ""})
    for side in ("ns", "ew"):
        r.update({f"makeup_{side}": "HB", f"bot_{side}": "", f"made_{side}": True,
                  f"nil_bids_{side}": 0, f"nil_made_{side}": 0})  # fmt: skip
    return r


def test_a_tied_round_is_won_by_neither_partnership() -> None:
    from game.research.tally_keys import ROUND_TYPE, round_cells

    def won(r: dict[str, Any]) -> list[int]:
        return [sums[1] for key, sums in round_cells(r) if key[6] == ROUND_TYPE]

    assert won(_round(60, 60)) == [0, 0]
    assert won(_round(61, 60)) == [1, 0]
    assert won(_round(-10, 60)) == [0, 1]


# ----- live rounds: added by a flush after the move ------------------------------------------


def _play_unflushed(monkeypatch: pytest.MonkeyPatch, rng: random.Random) -> Table:
    """A match of four humans whose rounds no flush has added (as if the process
    stopped right after each round's move)."""
    monkeypatch.setattr(master.get().scheduler, "flush_soon", lambda table_id: None)
    table = play_humans(make_table("HHHH", QUICK_RULES, stand_in_bots=False), rng)
    monkeypatch.undo()
    return table


@pytest.mark.django_db(transaction=True)
def test_a_round_end_leaves_its_tallies_to_one_flush(
    live: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = _play_unflushed(monkeypatch, random.Random(21))
    rounds = RoundRecordRow.objects.filter(table=table).count()
    assert rounds >= 1 and tally_flush.pending() == rounds
    assert tallies.stored() != tallies.scan()  # the match's own cells are in, not its rounds
    assert tally_flush.flush_pending() == rounds
    assert tally_flush.pending() == 0 and tallies.stored() == tallies.scan()
    kept = tallies.stored()
    assert tally_flush.flush_pending() == 0 and tallies.stored() == kept  # never twice


@pytest.mark.django_db(transaction=True)
def test_the_sweep_the_dashboard_and_the_check_flush_what_a_stopped_process_left(
    live: Any, monkeypatch: pytest.MonkeyPatch, client: Any
) -> None:
    _play_unflushed(monkeypatch, random.Random(22))
    assert tally_flush.pending() > 0
    sweeper.sweep()
    assert tally_flush.pending() == 0 and tallies.stored() == tallies.scan()

    _play_unflushed(monkeypatch, random.Random(23))
    assert tally_flush.pending() > 0
    staff = get_user_model().objects.create_user("boss", password="pw-boss-123", is_staff=True)
    client.force_login(staff)
    assert client.get("/dashboard/").status_code == 200
    assert tally_flush.pending() == 0 and tallies.stored() == tallies.scan()

    _play_unflushed(monkeypatch, random.Random(26))
    left = tally_flush.pending()
    out = io.StringIO()
    call_command("rebuild_tallies", "--check", stdout=out)
    assert f"added {left} pending round(s)" in out.getvalue()
    assert "match the stored rows" in out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_a_rebuild_counts_pending_rounds_once(live: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _play_unflushed(monkeypatch, random.Random(24))
    assert tally_flush.pending() > 0
    tallies.rebuild()
    assert tally_flush.pending() == 0 and tallies.stored() == tallies.scan()
    assert tally_flush.flush_pending() == 0 and tallies.stored() == tallies.scan()


def _pending_while_flushing() -> int:
    """``tally_flush.pending()`` polled while the flush thread writes. The test
    database is SQLite in memory with a shared cache, where a read that meets
    another connection's write fails at once ("database table is locked")
    instead of waiting as a file database does: such a poll counts as not done."""
    from django.db import OperationalError

    try:
        return tally_flush.pending()
    except OperationalError as e:
        if "locked" not in str(e):
            raise
        return 1 << 30


@pytest.mark.django_db(transaction=True)
def test_a_process_flushes_its_round_ends_on_its_own_thread(
    live: Any, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    mine = _play_unflushed(monkeypatch, random.Random(25))
    theirs = _play_unflushed(monkeypatch, random.Random(27))  # another process's table
    left = RoundRecordRow.objects.filter(table=theirs).count()
    settings.SPADES_SCHEDULER = None  # threads, as in a server: the flush is not the caller's
    monkeypatch.setattr(tally_flush, "DELAY", 0.05)
    master.get().scheduler.flush_soon(mine.pk)
    deadline = time.monotonic() + 10
    while _pending_while_flushing() > left and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not RoundRecordRow.objects.filter(table=mine, tallied=False).exists()
    assert tally_flush.pending() == left  # the other process's rounds are left to it
    tally_flush.flush_pending()
    assert tallies.stored() == tallies.scan()


@pytest.mark.django_db(transaction=True)
def test_with_celery_workers_a_process_sends_its_batch_to_a_worker(
    live: Any, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """On the production stack the server process computes no tally: it sends
    the tables whose rounds ended in one task, which a worker runs."""
    first = _play_unflushed(monkeypatch, random.Random(28))
    second = _play_unflushed(monkeypatch, random.Random(29))
    pending = tally_flush.pending()
    settings.SPADES_BOTS_IN_PROCESS = False
    monkeypatch.setattr(tally_flush, "DELAY", 0.1)
    sent: list[tuple[str, list[Any], str]] = []
    monkeypatch.setattr(
        tally_flush.current_app,
        "send_task",
        lambda name, args, queue: sent.append((name, args, queue)),
    )
    master.get().scheduler.flush_soon(first.pk)
    master.get().scheduler.flush_soon(second.pk)
    deadline = time.monotonic() + 10
    while len(sent) < 2 and time.monotonic() < deadline:  # the tallies' and the analysis'
        time.sleep(0.02)
    time.sleep(0.2)  # no third task, and nothing flushed here
    tables = [sorted([first.pk, second.pk])]
    flushes = [s for s in sent if s[0] == tally_flush.FLUSH_TASK]
    assert flushes == [(tally_flush.FLUSH_TASK, tables, "bots")]
    # The same round ends go to the replays' queue for their analysis (game.replays).
    analyses = [s for s in sent if s[0] != tally_flush.FLUSH_TASK]
    assert analyses == [("game.replays.analyse_tables", tables, "replays")]
    assert tally_flush.pending() == pending
    # The worker's side: the task adds exactly those tables' rounds.
    assert tally_flush.flush_tables(*flushes[0][1]) == pending
    assert tally_flush.pending() == 0 and tallies.stored() == tallies.scan()


@pytest.mark.django_db(transaction=True)
def test_a_live_flush_adds_its_rounds_a_few_at_a_time(
    live: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hundred rounds flushed at once were a burst of CPU the moves queued
    behind: a live flush takes a few rounds per transaction, pausing between
    (on SQLite, the test database, SQLITE_BATCH: fewer, since each holds the
    write lock the moves wait for)."""
    tables = [_play_unflushed(monkeypatch, random.Random(seed)) for seed in (30, 31, 32)]
    pending = tally_flush.pending()
    assert pending >= 3
    assert tally_flush.live_steps() == (tally_flush.SQLITE_BATCH, tally_flush.SQLITE_PAUSE)
    monkeypatch.setattr(tally_flush, "SQLITE_BATCH", 2)
    batches: list[int] = []
    add = tally_flush._add
    monkeypatch.setattr(tally_flush, "_add", lambda found: batches.append(len(found)) or add(found))
    pauses: list[float] = []
    # This thread's pauses only: a flush thread left by an earlier test may be
    # sleeping between its own batches meanwhile (it once added a pause here).
    this_thread, real_sleep = threading.get_ident(), time.sleep

    def sleep(seconds: float) -> None:
        if threading.get_ident() == this_thread:
            pauses.append(seconds)
        else:
            real_sleep(seconds)

    monkeypatch.setattr(tally_flush.time, "sleep", sleep)
    assert tally_flush.flush_tables([t.pk for t in tables]) == pending
    assert max(batches) == 2 and sum(batches) == pending
    # A pause after each full batch (the last read may find nothing left).
    assert pauses == [tally_flush.SQLITE_PAUSE] * sum(n == 2 for n in batches)
    assert tally_flush.pending() == 0 and tallies.stored() == tallies.scan()


def test_a_live_flush_steps_shorter_on_sqlite_whose_one_write_lock_the_moves_wait_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sqlite = tally_flush.live_steps()  # the test database's features
    monkeypatch.setattr(tally_flush, "features", lambda: connections.Features(row_locks=True))
    postgres = tally_flush.live_steps()
    assert sqlite == (tally_flush.SQLITE_BATCH, tally_flush.SQLITE_PAUSE)
    assert postgres == (tally_flush.LIVE_BATCH, tally_flush.LIVE_PAUSE)
    assert sqlite[0] < postgres[0]
    # The same pace, rounds per second of pauses.
    assert sqlite[0] / sqlite[1] == postgres[0] / postgres[1]
