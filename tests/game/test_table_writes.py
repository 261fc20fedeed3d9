"""Every write to a live table goes through the table master, and is announced
by the announcer it was built with after the commit (docs/architecture.md,
"The table master"): a move through ``submit``, every other change through
``TableMaster.change``."""

from __future__ import annotations

import ast
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from game import abandoned, master, seating
from game.errors import SeatError
from game.master import Changed
from game.models import Table
from tests.support import ROOT
from tests.support.helpers import make_table
from tests.support.inline import InlineScheduler

SITE = ("game", "lobby", "spadesite", "studies")
# Who may do what: the broadcast is sent by the announcer's module alone; the
# announcer is reached through the master alone, and so is the scheduler
# (the builder shuts down a rebuilt master's); commit hooks are the master's
# and its stores'.
SENDERS = {"send_to_table", "table_event", "table_changed"}
SENDS_TO_TABLES = {"game/sockets/events.py"}
REACHES_THE_ANNOUNCER = {"game/master.py"}
REACHES_THE_SCHEDULER = {"game/master.py", "game/builder.py"}
HOOKS_COMMITS = {"game/master.py", "game/moves/stores/django.py"}

pytestmark = pytest.mark.django_db(transaction=True)


def bypasses(name: str, source: str) -> list[str]:
    """What ``source`` (the module ``name``) does that only the master may do."""
    found = []
    for node in ast.walk(ast.parse(source)):
        called = node.func if isinstance(node, ast.Call) else None
        called_name = getattr(called, "attr", getattr(called, "id", None))
        if called_name in SENDERS and name not in SENDS_TO_TABLES:
            found.append(f"{name}: {called_name}")
        if called_name == "on_commit" and name not in HOOKS_COMMITS:
            found.append(f"{name}: on_commit")
        reaches = node.attr if isinstance(node, ast.Attribute) else None
        if reaches == "announcer" and name not in REACHES_THE_ANNOUNCER:
            found.append(f"{name}: announcer")
        if reaches == "scheduler" and name not in REACHES_THE_SCHEDULER:
            found.append(f"{name}: scheduler")
    return found


def test_only_the_master_announces_a_table_schedules_its_bots_and_hooks_its_commit() -> None:
    found = []
    for package in SITE:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                name = path.relative_to(ROOT).as_posix()
                found += bypasses(name, path.read_text())
    assert found == []


def test_the_check_finds_an_announcement_around_the_master() -> None:
    source = (
        "from django.db import transaction\n"
        "from game.sockets import events\n"
        "def leave(pk):\n"
        "    transaction.on_commit(lambda: events.table_changed(pk))\n"
        "    master.get().announcer.changed(pk)\n"
        "    master.get().scheduler.turn(plan)\n"
    )
    assert bypasses("lobby/seat_commands.py", source) == [
        "lobby/seat_commands.py: on_commit",
        "lobby/seat_commands.py: table_changed",
        "lobby/seat_commands.py: announcer",
        "lobby/seat_commands.py: scheduler",
    ]


@pytest.fixture
def told(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, bool]]:
    """The tables the master's announcer is told changed, and whether a
    transaction was open then."""
    heard: list[tuple[int, bool]] = []

    def changed(pk: int) -> None:
        heard.append((pk, transaction.get_connection().in_atomic_block))

    monkeypatch.setattr(master.get().announcer, "changed", changed)
    return heard


def test_a_seat_taken_inside_a_transaction_is_told_after_its_commit(
    live: InlineScheduler, told: list[tuple[int, bool]]
) -> None:
    table = seating.create_table()
    with transaction.atomic():
        seating.take_seat(table, 0, guest_id="g0", guest_name="Ann")
        assert told == []  # not before the outermost commit
    assert told == [(table.pk, False)]


def test_a_refused_change_is_not_told(live: InlineScheduler, told: list[tuple[int, bool]]) -> None:
    table = make_table("HHHH")  # playing: seats no longer change
    told.clear()
    with pytest.raises(SeatError):
        seating.take_seat(table, 0, guest_id="late", guest_name="Late")
    assert told == []


def test_the_first_bot_is_scheduled_by_the_master_after_the_start(
    live: InlineScheduler, told: list[tuple[int, bool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    table = make_table("BBBB", start=False)
    told.clear()
    turns: list[tuple[int, bool]] = []
    scheduler = master.get().scheduler
    monkeypatch.setattr(
        scheduler,
        "turn",
        lambda plan: turns.append((plan.table_id, transaction.get_connection().in_atomic_block)),
    )
    seating.start_table(table)
    assert told == [(table.pk, False)] and turns == [(table.pk, False)]


def test_abandoned_tables_are_closed_through_the_master(
    live: InlineScheduler, told: list[tuple[int, bool]]
) -> None:
    table = make_table("HHHH")
    told.clear()
    Table.objects.filter(pk=table.pk).update(last_human_at=timezone.now() - timedelta(days=1))
    assert abandoned.close_abandoned() == [table.pk]
    assert told == [(table.pk, False)]
    table.refresh_from_db()
    assert table.status == Table.Status.ABANDONED


def test_a_change_that_raises_is_rolled_back_and_not_told(
    live: InlineScheduler, told: list[tuple[int, bool]]
) -> None:
    table = seating.create_table()

    def write() -> Changed[None]:
        Table.objects.filter(pk=table.pk).update(turn_seconds=99)
        raise SeatError("no")

    with pytest.raises(SeatError):
        master.get().change(write)
    table.refresh_from_db()
    assert table.turn_seconds != 99 and told == []
