"""Tables nobody visits are closed and leave the lobby (game.abandoned)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from game import abandoned, master
from game.engine import Bid
from game.errors import NotPlaying
from game.models import Table
from game.sockets import visits
from lobby.views import open_tables
from tests.support.helpers import make_table
from tests.support.inline import InlineScheduler
from tests.support.sockets import TIMEOUT, connect

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_sweep() -> Any:
    abandoned.reset()
    yield
    abandoned.reset()


def _last_visit(table: Table, minutes_ago: float) -> None:
    ago = timezone.now() - timedelta(minutes=minutes_ago)
    Table.objects.filter(pk=table.pk).update(last_human_at=ago)


def _listed() -> set[str]:
    return {t["id"] for t in open_tables()}


def test_an_open_table_nobody_visits_leaves_the_lobby_and_is_closed(settings: Any) -> None:
    settings.SPADES_ABANDON_MINUTES = 60
    quiet = make_table("HH", start=False)
    lively = make_table("HH", start=False)
    assert {quiet.public_id, lively.public_id} <= _listed()
    _last_visit(quiet, 61)
    _last_visit(lively, 59)
    abandoned.reset()  # the first listing swept; the next sweep would wait a minute
    assert _listed() >= {lively.public_id} and quiet.public_id not in _listed()
    quiet.refresh_from_db()
    lively.refresh_from_db()
    assert quiet.status == Table.Status.ABANDONED and quiet.finished_at is not None
    assert lively.status == Table.Status.OPEN


def test_a_seat_change_is_a_visit(settings: Any) -> None:
    table = make_table("H", start=False)
    _last_visit(table, 120)
    from game import seating

    seating.take_seat(table, 1, guest_id="g1", guest_name="Back")
    assert table.public_id in _listed()


def test_a_playing_table_is_closed_and_its_bots_stop(live: InlineScheduler) -> None:
    table = make_table("HBBB", stand_in_bots=False)
    _last_visit(table, 600)
    assert abandoned.close_abandoned() == [table.pk]
    table.refresh_from_db()
    assert table.status == Table.Status.ABANDONED
    with pytest.raises(NotPlaying, match="closed"):
        master.submit(table.pk, 0, Bid(0, 3), table.version)
    assert abandoned.close_abandoned() == []  # closed once; finished tables are never touched


def test_the_command_closes_them(capsys: Any) -> None:
    table = make_table("HHHH")
    finished = make_table("HH", start=False)
    Table.objects.filter(pk=finished.pk).update(status=Table.Status.FINISHED)
    _last_visit(table, 600)
    _last_visit(finished, 600)
    call_command("close_abandoned_tables")
    assert "closed 1 abandoned table(s)" in capsys.readouterr().out
    assert Table.objects.get(pk=finished.pk).status == Table.Status.FINISHED


def test_the_lobby_sweeps_at_most_once_a_minute() -> None:
    first = make_table("H", start=False)
    _last_visit(first, 600)
    Client().get("/")
    second = make_table("H", start=False)
    _last_visit(second, 600)
    Client().get("/")
    assert Table.objects.get(pk=first.pk).status == Table.Status.ABANDONED
    assert Table.objects.get(pk=second.pk).status == Table.Status.OPEN  # swept next minute
    assert second.public_id not in _listed()  # but already out of the list


async def test_a_players_socket_is_a_visit_and_a_spectators_is_not(
    live: InlineScheduler, monkeypatch: Any
) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    await database_sync_to_async(_last_visit)(table, 600)
    spectator, _ = await connect(table)
    await database_sync_to_async(table.refresh_from_db)()
    assert timezone.now() - table.last_human_at > timedelta(minutes=500)
    player, _ = await connect(table, "g1")
    await database_sync_to_async(table.refresh_from_db)()
    assert timezone.now() - table.last_human_at < timedelta(minutes=1)

    # The page's ping, once a minute, keeps the visit fresh; it gets no answer.
    # The process writes it with its other sockets' visits (game.sockets.visits).
    await database_sync_to_async(_last_visit)(table, 30)
    monkeypatch.setattr(abandoned, "TOUCH_EVERY", 0.0)
    monkeypatch.setattr(visits, "WRITE_AFTER", 0.05)
    await player.send_json_to({"type": "ping"})
    assert await player.receive_nothing(timeout=0.3)
    await database_sync_to_async(table.refresh_from_db)()
    assert timezone.now() - table.last_human_at < timedelta(minutes=1)
    for comm in (spectator, player):
        await comm.disconnect()


async def test_open_sockets_see_the_table_closed(live: InlineScheduler) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    comm, first = await connect(table, "g0")
    assert first["view"]["table"]["status"] == "playing"
    await database_sync_to_async(_last_visit)(table, 600)
    await database_sync_to_async(abandoned.close_abandoned)()
    frame = await comm.receive_json_from(timeout=TIMEOUT)
    assert frame["type"] == "state" and frame["view"]["table"]["status"] == "abandoned"
    await comm.send_json_to({"type": "act", "action": {"type": "bid", "tricks": 3}, "version": 0})
    error = await comm.receive_json_from(timeout=TIMEOUT)
    assert error["type"] == "error" and error["code"] == "not_playing"
    await comm.disconnect()


async def test_a_table_closed_before_it_started_still_has_a_view(
    live: InlineScheduler,
) -> None:
    table = await database_sync_to_async(make_table)("HH", start=False)
    await database_sync_to_async(_last_visit)(table, 600)
    await database_sync_to_async(abandoned.close_abandoned)()
    _, first = await connect(table, "g0")
    assert first["view"]["table"]["status"] == "abandoned"
