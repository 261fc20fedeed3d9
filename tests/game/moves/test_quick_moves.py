"""The quick move: a move made from the table and seats this process's last move
of the table left, saved by one statement (``game.moves.move``, ``game.moves.move.quick_step``,
``rows.quick_move_query``).

It must make exactly the move the full path makes, and fall back to the full
path whenever the remembered rows may be old: another process moved, a seat
changed, a round ends, the action is refused."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from django.utils import timezone

from game import master, seating
from game.engine import Bid, Rules, view_for
from game.models import Action, PendingRound, RoundRecordRow, Seat, Table
from game.moves import matches, move
from game.sockets import frames
from lab.stack import stackprocs
from tests.support import SUPPORT, services
from tests.support.helpers import make_table
from tests.support.inline import InlineScheduler

SCRIPT = SUPPORT / "quick_moves_pg_script.py"
LONG = Rules(winning_goal=10_000, losing_goal=-10_000)


def remembered(table: Table) -> tuple[Any, matches.Rows]:
    """The match this process keeps at the table's version, and the table's rows."""
    table.refresh_from_db()
    entry, known = matches.cached(table.pk, table.version), matches.remembered_rows(table.pk)
    assert entry is not None and known is not None
    return entry.match, known


def full_step(table: Table, seat: int, action: Any, by_stand_in: bool = False) -> move.Outcome:
    """Step 2 as the full path runs it: on the rows read from the database."""
    table = Table.objects.get(pk=table.pk)
    now = timezone.now()
    table.version, table.turn_started_at = table.version + 1, now
    seats = {s.position: s for s in table.seats.select_related("user")}
    match = matches.load_match(table, table.version - 1).copy()
    stand_ins = logged_stand_ins(table) if move.last_card_due(match.round) else ()
    loaded = move.Loaded(table, seats, match, stand_ins)
    return move.step(loaded, seat, action, by_stand_in, now)


def logged_stand_ins(table: Table) -> tuple[tuple[int, int, str], ...]:
    """(round, seat, action type) of the stand-in moves in the table's log."""
    logged = Action.objects.filter(table=table, by_stand_in=True).order_by("version")
    return tuple((a.round_number, a.seat, a.action["type"]) for a in logged)


def row_values(row: RoundRecordRow) -> dict[str, Any]:
    """A round row's columns but its time (each step takes its own ``now``)."""
    return {
        f.attname: getattr(row, f.attname)
        for f in RoundRecordRow._meta.concrete_fields
        if f.attname not in ("id", "finished_at")
    }


@pytest.mark.django_db(transaction=True)
def test_the_quick_step_is_the_full_step_to_the_round_end(live: InlineScheduler) -> None:
    """The same outcome at every move of a round. At its last card the quick
    step saves a pending round, whose record row, written after the move
    (game.research.round_rows), is the row the full step builds in the move."""
    table = make_table("HHHH", rules=LONG, stand_in_bots=True)
    rng = random.Random(3)
    quick = 0
    last_row = None
    returning: set[int] = set()  # back after a timer: their own move ends the run (a seat write)
    while True:
        table.refresh_from_db()
        kept = remembered(table) if table.version else None
        match = matches.load_match(table)
        seat = match.round.to_act
        action = rng.choice(view_for(match, seat).legal_actions)
        by_stand_in = 10 <= table.version < 14  # four moves by stand-ins, in the play
        if kept is not None and seat in returning:
            assert move.quick_step(*kept, seat, action, False, timezone.now()) is None
        elif kept is not None and not by_stand_in:
            now = timezone.now()
            want = full_step(table, seat, action)
            got = move.quick_step(*kept, seat, action, False, now)
            assert got is not None and got.round_row is None
            if move.last_card_due(match.round):
                last_row = want.round_row
                assert last_row is not None and last_row.stand_in_moves == 4
                pending = got.pending_round
                assert pending is not None and pending.version == want.result.version
                assert (pending.round_number, pending.seat_kinds) == (1, "HHHH")
            else:
                assert got.pending_round is None
            quick += 1
            assert got.result == want.result and got.match.version == want.match.version
            assert got.seats == want.seats
            assert view_for(got.match, seat) == view_for(want.match, seat)
        result = master.submit(table.pk, seat, action, table.version, by_stand_in=by_stand_in)
        returning.discard(seat)
        if by_stand_in:
            assert seating.mark_back(table.pk, seat)  # before the seat's next turn
            returning.add(seat)
        if result.round_over:
            break
    assert quick >= 45 and last_row is not None  # 52 moves: 4 by stand-ins, 4 back, the first
    row = RoundRecordRow.objects.get(table=table)  # written after the move, then flushed
    assert row_values(row) == {**row_values(last_row), "tallied": True}
    assert not PendingRound.objects.filter(table=table).exists()


@pytest.mark.django_db(transaction=True)
def test_the_quick_step_declines_what_the_full_path_must_decide(
    live: InlineScheduler,
) -> None:
    table = make_table("HHHH", rules=LONG)
    match = matches.load_match(table)
    seat = match.round.to_act
    master.submit(table.pk, seat, view_for(match, seat).legal_actions[0], 0)
    match, known = remembered(table)
    now = timezone.now()
    seat = match.round.to_act
    legal = view_for(match, seat).legal_actions
    # A bid out of turn: the engine refuses it, and the full path says why.
    out_of_turn = Bid((seat + 1) % 4, 3)
    assert move.quick_step(match, known, (seat + 1) % 4, out_of_turn, False, now) is None
    # A stand-in's move marks the seat away (a seat row to write): the full path.
    assert move.quick_step(match, known, seat, legal[0], True, now) is None
    # The player's own move: quick, and the remembered rows are not changed.
    before = (known.table.version, known.table.turn_started_at)
    outcome = move.quick_step(match, known, seat, legal[0], False, now)
    assert outcome is not None and outcome.table.version == 2
    assert (known.table.version, known.table.turn_started_at) == before
    assert match.version == 1


@pytest.mark.django_db(transaction=True)
def test_seat_changes_in_play_count_in_the_seats_version(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=LONG, stand_in_bots=True)
    assert table.seats_version == 0
    # A stand-in moves for North (away), North comes back, then leaves the match.
    match = matches.load_match(table)
    north = match.round.to_act
    master.submit(table.pk, north, view_for(match, north).legal_actions[0], 0,
                        by_stand_in=True)  # fmt: skip
    table.refresh_from_db()
    assert table.seats_version == 1
    assert matches.remembered_rows(table.pk).table.seats_version == 1  # as the move left it
    assert seating.mark_back(table.pk, north)
    table.refresh_from_db()
    assert table.seats_version == 2
    seating.hand_over(table.pk, north)
    table.refresh_from_db()
    assert table.seats_version == 3


@pytest.mark.django_db(transaction=True)
def test_on_djangos_connection_the_quick_move_writes_without_reading(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The synchronous runner (Celery workers, SQLite): the swap and the INSERT,
    no row read; the full path only for the first move and after a seat
    changed elsewhere (the round's last card reads its stand-in move, then
    inserts its record row too)."""
    full: list[int] = []
    move_steps = move.move_steps

    def counted(*args: Any, **kwargs: Any) -> Any:
        full.append(args[3])  # the version acted on
        return move_steps(*args, **kwargs)

    monkeypatch.setattr(move, "move_steps", counted)
    table = make_table("HHHH", rules=LONG, stand_in_bots=True)
    rng = random.Random(8)
    while True:
        table.refresh_from_db()
        match = matches.load_match(table)
        seat = match.round.to_act
        action = rng.choice(view_for(match, seat).legal_actions)
        if master.submit(table.pk, seat, action, table.version).round_over:
            break
    assert full == [0]  # the first move only
    table.refresh_from_db()
    row = RoundRecordRow.objects.get(table=table)
    assert row.version == table.version and row.stand_in_moves == 0
    # A seat handed to a bot elsewhere: the next move's swap changes nothing and
    # the full path makes the move on the seats as they are now.
    table.refresh_from_db()
    match = matches.load_match(table)
    seat = match.round.to_act
    leaver = (seat + 2) % 4
    seating.hand_over(table.pk, leaver)
    known = matches.remembered_rows(table.pk)  # this process's rows: from before
    assert known is not None and known.seats[leaver].kind == Seat.Kind.HUMAN
    full.clear()
    master.submit(table.pk, seat, view_for(match, seat).legal_actions[0], table.version)
    assert full == [table.version]
    assert matches.remembered_rows(table.pk).seats[leaver].kind == Seat.Kind.BOT


@pytest.fixture
def database_url() -> Iterator[str]:
    with services.scratch_postgres("spades_quick") as url:
        yield url


@pytest.mark.stack
def test_on_postgresql_one_statement_a_move_and_the_full_path_when_rows_are_old(
    database_url: str,
) -> None:
    env = stackprocs.stack_env(database_url, None)
    stackprocs.manage(env, "migrate", "-v0")
    out = stackprocs.manage(env, "shell", "-c", SCRIPT.read_text(), timeout=300)
    result = json.loads(out.strip().splitlines()[-1])
    # A round of 52 cards and 4 bids: the first move and the last card take the
    # full path, every other one statement.
    assert result["first_round"] == {"quick": 55, "full": 1}, result
    # The last card's one statement inserted its pending round too, whose row
    # is written after the move.
    assert result["first_round_row"] == {
        "pending_or_written": True,
        "version_is_last_card": True,
        "replays": True,
        "stand_in_moves": 0,
        "seat_kinds": "HHHH",
        "rules": True,
    }, result
    assert result["stale"] == result["illegal"] == "refused, nothing changed", result
    assert result["after_hand_over"] == {
        "quick_refused": 1,
        "bot_seen": True,
        "then_quick": True,
    }, result
    assert result["rows_of_an_earlier_version"] == {
        "same_seats": "quick",
        "a_seat_changed": "full",
    }, result
    assert result["log_replays"] and result["frames_equal"], result


@pytest.mark.django_db(transaction=True)
def test_a_process_knows_a_tables_rows_from_its_own_moves_only(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quick move's rows are the store's own: a socket's state read leaves
    them alone, so a process's first move of a table (a restart, another
    process's table) takes the full path, and the moves after it are quick
    while the seats are the same."""
    full: list[int] = []
    move_steps = move.move_steps

    def counted(*args: Any, **kwargs: Any) -> Any:
        full.append(args[3])
        return move_steps(*args, **kwargs)

    monkeypatch.setattr(move, "move_steps", counted)
    table = make_table("HHHH", rules=LONG, stand_in_bots=True)
    rng = random.Random(9)

    def play(choose: Any = rng.choice) -> None:
        table.refresh_from_db()
        match = matches.load_match(table)
        seat = match.round.to_act
        master.submit(table.pk, seat, choose(view_for(match, seat).legal_actions), table.version)

    for _ in range(6):
        play()
    assert full == [0]
    matches.clear_cache()  # as a process that never moved this table
    frames.state_frame(table.pk, 1)
    assert matches.remembered_rows(table.pk) is None  # a read is not the write path's
    play(lambda legal: legal[0])
    play(lambda legal: legal[0])
    assert full == [0, 6]  # its first move full, the next quick
    # The rows serve only while the seats are the same.
    table.refresh_from_db()
    seat = matches.load_match(table).round.to_act
    seating.hand_over(table.pk, (seat + 2) % 4)  # not a seat to act before the check
    version = Table.objects.get(pk=table.pk).version
    play(lambda legal: legal[0])
    assert full == [0, 6, version]
