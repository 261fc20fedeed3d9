"""Private tables stay private, every frame field is checked, and one player
cannot wear the server down (rate limits, socket caps)."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from types import SimpleNamespace
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client

from game import master
from game.engine import Rules
from game.models import Action, Table
from game.moves import matches
from game.sockets import client_frames, limits
from game.sockets.routing import websocket_urlpatterns
from lobby.access import CLOSE_PRIVATE
from lobby.models import TableListing
from tests.support.helpers import make_table
from tests.support.inline import InlineScheduler
from tests.support.sockets import TIMEOUT, connect, refused

pytestmark = pytest.mark.django_db(transaction=True)


def _private(table: Table) -> Table:
    TableListing.objects.update_or_create(table=table, defaults={"private": True})
    return table


def _session(**values: Any) -> str:
    session = SessionStore()
    for key, value in values.items():
        session[key] = value
    session.create()
    return str(session.session_key)


async def _site_socket(table: Table, session_key: str | None) -> tuple[bool, int | None]:
    """Open a socket through the site's whole ASGI stack: (accepted, close code)."""
    from spadesite.asgi import application

    headers = [(b"origin", b"http://testserver")]
    if session_key:
        headers.append((b"cookie", f"sessionid={session_key}".encode()))
    comm = WebsocketCommunicator(application, f"/ws/table/{table.public_id}/", headers=headers)
    connected, code = await comm.connect(timeout=TIMEOUT)
    if connected:
        await comm.disconnect()
    return connected, code


# ----- private tables ------------------------------------------------------------------


async def test_a_private_table_refuses_anonymous_and_uninvited_sockets(
    live: InlineScheduler,
) -> None:
    table = await database_sync_to_async(lambda: _private(make_table("HHHH")))()
    stranger = await database_sync_to_async(_session)(guest_id="x1", guest_name="Stranger")
    assert await _site_socket(table, None) == (False, CLOSE_PRIVATE)
    assert await _site_socket(table, stranger) == (False, CLOSE_PRIVATE)


async def test_a_private_table_takes_its_players_and_invitees(live: InlineScheduler) -> None:
    table = await database_sync_to_async(lambda: _private(make_table("HHHH")))()
    player = await database_sync_to_async(_session)(guest_id="g1", guest_name="Guest 1")
    invitee = await database_sync_to_async(_session)(
        guest_id="x2", guest_name="Friend", invited_tables=[table.pk]
    )
    assert (await _site_socket(table, player))[0]
    assert (await _site_socket(table, invitee))[0]


async def test_a_public_table_stays_watchable(live: InlineScheduler) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    assert (await _site_socket(table, None))[0]


def test_the_invite_link_opens_the_private_table_socket_to_that_browser(
    live: InlineScheduler,
) -> None:
    table = _private(make_table("HHHH"))
    client = Client()
    assert client.get(f"/t/{table.public_id}/").status_code == 403
    client.get(f"/join/{table.invite_token}/")
    assert client.get(f"/t/{table.public_id}/").status_code == 200
    assert table.pk in client.session["invited_tables"]


# ----- every field checked ------------------------------------------------------------


def _act(action: Any, version: Any = 0, **more: Any) -> dict[str, Any]:
    return {"type": "act", "action": action, "version": version, **more}


BID = {"type": "bid", "tricks": 3}


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (_act(BID, 2**64), "bad_action"),
        (_act(BID, -1), "bad_action"),
        (_act(BID, "1"), "bad_action"),
        (_act(BID, True), "bad_action"),
        (_act({"type": "bid", "tricks": 2**70}), "bad_action"),
        (_act({"type": "bid", "tricks": 3.5}), "bad_action"),
        (_act({**BID, "x": 1}), "bad_action"),
        (_act({**BID, "seat": 9}), "bad_action"),
        (_act({"type": "play", "card": "A" * 500}), "bad_action"),
        (_act({"type": "play", "card": 51}), "bad_action"),
        (_act({"type": "pass_cards", "cards": ["AS"] * 14}), "bad_action"),
        (_act({"type": "nuke"}), "bad_action"),
        (_act([]), "bad_action"),
        (_act(BID, 0, x=1), "bad_frame"),
        ({"type": "resync", "version": 2**64}, "bad_frame"),
        ({"type": "resync", "version": None, "extra": []}, "bad_frame"),
        ({"type": "chat", "text": 7}, "chat"),
        ({"type": "chat", "text": "hi", "seat": 0}, "bad_frame"),
        ({"type": 3}, "bad_frame"),
        ({}, "bad_frame"),
    ],
)
async def test_a_field_out_of_range_or_of_the_wrong_type_is_refused_and_the_socket_stays(
    live: InlineScheduler, frame: dict[str, Any], code: str
) -> None:
    table = await database_sync_to_async(make_table)("HHHH", Rules(blind_nil=False))
    to_act = (await database_sync_to_async(matches.load_match)(table)).round.to_act
    comm, state = await connect(table, f"g{to_act}")
    error = await refused(comm, json.dumps(frame))
    assert error["code"] == code, error
    # The socket is still open and nothing changed.
    await comm.send_json_to({"type": "resync", "version": 0})
    assert (await comm.receive_json_from(timeout=TIMEOUT)) == state
    count = await database_sync_to_async(Action.objects.filter(table=table).count)()
    assert count == 0
    await comm.disconnect()


async def test_an_exception_in_a_handler_is_an_error_frame_and_one_log_line(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    table = await database_sync_to_async(make_table)("HHHH", Rules(blind_nil=False))
    to_act = (await database_sync_to_async(matches.load_match)(table)).round.to_act
    comm, state = await connect(table, f"g{to_act}")

    async def broken(*args: Any, **kwargs: Any) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(master.TableMaster, "submit_on_loop", broken)
    act = {"type": "act", "action": {"type": "bid", "tricks": 3}, "version": state["version"]}
    error = await refused(comm, json.dumps(act))
    assert error["code"] == "server_error"
    lines = [r for r in caplog.records if r.name == "game.sockets.consumers"]
    assert len(lines) == 1 and "ZeroDivisionError" in lines[0].getMessage()
    assert lines[0].exc_info is None  # one line, no traceback
    monkeypatch.undo()
    await comm.send_json_to(act)
    frame = await comm.receive_json_from(timeout=TIMEOUT)
    assert frame["type"] == "state" and frame["version"] == state["version"] + 1
    await comm.disconnect()


def test_the_frame_parser_refuses_what_the_table_page_never_sends() -> None:
    assert client_frames.parse('{"type": "resync"}') == client_frames.Resync(None)
    act = client_frames.parse(
        '{"type": "act", "action": {"type": "play", "card": "AS", "seat": 2}, "version": 7}'
    )
    assert act == client_frames.Act({"type": "play", "card": "AS", "seat": 2}, 7)
    with pytest.raises(client_frames.FrameRefused, match="unknown field"):
        client_frames.parse('{"type": "chat", "text": "hi", "to": "everyone"}')


def test_seat_positions_are_ascii_digits_only(live: InlineScheduler) -> None:
    from tests.support.lobby_client import table_form_data

    client = Client()
    client.post("/guest/", {"name": "Host"})
    client.post("/tables/new/", table_form_data(seat_0="me", seat_1="open", seat_2="open"))
    table = Table.objects.latest("created_at")
    assert table.seats.count() == 1
    url = f"/t/{table.public_id}/seat/"
    for position in ("\u0663", "\uff13", " 3", "3.0", "-1"):
        response = client.post(url, {"op": "bot", "position": position, "bot": "Random+Random"})
        assert response.status_code == 400, position
    assert table.seats.count() == 1
    assert client.post(url, {"op": "bot", "position": "3"}).status_code == 200


# ----- rate limits -------------------------------------------------------------------


async def test_chat_is_limited_per_player_across_all_their_sockets(
    live: InlineScheduler,
) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    sockets = [(await connect(table, "g0"))[0] for _ in range(4)]
    listener, _ = await connect(table, "g1")
    sent = refused_count = 0
    for i in range(20):
        comm = sockets[i % 4]
        await comm.send_json_to({"type": "chat", "text": f"line {i}"})
        frame = await comm.receive_json_from(timeout=TIMEOUT)
        if frame["type"] == "error":
            assert frame["code"] == "chat_rate"
            refused_count += 1
            continue
        assert frame["type"] == "chat" and frame["text"] == f"line {i}"
        sent += 1
        for other in sockets:  # the same line reaches this player's other sockets
            if other is not comm:
                echo = await other.receive_json_from(timeout=TIMEOUT)
                assert echo["type"] == "chat" and echo["text"] == f"line {i}"
    assert sent == limits.DEFAULT_LIMITS["chat"].count and refused_count == 15
    heard = []
    while not await listener.receive_nothing(timeout=0.1):
        heard.append(await listener.receive_json_from(timeout=TIMEOUT))
    assert len([f for f in heard if f["type"] == "chat"]) == sent  # the other player
    for comm in [*sockets, listener]:
        await comm.disconnect()


async def test_a_player_may_open_only_so_many_sockets(live: InlineScheduler) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    per_player, _ = limits.MAX_SOCKETS
    open_ = [(await connect(table, "g0"))[0] for _ in range(per_player)]
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/table/{table.public_id}/")
    comm.scope["user"] = AnonymousUser()
    comm.scope["session"] = {"guest_id": "g0", "guest_name": ""}
    assert (await comm.connect(timeout=TIMEOUT))[0]
    error = await comm.receive_json_from(timeout=TIMEOUT)
    assert error["type"] == "error" and error["code"] == "too_many_sockets"
    assert (await comm.receive_output(timeout=TIMEOUT))["code"] == 4429
    # Closing one frees a place.
    await open_.pop().disconnect()
    again, _ = await connect(table, "g0")
    for c in [*open_, again]:
        await c.disconnect()


async def test_a_lab_sessions_participants_share_one_address_but_not_its_cap(
    live: InlineScheduler, settings: Any
) -> None:
    """Study participants (sessions bound to their table) are counted as
    players only: a lab puts them all behind one address. Anyone else from
    that address still meets the address's cap."""
    settings.SPADES_MAX_SOCKETS = (8, 3)
    table = await database_sync_to_async(make_table)("HHHH")

    async def socket(guest: str, bound: bool) -> tuple[WebsocketCommunicator, dict[str, Any]]:
        comm = WebsocketCommunicator(
            URLRouter(websocket_urlpatterns), f"/ws/table/{table.public_id}/"
        )
        comm.scope["user"] = AnonymousUser()
        comm.scope["client"] = ("10.1.2.3", 40000)
        comm.scope["session"] = {"guest_id": guest, "guest_name": guest}
        if bound:
            comm.scope["session"]["bound_table"] = table.public_id
        assert (await comm.connect(timeout=TIMEOUT))[0]
        return comm, await comm.receive_json_from(timeout=TIMEOUT)

    lab = [await socket(f"g{n}", bound=True) for n in range(4)]  # four seats, one address
    assert all(first["type"] == "state" for _, first in lab)
    others = [await socket(f"x{n}", bound=False) for n in range(4)]
    firsts = [first for _, first in others]
    assert [f["type"] for f in firsts[:3]] == ["state"] * 3
    assert firsts[3]["type"] == "error" and firsts[3]["code"] == "too_many_sockets"
    for comm, _ in [*lab, *others[:3]]:
        await comm.disconnect()


async def test_a_resync_burst_is_refused_and_other_tables_keep_their_pace(
    live: InlineScheduler,
) -> None:
    noisy_table = await database_sync_to_async(make_table)("HHHH")
    quiet_table = await database_sync_to_async(make_table)("HHHH")
    noisy, _ = await connect(noisy_table, "g0")
    quiet, _ = await connect(quiet_table, "g1")

    async def resync_time(comm: WebsocketCommunicator) -> float:
        start = time.perf_counter()
        await comm.send_json_to({"type": "resync"})
        assert (await comm.receive_json_from(timeout=TIMEOUT))["type"] == "state"
        return time.perf_counter() - start

    before = statistics.median([await resync_time(quiet) for _ in range(5)])
    burst_started = time.monotonic()
    for _ in range(200):
        await noisy.send_json_to({"type": "resync"})
    answers = [await noisy.receive_json_from(timeout=TIMEOUT) for _ in range(200)]
    states = sum(1 for a in answers if a["type"] == "state")
    codes = {a["code"] for a in answers if a["type"] == "error"}
    # A window's count, and one more for each window a slow machine took over the burst.
    limit = limits.DEFAULT_LIMITS["resync"]
    windows = 1 + int((time.monotonic() - burst_started) // limit.seconds)
    assert states <= limit.count * windows and codes == {"rate_limited"}
    limits.reset()  # the quiet table's player shares the test's address
    during = statistics.median([await resync_time(quiet) for _ in range(5)])
    assert during < before * 5 + 0.05
    await noisy.disconnect()
    await quiet.disconnect()


async def test_a_frame_burst_is_refused_and_other_tables_keep_their_pace(
    live: InlineScheduler,
) -> None:
    noisy_table = await database_sync_to_async(make_table)("HHHH")
    quiet_table = await database_sync_to_async(make_table)("HHHH")
    noisy, _ = await connect(noisy_table, "gx")  # a guest watching: each act is refused
    quiet, _ = await connect(quiet_table, "g1")

    async def resync_time() -> float:
        start = time.perf_counter()
        await quiet.send_json_to({"type": "resync"})
        assert (await quiet.receive_json_from(timeout=TIMEOUT))["type"] == "state"
        return time.perf_counter() - start

    before = statistics.median([await resync_time() for _ in range(5)])
    burst = 3 * limits.DEFAULT_LIMITS["frames"].count
    act = {"type": "act", "action": {"type": "bid", "tricks": 3}, "version": 0}
    for _ in range(burst):
        await noisy.send_json_to(act)
    answers = [await noisy.receive_json_from(timeout=TIMEOUT) for _ in range(burst)]
    codes = [a["code"] for a in answers]
    # Fixed windows: a burst across a window's edge may pass up to twice the count.
    assert set(codes) == {"spectator", "rate_limited"}
    assert codes.count("spectator") <= 2 * limits.DEFAULT_LIMITS["frames"].count
    limits.reset()  # the quiet table's player shares the test's address
    during = statistics.median([await resync_time() for _ in range(5)])
    assert during < before * 5 + 0.05
    await noisy.disconnect()
    await quiet.disconnect()


def test_table_creation_and_seat_changes_are_limited(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One window throughout: the limits' fixed windows follow the clock, and a
    # minute's edge in the middle of this test would start the counts again.
    monkeypatch.setattr(limits, "time", SimpleNamespace(time=lambda: 6_000_030.0))
    client = Client()
    client.post("/guest/", {"name": "Eager"})
    statuses = [client.post("/play/").status_code for _ in range(12)]
    allowed = limits.DEFAULT_LIMITS["tables"].count
    assert statuses[:allowed] == [302] * allowed and statuses[allowed:] == [429, 429]
    assert Table.objects.count() == allowed
    table = Table.objects.first()
    assert table is not None
    seat_statuses = [
        client.post(f"/t/{table.public_id}/seat/", {"op": "leave"}).status_code
        for _ in range(limits.DEFAULT_LIMITS["seat"].count + 2)
    ]
    assert seat_statuses[-2:] == [429, 429]


def test_limits_count_per_address_too() -> None:
    seen = [limits.hit("tables", f"player{i}", "10.0.0.9") for i in range(35)]
    assert seen.count(True) == limits.DEFAULT_LIMITS["tables"].per_address
    assert limits.hit("tables", "player99", "10.0.0.10")  # another address


def test_limits_live_in_redis_on_the_production_stack(settings: Any, redis_url: str) -> None:
    import redis

    settings.REDIS_URL = redis_url
    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(f"{limits.KEY_PREFIX}chat:*redis-test*"):
        client.delete(key)
    allowed = [limits.hit("chat", "p-redis-test", "redis-test") for _ in range(8)]
    assert allowed == [True] * 5 + [False] * 3
    assert any(client.scan_iter(f"{limits.KEY_PREFIX}chat:p:p-redis-test:*"))


def test_limits_are_set_from_the_environment() -> None:
    assert limits.parse_limits("chat=3/10/9, tables=1/60/2") == {
        "chat": limits.Limit(3, 10.0, 9),
        "tables": limits.Limit(1, 60.0, 2),
    }
    assert limits.parse_max_sockets("2/5") == (2, 5)
    for bad in ("chats=3/10/9", "chat=3/10", "chat=3/x/9", "chat=0/10/9"):
        with pytest.raises(ValueError, match="SPADES_LIMITS"):
            limits.parse_limits(bad)
    for bad in ("8", "8/x", "0/4"):
        with pytest.raises(ValueError, match="SPADES_MAX_SOCKETS"):
            limits.parse_max_sockets(bad)
    env = {"SPADES_LIMITS": "chat=3/10/9", "SPADES_MAX_SOCKETS": "2/5", "PATH": "/usr/bin:/bin"}
    code = "from game.sockets import limits; print(limits.limit_of('chat'), limits.max_sockets())"
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Limit(count=3, seconds=10.0, per_address=9) (2, 5)" in out.stdout, out.stderr


# ----- production settings -------------------------------------------------------------


def test_check_deploy_is_clean_with_the_production_settings(postgres_url: str) -> None:
    env = {
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "x" * 20 + "production-secret-for-the-check-only-" + "y" * 20,
        "DJANGO_ALLOWED_HOSTS": "spades.example.org",
        "DJANGO_TLS": "1",
        "DATABASE_URL": postgres_url,
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


def test_every_page_carries_the_content_security_policy(live: InlineScheduler) -> None:
    response = Client().get("/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "unsafe-inline" not in policy


def test_the_favicon_is_served_for_pages_without_an_icon_link(live: InlineScheduler) -> None:
    response = Client().get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.svg")
