"""Round rows written after the move (game/research/round_rows.py): a quick move that
ends a round stores a pending round; its record row, built from the log, is
the one the move would have written, written once, and never lost."""

from __future__ import annotations

import random
from typing import Any

import pytest

from game import master, seating
from game.driver import sweeper
from game.engine import Rules
from game.models import Action, PendingRound, RoundRecordRow, Table
from game.moves import matches
from game.research import exports, round_rows, tally_flush
from game.research.analytics import Filters
from game.research.storage import round_row
from tests.support.helpers import human_move, make_table

LONG = Rules(winning_goal=10_000, losing_goal=-10_000)

pytestmark = pytest.mark.django_db(transaction=True)


def play_rounds(table: Table, rounds: int, rng: random.Random, stand_in_at: set[int]) -> None:
    """Play until ``rounds`` rounds have ended; the moves at ``stand_in_at``
    versions are a stand-in's (the seat marked back after each)."""
    ended = 0
    while ended < rounds:
        table.refresh_from_db()
        seat, action = human_move(table, rng)
        by_stand_in = table.version + 1 in stand_in_at
        result = master.submit(table.pk, seat, action, table.version, by_stand_in=by_stand_in)
        if by_stand_in:
            seating.mark_back(table.pk, seat)
        ended += result.round_over


def unwritten(monkeypatch: pytest.MonkeyPatch, rounds: int, seed: int, **kw: Any) -> Table:
    """A table whose ``rounds`` first rounds ended and no flush ran (as if the
    process stopped right after each round's last card)."""
    monkeypatch.setattr(master.get().scheduler, "flush_soon", lambda table_id: None)
    table = make_table("HHHH", LONG, stand_in_bots=True)
    play_rounds(table, rounds, random.Random(seed), **kw)
    monkeypatch.undo()
    return table


def expected_row(table: Table, round_number: int, version: int) -> dict[str, Any]:
    """The row of a round as ``game.research.storage`` builds it from the replayed match."""
    match = matches.load_match(table, version)
    # The log's own count: a stand-in whose seat leads the next trick plays again.
    stand_ins = Action.objects.filter(table=table, round_number=round_number, by_stand_in=True)
    row = round_row(table, match.rounds[round_number - 1], version, {
        s.position: s for s in table.seats.all()}, stand_in_moves=stand_ins.count())  # fmt: skip
    return columns(row)


def columns(row: RoundRecordRow) -> dict[str, Any]:
    skip = {"id", "finished_at", "tallied", "stand_in_n", "stand_in_e", "stand_in_s",
            "stand_in_w", "stand_in_bids", "stand_in_round"}  # fmt: skip
    return {f.attname: getattr(row, f.attname) for f in row._meta.concrete_fields
            if f.attname not in skip}  # fmt: skip


def test_a_quick_round_end_stores_a_pending_round_whose_row_is_written_from_the_log(
    live: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = unwritten(monkeypatch, 2, seed=1, stand_in_at={9, 10, 11, 12})
    pending = list(PendingRound.objects.filter(table=table).order_by("round_number"))
    assert [p.round_number for p in pending] == [1, 2]
    assert [p.seat_kinds for p in pending] == ["HHHH", "HHHH"]
    assert not RoundRecordRow.objects.filter(table=table).exists()
    assert tally_flush.pending() == 2  # ended, not yet in the tallies
    matches.clear_cache()  # as in a Celery worker: the log replayed
    assert round_rows.record_pending() == 2
    assert not PendingRound.objects.exists()
    written = list(RoundRecordRow.objects.filter(table=table).order_by("round_number"))
    for p, row in zip(pending, written, strict=True):
        assert columns(row) == expected_row(table, p.round_number, p.version)
        assert row.finished_at == p.finished_at and not row.tallied
    # The stand-in's cards (four, or more when it led again) in round 1, none in round 2.
    assert written[0].stand_in_moves >= 4 and written[1].stand_in_moves == 0
    assert round_rows.record_pending() == 0  # once
    assert tally_flush.flush_pending() == 2 and tally_flush.pending() == 0


def test_a_pending_round_another_writer_took_is_left_to_it(
    live: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = unwritten(monkeypatch, 1, seed=2, stand_in_at=set())
    build = round_rows._rows

    def taken_meanwhile(pending: list[PendingRound], failed: set[int]) -> dict:
        built = build(pending, failed)
        PendingRound.objects.filter(table=table).delete()  # the other writer's transaction
        RoundRecordRow.objects.bulk_create(build_again.values())
        return built

    build_again = build(list(PendingRound.objects.filter(table=table)), set())
    monkeypatch.setattr(round_rows, "_rows", taken_meanwhile)
    assert round_rows.record_pending() == 0
    assert RoundRecordRow.objects.filter(table=table).count() == 1


def test_the_sweep_the_exports_and_the_dashboard_write_what_a_stopped_process_left(
    live: Any, monkeypatch: pytest.MonkeyPatch, admin_client: Any
) -> None:
    for write in (
        lambda: sweeper.sweep(),
        lambda: list(exports.iter_rounds(Filters())),
        lambda: admin_client.get("/dashboard/"),
    ):
        table = unwritten(monkeypatch, 1, seed=3, stand_in_at=set())
        assert PendingRound.objects.filter(table=table).exists()
        write()
        assert not PendingRound.objects.exists()
        assert RoundRecordRow.objects.filter(table=table).count() == 1


def test_a_round_keeps_who_sat_there_when_it_ended(
    live: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = unwritten(monkeypatch, 1, seed=4, stand_in_at=set())
    seating.hand_over(table.pk, 2)  # South leaves the match to a bot after the round
    round_rows.record_pending()
    row = RoundRecordRow.objects.get(table=table)
    assert row.seat_kinds == "HHHH" and row.bot_names == [None, None, None, None]


def test_a_round_whose_log_does_not_replay_stays_pending_and_holds_no_other_up(
    live: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken = unwritten(monkeypatch, 1, seed=5, stand_in_at=set())
    sound = unwritten(monkeypatch, 1, seed=6, stand_in_at=set())
    PendingRound.objects.filter(table=broken).update(version=9_999)  # past the log's end
    assert round_rows.record_pending(limit=1) == 1
    assert RoundRecordRow.objects.filter(table=sound).count() == 1
    assert PendingRound.objects.filter(table=broken).count() == 1  # kept, for a later look
    assert not RoundRecordRow.objects.filter(table=broken).exists()
    assert "the row of round 1 of table" in caplog.text
