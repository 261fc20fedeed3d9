"""Lost moves are swept up (game.driver.sweeper): a table never waits for ever on a
bot or stand-in task that a dead worker, broker or server took with it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone
from redis.exceptions import ConnectionError as RedisConnectionError

from game import master
from game.driver import bot_turns, redelivery, sweeper, tasks
from game.driver.scheduling import CeleryScheduler, ThreadScheduler
from game.engine import view_for
from game.engine.actions import action_to_dict
from game.models import Action, Seat, Table
from game.moves.matches import load_match
from tests.support.helpers import make_table
from tests.support.inline import InlineScheduler

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def lost(live: InlineScheduler, monkeypatch: pytest.MonkeyPatch) -> list[master.TurnPlan]:
    """Every move scheduled from now on is lost (kept here, never run)."""
    dropped: list[master.TurnPlan] = []
    monkeypatch.setattr(live, "turn", dropped.append)
    return dropped


def _waited(table: Table, seconds: float) -> None:
    Table.objects.filter(pk=table.pk).update(
        turn_started_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_a_bot_move_lost_for_long_is_made_again(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch, lost: list[master.TurnPlan]
) -> None:
    table = make_table("BBBB")
    assert len(lost) == 1  # the first bot's move, gone with its worker
    version = Table.objects.get(pk=table.pk).version
    _waited(table, sweeper.OVERDUE_AFTER_SECONDS - 1)
    assert sweeper.sweep() == []  # late, not lost yet
    _waited(table, sweeper.OVERDUE_AFTER_SECONDS + 1)
    monkeypatch.undo()  # moves run again (inline)
    assert sweeper.sweep() == [table.pk]
    after = Table.objects.get(pk=table.pk)
    assert after.version > version  # the bots play on
    versions = list(Action.objects.filter(table=table).values_list("version", flat=True))
    assert versions == list(range(1, len(versions) + 1))


def test_a_humans_own_turn_is_never_swept(lost: list[master.TurnPlan]) -> None:
    table = make_table("HHHH")
    _waited(table, 3600)
    assert sweeper.sweep() == []
    assert lost == []


def test_a_lost_turn_timer_brings_the_stand_in(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch, lost: list[master.TurnPlan]
) -> None:
    table = make_table("HHHH", stand_in_bots=True)
    [timer] = lost  # the first player's turn timer, lost
    assert timer.stand_in and timer.delay == table.turn_seconds
    _waited(table, table.turn_seconds + sweeper.OVERDUE_AFTER_SECONDS - 2)
    assert sweeper.sweep() == []  # the player still has time, and then some
    _waited(table, table.turn_seconds + sweeper.OVERDUE_AFTER_SECONDS + 2)
    monkeypatch.undo()
    assert sweeper.sweep() == [table.pk]
    moved = Action.objects.get(table=table, version=table.version + 1)
    assert moved.by_stand_in and moved.seat == timer.seat
    assert Seat.objects.get(table=table, position=timer.seat).away


def test_a_swept_move_is_made_once_however_often_it_is_swept(
    live: InlineScheduler, lost: list[master.TurnPlan]
) -> None:
    table = make_table("BBBB")
    _waited(table, 60)
    sweeper.sweep()
    sweeper.sweep()
    first, second = lost[1], lost[2]
    assert (
        (first.table_id, first.version)
        == (second.table_id, second.version)
        == (
            table.pk,
            table.version,
        )
    )
    outcomes = [bot_turns.play_turn(p.table_id, p.seat, p.version, p.stand_in) for p in lost[1:]]
    assert outcomes == [bot_turns.MOVED, bot_turns.STALE]
    assert Action.objects.filter(table=table).count() == 1


def test_the_command_and_celery_beat_sweep(
    live: InlineScheduler, capsys: pytest.CaptureFixture[str], lost: list[master.TurnPlan]
) -> None:
    table = make_table("BBBB")
    _waited(table, 60)
    call_command("sweep_overdue_turns")
    assert f"1 table(s) had a lost move scheduled again: {table.pk}" in capsys.readouterr().out
    from spadesite.celery import app

    entry = app.conf.beat_schedule["sweep-overdue-turns"]
    assert entry["task"] == tasks.SWEEP_TASK == tasks.sweep_overdue.name
    assert entry["schedule"] == sweeper.SWEEP_EVERY_SECONDS
    assert tasks.sweep_overdue() == 1  # the task itself


def test_the_embedded_server_sweeps_on_its_runner() -> None:
    threads = ThreadScheduler(bot_turns.take_turn, analyse=None)
    try:
        threads.start_sweeping()
        threads.start_sweeping()  # once per process
        assert threads.runner.pending_timers() == 1  # the next sweep, waiting
    finally:
        threads.shutdown()
    celery = CeleryScheduler()
    celery.start_sweeping()  # Celery beat's job there: nothing waits here


def test_after_a_broker_outage_every_tables_next_move_is_scheduled_at_its_time(
    lost: list[master.TurnPlan], settings: Any
) -> None:
    """A broker that came back empty lost every queued move, overdue or not:
    the whole sweep schedules each table's next bot or stand-in move with
    what is left of its delay, and leaves a human's own turn alone."""
    settings.SPADES_BOT_DELAY = 0.6
    bots = make_table("BBBB")
    timer = make_table("HHHH", stand_in_bots=True)
    own_turn = make_table("HHHH")
    lost.clear()
    _waited(bots, 0.2)
    _waited(timer, 10)
    assert sweeper.sweep() == []  # nothing overdue yet
    assert sorted(sweeper.sweep(every=True)) == sorted([bots.pk, timer.pk])
    plans = {plan.table_id: plan for plan in lost}
    assert set(plans) == {bots.pk, timer.pk} and own_turn.pk not in plans
    assert plans[timer.pk].stand_in
    assert timer.turn_seconds - 11 < plans[timer.pk].delay < timer.turn_seconds - 9
    assert 0 <= plans[bots.pk].delay < master.bot_delay_for(bots)


def test_the_whole_sweep_after_an_outage_runs_once_for_all_workers(
    monkeypatch: pytest.MonkeyPatch, lost: list[master.TurnPlan]
) -> None:
    held: set[str] = set()

    class Redis:
        def set(self, key: str, value: Any, nx: bool, ex: int) -> bool:
            assert nx and ex == tasks.RESWEEP_HOLD_SECONDS
            if key in held:
                return False
            held.add(key)
            return True

    monkeypatch.setattr(redelivery.redis_clients, "sync_client", Redis)
    table = make_table("BBBB")
    lost.clear()
    assert tasks.sweep_overdue(every=True) == 1  # the first worker back
    assert tasks.sweep_overdue(every=True) == 0  # the others skip
    assert [plan.table_id for plan in lost] == [table.pk]


class _Starts:
    """A Redis stand-in for the count of a move's starts."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def incr(self, key: str) -> int:
        self.counts[key] = self.counts.get(key, 0) + 1
        return self.counts[key]

    def expire(self, key: str, seconds: int) -> bool:
        assert seconds == redelivery.STARTS_TTL
        return True


def test_a_bot_that_kills_its_worker_is_passed_over_for_the_plain_bot(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch, lost: list[master.TurnPlan]
) -> None:
    # A move task whose worker dies is delivered again; a bot that kills every
    # worker it runs in would have the table wait for ever and the workers die
    # in a loop. Its fourth start has the plain bot move.
    starts = _Starts()
    monkeypatch.setattr(redelivery, "count_start", redelivery.counted_in_redis)  # as with REDIS_URL
    monkeypatch.setattr(redelivery.redis_clients, "sync_client", lambda: starts)
    table = make_table("BBBB")
    plan = lost[0]  # the first bot's move
    real_make_bot = bot_turns.make_bot

    def dying(name: str) -> Any:
        if name != redelivery.PLAIN_BOT:
            raise MemoryError("the worker dies in this bot")
        return real_make_bot(name)

    monkeypatch.setattr(bot_turns, "make_bot", dying)
    for _ in range(redelivery.MAX_STARTS):
        with pytest.raises(MemoryError):
            tasks.act(plan.table_id, plan.seat, plan.version)
    assert Table.objects.get(pk=table.pk).version == plan.version  # nothing moved
    match = load_match(Table.objects.get(pk=table.pk), plan.version)
    expected = real_make_bot(redelivery.PLAIN_BOT).act(
        view_for(match, plan.seat), bot_turns.bot_rng(table.seed, plan.version, plan.seat)
    )
    assert tasks.act(plan.table_id, plan.seat, plan.version) == bot_turns.MOVED
    moved = Action.objects.get(table=table, version=plan.version + 1)
    assert (moved.seat, moved.action) == (plan.seat, action_to_dict(expected))
    # Sent again after that (a duplicate, the sweeper): refused as stale.
    assert tasks.act(plan.table_id, plan.seat, plan.version) == bot_turns.STALE


def test_a_move_that_keeps_failing_is_dropped_until_its_count_expires(
    monkeypatch: pytest.MonkeyPatch, lost: list[master.TurnPlan]
) -> None:
    starts = _Starts()
    monkeypatch.setattr(redelivery, "count_start", redelivery.counted_in_redis)  # as with REDIS_URL
    monkeypatch.setattr(redelivery.redis_clients, "sync_client", lambda: starts)
    table = make_table("BBBB")
    plan = lost[0]
    key = redelivery.STARTS_KEY.format(plan.table_id, plan.seat, plan.version)
    starts.counts[key] = 2 * redelivery.MAX_STARTS
    assert tasks.act(plan.table_id, plan.seat, plan.version) == bot_turns.DROPPED
    assert Table.objects.get(pk=table.pk).version == plan.version
    del starts.counts[key]  # expired: the sweeper's next send is a first start again
    assert tasks.act(plan.table_id, plan.seat, plan.version) == bot_turns.MOVED


def test_without_redis_a_move_is_never_counted_or_dropped(
    monkeypatch: pytest.MonkeyPatch, lost: list[master.TurnPlan]
) -> None:
    class Gone:
        def incr(self, key: str) -> int:
            raise RedisConnectionError("Redis is restarting")

    monkeypatch.setattr(redelivery, "count_start", redelivery.counted_in_redis)  # as with REDIS_URL
    monkeypatch.setattr(redelivery.redis_clients, "sync_client", Gone)
    table = make_table("BBBB")
    plan = lost[0]
    assert redelivery.move_starts(plan.table_id, plan.seat, plan.version) == 0
    assert tasks.act(plan.table_id, plan.seat, plan.version) == bot_turns.MOVED
    assert Table.objects.get(pk=table.pk).version == plan.version + 1
