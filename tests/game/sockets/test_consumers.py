"""The table websocket: seats from the session, per-seat views, refused frames, chat."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.db import OperationalError

from game import master
from game.engine import Rules
from game.models import Action, Table
from game.moves import matches
from game.sockets.routing import websocket_urlpatterns
from tests.support.helpers import QUICK_RULES, make_table
from tests.support.inline import InlineScheduler
from tests.support.sockets import (
    TIMEOUT,
    cards_in,
    close_sync_thread_connections,  # noqa: F401  (the fixture)
    connect,
    connect_through_the_site,
    held_at,
    next_state,
    play_match,
    receive,
    refused,
)

pytestmark = pytest.mark.django_db(transaction=True)


async def test_four_seats_play_a_full_round(live: InlineScheduler, machine_speed: None) -> None:
    table = await database_sync_to_async(make_table)("HHHH", Rules(winning_goal=500))
    socks, states = {}, {}
    for seat in range(4):
        socks[seat], states[seat] = await connect(table, f"g{seat}")
        assert states[seat]["view"]["seat"] == seat
    frames: dict[Any, list[dict[str, Any]]] = {s: [] for s in socks}
    await play_match(table, socks, states, socks, frames, random.Random(7), stop_after_round=1)
    await database_sync_to_async(table.refresh_from_db)()
    records = await database_sync_to_async(lambda: table.round_records.count())()
    assert records == 1
    final = states[0]["view"]
    assert final["round_number"] == 2 and len(final["history"]) == 1
    assert final["version"] == table.version
    for comm in socks.values():
        await comm.disconnect()


async def test_no_frame_shows_a_card_another_seat_holds(
    live: InlineScheduler, machine_speed: None
) -> None:
    # Two humans, two bots and a spectator, over a whole match of a few rounds.
    table = await database_sync_to_async(make_table)("HBHB", QUICK_RULES)
    socks: dict[Any, WebsocketCommunicator] = {}
    states: dict[Any, dict[str, Any]] = {}
    for seat in (0, 2):
        socks[seat], states[seat] = await connect(table, f"g{seat}")
    socks["spectator"], states["spectator"] = await connect(table)
    frames = {key: [state] for key, state in states.items()}
    humans = {0: socks[0], 2: socks[2]}
    await play_match(table, humans, states, socks, frames, random.Random(11))
    await database_sync_to_async(table.refresh_from_db)()
    assert table.status == Table.Status.FINISHED

    def check() -> int:
        checked = 0
        for key, seen in frames.items():
            seat = key if isinstance(key, int) else None
            for frame in seen:
                held = held_at(table, frame["version"])
                others = set().union(*(h for s, h in enumerate(held) if s != seat))
                assert cards_in(frame) & others == set(), (key, frame["version"])
                view = frame["view"]
                if seat is not None and view["hand"] is not None:
                    assert set(view["hand"]) == held[seat] <= cards_in(frame)
                if seat is None:
                    assert view["hand"] is None and view["legal_actions"] == []
                checked += 1
        return checked

    assert await database_sync_to_async(check)() > 10
    for comm in socks.values():
        await comm.disconnect()


async def test_refused_frames_get_an_error_and_change_nothing(live: InlineScheduler) -> None:
    table = await database_sync_to_async(make_table)("HHHH", Rules(blind_nil=False))
    to_act = (await database_sync_to_async(matches.load_match)(table)).round.to_act
    other = (to_act + 1) % 4
    comm, state = await connect(table, f"g{to_act}")
    idle, _ = await connect(table, f"g{other}")
    version = state["version"]
    bid = {"type": "bid", "tricks": 3}
    assert (await refused(comm, "{not json"))["message"] == "that frame is not JSON"
    await refused(comm, json.dumps([1, 2]))
    await refused(comm, json.dumps({"type": "cheat"}))
    big = json.dumps({"type": "act", "action": bid, "version": version, "pad": "x" * 5000})
    assert "4096" in (await refused(comm, big))["message"]
    await refused(comm, json.dumps({"type": "act", "action": "3", "version": version}))
    await refused(comm, json.dumps({"type": "act", "action": bid}))
    illegal = await refused(
        comm,
        json.dumps({"type": "act", "action": {"type": "bid", "tricks": 14}, "version": version}),
    )
    assert illegal["code"] == "bad_action"
    play = await refused(
        comm,
        json.dumps({"type": "act", "action": {"type": "play", "card": "AS"}, "version": version}),
    )
    assert play["code"] == "illegal"
    # Out of turn: the other seat's socket.
    turn = await refused(idle, json.dumps({"type": "act", "action": bid, "version": version}))
    assert turn["code"] == "illegal" and "turn" in turn["message"]
    # Stale: an error, then the full state.
    stale = await refused(comm, json.dumps({"type": "act", "action": bid, "version": version + 3}))
    assert stale["code"] == "stale"
    assert (await comm.receive_json_from(timeout=TIMEOUT))["type"] == "state"
    assert await comm.receive_nothing(timeout=0.05)
    count = await database_sync_to_async(lambda: Action.objects.filter(table=table).count())()
    assert count == 0
    await comm.disconnect()
    await idle.disconnect()


async def test_a_database_failure_gets_an_error_and_the_socket_stays(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = await database_sync_to_async(make_table)("HHHH", Rules(blind_nil=False))
    to_act = (await database_sync_to_async(matches.load_match)(table)).round.to_act
    comm, state = await connect(table, f"g{to_act}")
    act = {"type": "act", "action": {"type": "bid", "tricks": 3}, "version": state["version"]}

    async def down(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("the database went away")

    monkeypatch.setattr(master.TableMaster, "submit_on_loop", down)
    error = await refused(comm, json.dumps(act))
    assert error["code"] == "try_again" and "try again" in error["message"]
    assert (await comm.receive_json_from(timeout=TIMEOUT))["version"] == state["version"]
    monkeypatch.undo()
    await comm.send_json_to(act)  # the same move again, once the database is back
    assert (await next_state(comm, state["version"] + 1))["version"] == state["version"] + 1
    await comm.disconnect()


async def test_a_socket_cannot_act_for_another_seat(live: InlineScheduler) -> None:
    table = await database_sync_to_async(make_table)("HHHH", Rules(blind_nil=False))
    to_act = (await database_sync_to_async(matches.load_match)(table)).round.to_act
    other = (to_act + 2) % 4
    comm, state = await connect(table, f"g{other}")
    spectator, _ = await connect(table)
    # The frame names the seat to act: the server ignores it and uses the socket's seat.
    frame = {"type": "act", "action": {"type": "bid", "tricks": 3, "seat": to_act}, "version": 0}
    error = await refused(comm, json.dumps(frame))
    assert error["code"] == "illegal"
    assert (await refused(spectator, json.dumps(frame)))["code"] == "spectator"
    count = await database_sync_to_async(lambda: Action.objects.filter(table=table).count())()
    assert count == 0
    await comm.disconnect()
    await spectator.disconnect()


async def test_resync_sends_the_full_state(live: InlineScheduler) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    comm, state = await connect(table, "g1")
    await comm.send_json_to({"type": "resync", "version": 0})
    again = await comm.receive_json_from(timeout=TIMEOUT)
    assert again == state
    await comm.disconnect()


async def test_chat_is_broadcast_limited_and_rate_limited(live: InlineScheduler) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    north, _ = await connect(table, "g0")
    south, _ = await connect(table, "g2")
    anonymous, _ = await connect(table)
    await north.send_json_to({"type": "chat", "text": "  <b>hi</b>  "})
    for comm in (north, south, anonymous):
        line = await receive(comm)
        assert line.pop("at")  # when it was said, for the page to show
        assert line == {"type": "chat", "seat": 0, "name": "Guest 0", "text": "<b>hi</b>"}
    assert (await refused(north, json.dumps({"type": "chat", "text": "x" * 201})))["code"] == "chat"
    await refused(north, json.dumps({"type": "chat", "text": "   "}))
    await refused(anonymous, json.dumps({"type": "chat", "text": "hello"}))
    for _ in range(5):  # five in ten seconds, then no more
        await south.send_json_to({"type": "chat", "text": "spam"})
        assert (await receive(south))["text"] == "spam"
    too_many = await refused(south, json.dumps({"type": "chat", "text": "spam"}))
    assert too_many["code"] == "chat_rate"
    for comm in (north, south, anonymous):
        await comm.disconnect()


async def test_an_unknown_table_is_refused() -> None:
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/table/nope/")
    comm.scope["user"] = AnonymousUser()
    comm.scope["session"] = {}
    connected, code = await comm.connect(timeout=TIMEOUT)
    assert not connected and code == 4404


async def test_the_site_finds_the_seat_from_the_session_cookie(live: InlineScheduler) -> None:
    from django.contrib.sessions.backends.db import SessionStore

    table = await database_sync_to_async(make_table)("HHHH")

    def session_key() -> str:
        session = SessionStore()
        session["guest_id"] = "g3"
        session["guest_name"] = "Guest 3"
        session.create()
        return str(session.session_key)

    key = await database_sync_to_async(session_key)()
    comm, state = await connect_through_the_site(table, key)
    assert state["view"]["seat"] == 3
    await comm.disconnect()


async def test_a_signed_in_user_is_found_from_the_session_cookie(live: InlineScheduler) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from game.models import Seat

    def setup() -> tuple[Table, str]:
        user = get_user_model().objects.create_user("northpaw", password="pw-north-123")
        table = make_table("HHHH")
        Seat.objects.filter(table=table, position=0).update(user=user, guest_id="")
        client = Client()
        client.force_login(user)
        return table, client.cookies["sessionid"].value

    table, key = await database_sync_to_async(setup)()
    comm, state = await connect_through_the_site(table, key)
    assert state["view"]["seat"] == 0
    assert state["view"]["table"]["seats"][0]["name"] == "northpaw"
    await comm.disconnect()
