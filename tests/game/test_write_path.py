"""The single write path: compare-and-swap, the log, round records, results, bots."""

from __future__ import annotations

import asyncio
import json
import random
import time
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.utils import ConnectionHandler
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from game import errors, master, seating
from game.driver import bot_turns, scheduling, sweeper, tasks
from game.engine import Bid, Match, Play, Rules, SeeCards, replay, view_for
from game.engine.state import Phase
from game.models import Action, MatchResult, RoundRecordRow, Seat, Table
from game.moves import matches, rows
from game.sockets import events, frames
from game.sql import statements
from tests.support.helpers import (
    QUICK_RULES,
    SHORT_RULES,
    human_move,
    make_table,
    play_humans,
    table_view,
)
from tests.support.inline import InlineScheduler

pytestmark = pytest.mark.django_db(transaction=True)


def first_legal(table: Table) -> tuple[int, Any]:
    match = matches.load_match(table)
    seat = match.round.to_act
    return seat, view_for(match, seat).legal_actions[-1]


def snapshot(table: Table) -> tuple[int, int, str]:
    table.refresh_from_db()
    return table.version, Action.objects.filter(table=table).count(), table.status


def test_a_legal_action_is_logged_and_bumps_the_version(live: InlineScheduler) -> None:
    table = make_table("HHHH")
    assert table.version == 0 and table.status == Table.Status.PLAYING
    seat, action = first_legal(table)
    result = master.submit(table.pk, seat, action, 0)
    assert result.version == 1 and result.seat == seat and not result.round_over
    row = Action.objects.get(table=table)
    assert (row.version, row.seat, row.round_number, row.by_stand_in) == (1, seat, 1, False)
    assert row.action["seat"] == seat
    table.refresh_from_db()
    assert table.version == 1


def test_actions_as_dicts_take_the_seat_from_the_caller(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=Rules(blind_nil=False))
    seat = matches.load_match(table).round.to_act
    # The dict claims another seat: the caller's seat wins.
    master.submit(table.pk, seat, {"type": "bid", "tricks": 3, "seat": (seat + 1) % 4}, 0)
    assert Action.objects.get(table=table).action == {
        "type": "bid",
        "seat": seat,
        "tricks": 3,
        "blind": False,
    }


@pytest.mark.parametrize(
    ("make_action", "error", "message"),
    [
        (lambda seat: Play(seat, 0), errors.IllegalMove, "after the bidding"),
        (lambda seat: Bid((seat + 1) % 4, 3), errors.IllegalMove, "turn"),
        (lambda seat: {"type": "bid", "tricks": 14}, errors.BadAction, "0 to 13"),
        (lambda seat: {"type": "dance"}, errors.BadAction, "'type'"),
    ],
    ids=["play-during-bidding", "out-of-turn", "bid-too-high", "unknown-type"],
)
def test_a_refused_action_changes_nothing(
    live: InlineScheduler, make_action: Any, error: type, message: str
) -> None:
    table = make_table("HHHH", rules=Rules(blind_nil=False))
    seat = matches.load_match(table).round.to_act
    before = snapshot(table)
    action = make_action(seat)
    actor = action.seat if not isinstance(action, dict) else seat
    with pytest.raises(error, match=message):
        master.submit(table.pk, actor, action, 0)
    assert snapshot(table) == before


def test_an_action_for_another_seat_is_refused(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=Rules(blind_nil=False))
    seat = matches.load_match(table).round.to_act
    with pytest.raises(errors.BadAction, match="your own seat"):
        master.submit(table.pk, (seat + 1) % 4, Bid(seat, 3), 0)
    assert snapshot(table) == (0, 0, "playing")


def test_a_stale_version_changes_nothing(live: InlineScheduler) -> None:
    table = make_table("HHHH")
    seat, action = first_legal(table)
    master.submit(table.pk, seat, action, 0)
    before = snapshot(table)
    seat, action = first_legal(table)
    with pytest.raises(errors.StaleVersion) as info:
        master.submit(table.pk, seat, action, 0)
    assert (info.value.expected, info.value.current) == (0, 1)
    assert "moved on" in info.value.message
    assert snapshot(table) == before
    with pytest.raises(errors.StaleVersion):
        master.submit(table.pk, seat, action, 7)  # from the future: also stale
    assert snapshot(table) == before


def test_no_action_before_the_start_or_after_the_end(live: InlineScheduler) -> None:
    table = make_table("HHHH", start=False)
    with pytest.raises(errors.NotPlaying, match="not started"):
        master.submit(table.pk, 0, SeeCards(0), 0)
    with pytest.raises(errors.TableNotFound):
        master.submit(table.pk + 1000, 0, SeeCards(0), 0)
    seating.start_table(table)
    table = play_humans(table, random.Random(1))
    assert table.status == Table.Status.FINISHED
    with pytest.raises(errors.NotPlaying, match="over"):
        master.submit(table.pk, 0, SeeCards(0), table.version)


def test_a_finished_round_stores_a_record_that_replays(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=QUICK_RULES)
    rng = random.Random(2)
    while not RoundRecordRow.objects.filter(table=table).exists():
        seat, action = human_move(table, rng)
        result = master.submit(table.pk, seat, action, table.version)
        table.refresh_from_db()
    assert result.round_over and result.round_number == 1
    row = RoundRecordRow.objects.get(table=table)
    assert row.version == table.version
    r = replay(row.record)  # the engine accepts the stored record
    assert r.phase is Phase.DONE and r.round_number == 1
    assert [row.bid_n, row.bid_e, row.bid_s, row.bid_w] == r.bids
    assert [row.tricks_n, row.tricks_e, row.tricks_s, row.tricks_w] == r.tricks_won
    assert r.result is not None
    assert (row.points_ns, row.points_ew) == (r.result[0].points, r.result[1].points)
    assert (row.score_ns, row.score_ew) == (r.result[0].score_after, r.result[1].score_after)
    assert row.seat_kinds == "HHHH" and row.bot_names == [None] * 4
    assert row.rules == QUICK_RULES.to_dict()
    # The round's last action is in the same version as the record.
    last = Action.objects.get(table=table, version=row.version)
    assert last.round_number == 1 and last.action["type"] == "play"


def test_a_stored_row_is_sent_as_djangos_own_preparation_would_send_it(
    live: InlineScheduler,
) -> None:
    """statements.insert_query skips Django's preparation of plain columns: every value
    it sends must be what that preparation gives."""
    for seed in (3, 4):
        play_humans(make_table("HBHB", rules=QUICK_RULES, bot="Random+Random"), random.Random(seed))
    stored = [*RoundRecordRow.objects.all(), *MatchResult.objects.all()]
    assert len(stored) >= 4
    for instance in stored:
        instance.pk = None  # as a move's new row
        sent = statements.insert_query(instance).params
        fields = [f for f in type(instance)._meta.concrete_fields if not f.primary_key]
        want = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
        assert [type(v) for v in sent] == [type(v) for v in want]
        assert [str(v) if hasattr(v, "dumps") else v for v in sent] == [
            str(v) if hasattr(v, "dumps") else v for v in want
        ]


def test_a_moves_statements_make_no_database_wrapper_in_its_asyncio_task(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an event loop ``django.db.connection`` is a new wrapper in every asyncio
    task, and a move on PostgreSQL runs in a task of its own: building its
    statements and reading its rows there must not make one (each was garbage in
    reference cycles, and the collections that freed them paused the loop)."""
    table = make_table("HHHH", rules=QUICK_RULES)
    rng = random.Random(2)
    while not RoundRecordRow.objects.filter(table=table).exists():
        seat, action = human_move(table, rng)
        master.submit(table.pk, seat, action, table.version)
        table.refresh_from_db()
    round_row = RoundRecordRow.objects.get(table=table)
    round_row.pk = None
    with connection.cursor() as cursor:
        read = matches.actions_query(table.pk, 0, table.version)
        cursor.execute(read.sql, read.params)
        logged = cursor.fetchall()
        fetch = rows.fetch_table_query(table.pk)
        cursor.execute(fetch.sql, fetch.params)
        table_row = cursor.fetchall()
    action = {"type": "play", "seat": 0, "card": "2C"}

    def a_move() -> None:
        now = timezone.now()
        rows.quick_move_query(table, table.version, 2, 0, action, False, now, round_row)
        rows.insert_action_query(table.pk, table.version + 1, 2, 0, action, False, now)
        assert len(read.read(len(logged), logged)) == len(logged)
        assert fetch.read(1, table_row).pk == table.pk

    async def a_move_task() -> None:
        a_move()

    async def in_tasks(count: int) -> None:
        for _ in range(count):
            await asyncio.ensure_future(a_move_task())  # a task, as a move's own

    asyncio.run(in_tasks(1))  # the first may make the process's one
    made: list[str] = []
    create = ConnectionHandler.create_connection
    monkeypatch.setattr(
        ConnectionHandler,
        "create_connection",
        lambda handler, alias: made.append(alias) or create(handler, alias),
    )
    asyncio.run(in_tasks(5))
    assert made == []


def test_four_bots_play_a_match_to_the_end(live: InlineScheduler) -> None:
    table = make_table("BBBB", rules=QUICK_RULES)  # start_table sets the bots going
    table.refresh_from_db()
    assert table.status == Table.Status.FINISHED
    result = MatchResult.objects.get(table=table)
    log = list(Action.objects.filter(table=table).order_by("version"))
    assert [a.version for a in log] == list(range(1, table.version + 1))
    assert result.version == table.version
    # The log alone replays to the same final scores.
    match = Match(Rules.from_dict(table.rules), table.seed)
    from game.engine import action_from_dict

    for row in log:
        match.apply(action_from_dict(row.action))
    assert match.is_over and match.winner == result.winner
    assert match.scores == (result.score_ns, result.score_ew)
    assert len(match.rounds) == result.rounds == RoundRecordRow.objects.filter(table=table).count()
    records = RoundRecordRow.objects.filter(table=table).order_by("round_number")
    assert [r.seat_kinds for r in records] == ["BBBB"] * result.rounds
    assert (records.last().score_ns, records.last().score_ew) == match.scores


def test_bot_moves_are_reproducible_from_the_seed(live: InlineScheduler) -> None:
    a = make_table("BBBB", rules=SHORT_RULES, start=False)
    b = make_table("BBBB", rules=SHORT_RULES, start=False)
    Table.objects.filter(pk=b.pk).update(seed=a.seed)
    seating.start_table(a)
    seating.start_table(b)

    def actions(t: Table) -> list[dict[str, Any]]:
        rows = Action.objects.filter(table=t).order_by("version")
        return list(rows.values_list("action", flat=True))

    assert actions(a) == actions(b) and len(actions(a)) > 50


def test_bots_answer_a_human_move_and_stop_at_the_next_human(live: InlineScheduler) -> None:
    table = make_table("HBBB", rules=Rules(blind_nil=False))
    table.refresh_from_db()
    # The bots before North (if North does not bid first) have already bid.
    match = matches.load_match(table)
    assert match.round.to_act == 0
    master.submit(table.pk, 0, Bid(0, 3), table.version)
    table.refresh_from_db()
    match = matches.load_match(table)
    assert match.round.to_act == 0 and match.round.phase is Phase.PLAYING
    assert all(b is not None for b in match.round.bids)


def test_the_cache_is_only_an_optimisation(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=QUICK_RULES)
    play_humans(table, random.Random(3), until_version=40)
    cached = table_view(table, 2)
    matches.clear_cache()
    assert table_view(table, 2) == cached
    # Moves work from a cold cache, and from a cache holding an older version only.
    play_humans(table, random.Random(4), until_version=45)
    matches.clear_cache()
    matches.load_match(table, 43)
    play_humans(table, random.Random(5), until_version=50)
    fresh = table_view(table, None)
    matches.clear_cache()
    assert table_view(table, None) == fresh


def test_views_never_carry_the_seed_or_the_invite_token(live: InlineScheduler) -> None:
    table = make_table("HHBB", rules=QUICK_RULES)
    for seat in (None, 0, 1, 2, 3):
        text = json.dumps(table_view(table, seat))
        assert table.seed not in text and table.invite_token not in text
    view = table_view(table, 0)
    assert view["table"]["seats"][2] == {
        "position": 2,
        "kind": "bot",
        "name": "Sofia",  # the South bot's persona; the kind says which bot
        "bot_name": "Random+Random",
        "away": False,
        "played_for": [],
    }
    assert view["table"]["seats"][0]["name"] == "Guest 0"
    assert view["version"] == table.version and view["seat"] == 0


def test_an_open_table_view_has_no_game_yet(live: InlineScheduler) -> None:
    table = make_table("HH", start=False)
    view = table_view(table, None)
    assert view["table"]["status"] == "open" and "hand" not in view
    assert view["table"]["seats"][2:] == [None, None]


def test_seating_rules(live: InlineScheduler) -> None:
    table = make_table("H", start=False)
    with pytest.raises(errors.SeatError, match="taken"):
        seating.take_seat(table, 0, guest_id="other")
    with pytest.raises(errors.SeatError, match="already have a seat"):
        seating.take_seat(table, 1, guest_id="g0")
    with pytest.raises(errors.SeatError, match="unknown bot"):
        seating.add_bot(table, 1, "Nobody+Nothing")
    with pytest.raises(errors.SeatError, match="four seats"):
        seating.start_table(table)
    assert seating.seat_of(table, guest_id="g0") == 0
    assert seating.seat_of(table, guest_id="nobody") is None
    seating.leave_seat(table, 0)
    assert seating.seat_of(table, guest_id="g0") is None


def test_a_stand_in_moves_for_a_human_whose_timer_ran_out(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=Rules(blind_nil=False), stand_in_bots=True)
    assert live.pending_timers() == 1  # the first human's turn timer
    to_act = matches.load_match(table).round.to_act
    assert live.run_timers() == 1
    table.refresh_from_db()
    row = Action.objects.get(table=table)
    assert row.by_stand_in and row.seat == to_act and table.version == 1
    # The next human's timer is running; if that human moves first, it is dropped.
    assert live.pending_timers() == 1
    seat, action = first_legal(table)
    master.submit(table.pk, seat, action, 1)
    assert live.pending_timers() == 2
    live.run_timers()  # the stale timer does nothing, the fresh one moves
    table.refresh_from_db()
    assert table.version == 3
    assert list(Action.objects.filter(table=table).values_list("by_stand_in", flat=True)) == [
        True,
        False,
        True,
    ]


def test_a_bot_task_that_runs_twice_is_harmless(live: InlineScheduler) -> None:
    table = make_table("BHHH", rules=Rules(blind_nil=False), start=False)
    # A seed where North, the bot, bids first.
    seed = next(
        f"twice-{i}"
        for i in range(100)
        if Match(Rules(blind_nil=False), f"twice-{i}").round.to_act == 0
    )
    Table.objects.filter(pk=table.pk).update(seed=seed)
    seating.start_table(table)
    table.refresh_from_db()
    assert table.version == 1  # the bot bid at once, then East (a human) is to act
    assert bot_turns.play_turn(table.pk, 0, 0) == bot_turns.STALE  # the same task again
    assert bot_turns.play_turn(table.pk, 0, 1) == bot_turns.NOT_DUE  # not North's turn
    assert bot_turns.play_turn(table.pk, 1, 1) == bot_turns.NOT_DUE  # a human seat, no stand-in
    assert Action.objects.filter(table=table).count() == 1


def test_without_in_process_bots_moves_go_to_the_celery_bots_queue(
    live: InlineScheduler, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.SPADES_BOTS_IN_PROCESS = False
    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(
        scheduling.current_app, "send_task", lambda name, **kw: sent.append((name, kw))
    )
    master.get().scheduler.turn(master.TurnPlan(5, 2, 17, 0.6, False))
    master.get().scheduler.turn(master.TurnPlan(5, 3, 18, 30, True))
    master.get().scheduler.turn(master.TurnPlan(5, 3, 19, 150, True))
    # A timer longer than a worker holds a move goes in pieces.
    due = sent[2][1]["kwargs"].pop("due")
    assert abs(due - time.time() - 150) < 5
    assert sent == [
        (
            tasks.ACT_TASK,
            {
                "args": [5, 2, 17],
                "kwargs": {"stand_in": False, "away": False},
                "queue": "bots",
                "countdown": 0.6,
            },
        ),
        (
            tasks.ACT_TASK,
            {
                "args": [5, 3, 18],
                "kwargs": {"stand_in": True, "away": False},
                "queue": "bots",
                "countdown": 30,
            },
        ),
        (
            tasks.ACT_TASK,
            {
                "args": [5, 3, 19],
                "kwargs": {"stand_in": True, "away": False},
                "queue": "bots",
                "countdown": scheduling.HOLD_AT_MOST_SECONDS,
            },
        ),
    ]
    # The name sent is the driver's task, which delivers at least once.
    assert tasks.act.acks_late is True and tasks.act.name == tasks.ACT_TASK


def test_a_move_never_changes_the_cached_match(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=QUICK_RULES)
    play_humans(table, random.Random(6), until_version=20)
    shared = matches.load_match(table)
    before = view_for(shared, None)
    seat, action = human_move(table, random.Random(7))
    master.submit(table.pk, seat, action, table.version)
    assert shared.version == 20 and view_for(shared, None) == before
    assert matches.load_match(table, 21).version == 21


def test_the_admin_lists_tables_without_the_seed(live: InlineScheduler, admin_client: Any) -> None:
    table = make_table("HHBB", rules=QUICK_RULES)
    play_humans(table, random.Random(8), until_version=5)
    for url in (
        "/admin/game/table/",
        f"/admin/game/table/{table.pk}/change/",
        "/admin/game/action/",
        "/admin/game/roundrecordrow/",
        "/admin/game/matchresult/",
    ):
        response = admin_client.get(url)
        assert response.status_code == 200, url
        assert table.seed not in response.content.decode()


def _waiting_for_a_bot() -> Table:
    """A table whose next move is a bot's (East bids first)."""
    table = make_table("HBBB", rules=Rules(blind_nil=False), start=False)
    seed = next(
        f"lost-{i}"
        for i in range(100)
        if Match(Rules(blind_nil=False), f"lost-{i}").round.to_act == 1
    )
    Table.objects.filter(pk=table.pk).update(
        seed=seed, status=Table.Status.PLAYING, turn_started_at=timezone.now()
    )
    sweeper._resumed.clear()
    return table


def test_an_overdue_bot_move_is_scheduled_again(live: InlineScheduler) -> None:
    # As after a restart: the game waits for a bot whose scheduled move was lost.
    table = _waiting_for_a_bot()
    Table.objects.filter(pk=table.pk).update(turn_started_at=timezone.now() - timedelta(seconds=60))
    assert sweeper.resume_table(table) is True
    table.refresh_from_db()
    assert table.version == 3  # the three bots bid; North (a human) is to act


def test_a_socket_that_opens_schedules_the_bot_move_due_again(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The process that committed the last move may have died before sending
    # the bot's: a copy for just after the move's latest due time.
    table = _waiting_for_a_bot()
    plans: list[master.TurnPlan] = []
    monkeypatch.setattr(master.get().scheduler, "turn", plans.append)
    assert sweeper.resume_table(table) is True
    assert sweeper.resume_table(table) is False  # once per turn and process
    [plan] = plans
    table.refresh_from_db()
    due = master.bot_delay_for(table) * (1 + master.TRICK_PAUSE)
    assert (plan.seat, plan.version, plan.stand_in) == (1, table.version, False)
    assert due < plan.delay <= due + sweeper.RESUME_GRACE_SECONDS


def test_a_lost_turn_timer_restarts_for_the_time_left(live: InlineScheduler) -> None:
    table = make_table("HHHH", stand_in_bots=True)
    sweeper._resumed.clear()
    live.run_timers()  # the stand-in moves once
    live.timers.clear()  # the next timer is lost
    Table.objects.filter(pk=table.pk).update(turn_started_at=timezone.now() - timedelta(seconds=20))
    assert sweeper.resume_table(table) is True
    assert sweeper.resume_table(table) is False  # once per turn and process
    [(delay, _, _)] = live.timers
    assert 9 <= delay <= 10.5


def test_after_a_restart_a_human_gets_their_turn_again_not_a_stand_in(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server was down longer than the turn timer: the player could not
    play meanwhile, so their timer starts again when the server is back
    (its own outage never counts as the player's absence)."""
    table = make_table("HHHH", stand_in_bots=True)
    live.timers.clear()  # the timer died with the process
    started = timezone.now() - timedelta(seconds=600)
    Table.objects.filter(pk=table.pk).update(turn_started_at=started)
    monkeypatch.setattr(sweeper, "STARTED_AT", timezone.now() - timedelta(seconds=2))
    assert sweeper.sweep() == []  # not overdue: the server is 2 s up
    assert sweeper.resume_table(table) is True
    [(delay, _, _)] = live.timers
    assert table.turn_seconds - 3 <= delay <= table.turn_seconds
    assert not Action.objects.filter(table=table).exists()


def test_the_cached_state_frame_is_the_views_state_frame(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=QUICK_RULES)
    play_humans(table, random.Random(8), until_version=30)
    table.refresh_from_db()
    for seat in (None, 0, 1, 2, 3):
        found = frames.cached_state_frame(table.pk, seat, table.version)
        assert found is not None
        version, text = found
        assert version == table.version
        assert json.loads(text) == {
            "type": "state",
            "version": version,
            "view": table_view(table, seat),
        }
    # An older version asked for: the newest state comes back.
    assert frames.cached_state_frame(table.pk, 1, table.version - 3)[0] == table.version
    matches.clear_cache()
    assert frames.cached_state_frame(table.pk, 1, table.version) is None


def test_another_process_builds_the_frames_from_the_move_event(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server process that did not commit a move (its sockets' seats sit on
    another process) builds the same frames from the group message alone:
    the action applied to its state of the version before, no database read."""
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(events, "send_to_table", lambda pk, message: sent.append(message))
    table = make_table("HHHH", rules=QUICK_RULES)
    rng = random.Random(12)
    table_view(table, 0)  # version 0 kept, as on a socket's connect
    round_ends = 0
    while table.status == Table.Status.PLAYING and table.version < 120:
        before = matches.cached(table.pk, table.version)
        assert before is not None
        seat, action = human_move(table, rng)
        result = master.submit(table.pk, seat, action, table.version)
        round_ends += result.round_over
        event = sent[-1]
        assert event["version"] == result.version and event["action"] == result.action
        seats = (None, 0, 1, 2, 3)
        committed = {s: frames.cached_state_frame(table.pk, s, result.version) for s in seats}
        # The other process: only the version before is kept there.
        matches.clear_cache()
        matches.remember(table.pk, before)
        assert frames.cached_state_frame(table.pk, 0, result.version) is None
        with CaptureQueriesContext(connection) as queries:
            applied = {s: frames.applied_state_frame(table.pk, s, event) for s in seats}
        assert applied == committed and len(queries) == 0
        table.refresh_from_db()
    assert round_ends >= 1  # a round's end (its record, a new deal or the match's end) too
    # Without the state before, or without the move in the event: read the database.
    matches.clear_cache()
    assert frames.applied_state_frame(table.pk, 0, sent[-1]) is None
    matches.remember(table.pk, before)
    bare = {"type": "table.event", "version": sent[-1]["version"]}
    assert frames.applied_state_frame(table.pk, 0, bare) is None


def test_new_seat_info_replaces_a_cached_frame(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=QUICK_RULES)
    play_humans(table, random.Random(9), until_version=5)
    table.refresh_from_db()
    before = json.loads(frames.cached_state_frame(table.pk, 0, table.version)[1])
    Seat.objects.filter(table=table, position=1).update(guest_name="Renamed")
    table_view(table, 0)  # what a table.changed event makes a socket do
    after = json.loads(frames.cached_state_frame(table.pk, 0, table.version)[1])
    assert before["view"]["table"]["seats"][1]["name"] != "Renamed"
    assert after["view"]["table"]["seats"][1]["name"] == "Renamed"


def test_a_move_reads_the_hosts_name_and_the_seats_users(live: InlineScheduler) -> None:
    from django.contrib.auth import get_user_model

    host = get_user_model().objects.create_user("hostess", password="x")
    table = make_table("HHHH", rules=QUICK_RULES)
    Table.objects.filter(pk=table.pk).update(host=host)
    Seat.objects.filter(table=table, position=0).update(user=host, guest_id="")
    seat, action = first_legal(table)
    master.submit(table.pk, seat, action, 0)
    frame = json.loads(frames.cached_state_frame(table.pk, None, 1)[1])
    assert frame["view"]["table"]["host"] == "hostess"
    assert frame["view"]["table"]["seats"][0]["name"] == "hostess"
    table.refresh_from_db()
    assert frame["view"]["table"] == table_view(table, None)["table"]
