"""Table sockets for the tests: a guest's or a spectator's socket past its first
frames, the next state, a refused frame, whole matches played over sockets, and
the fixture that closes the sockets' thread's connections (take it in by name)."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from game.engine import format_card
from game.engine.cards import cards_of
from game.models import Table
from game.moves import matches
from game.sockets.routing import websocket_urlpatterns


def _drop_thread_connections() -> None:
    """Really close this thread's connections, even to the in-memory test database.

    Consumers use the database from asgiref's one sync thread, which outlives
    the test; a connection left there makes later tests without database
    access fail when Channels tidies connections up. (The test database
    lives on: the main thread's connection keeps it.)
    """
    from django.db import connections
    from django.db.backends.base.base import BaseDatabaseWrapper

    for conn in connections.all(initialized_only=True):
        if conn.connection is not None:
            BaseDatabaseWrapper.close(conn)


@pytest.fixture(autouse=True)
async def close_sync_thread_connections(transactional_db: None) -> Any:
    yield
    await sync_to_async(_drop_thread_connections, thread_sensitive=True)()


CARD = re.compile(r"^[2-9TJQKA][CDHS]$")


TIMEOUT = 3


async def connect(
    table: Table, guest: str | None = None, name: str = ""
) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    """A socket for guest ``guest`` (e.g. 'g2' holds seat 2), or a spectator,
    past the frames every socket gets on connecting: its state, the chat
    history and who watches."""
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/table/{table.public_id}/")
    comm.scope["user"] = AnonymousUser()
    comm.scope["session"] = {"guest_id": guest, "guest_name": name} if guest else {}
    connected, _ = await comm.connect(timeout=TIMEOUT)
    assert connected
    first = await comm.receive_json_from(timeout=TIMEOUT)
    assert first["type"] == "state"
    assert (await comm.receive_json_from(timeout=TIMEOUT))["type"] == "chat_history"
    assert (await comm.receive_json_from(timeout=TIMEOUT))["type"] == "watchers"
    return comm, first


async def connect_through_the_site(
    table: Table, session_key: str
) -> tuple[WebsocketCommunicator, dict[str, Any]]:
    """A socket through the site's whole ASGI stack (origin check, session cookie, auth)."""
    from spadesite.asgi import application

    comm = WebsocketCommunicator(
        application,
        f"/ws/table/{table.public_id}/",
        headers=[
            (b"origin", b"http://testserver"),
            (b"cookie", f"sessionid={session_key}".encode()),
        ],
    )
    connected, _ = await comm.connect(timeout=TIMEOUT)
    assert connected
    return comm, await comm.receive_json_from(timeout=TIMEOUT)


async def next_state(comm: WebsocketCommunicator, at_least: int = 0) -> dict[str, Any]:
    while True:
        frame = await comm.receive_json_from(timeout=TIMEOUT)
        if frame["type"] == "state" and frame["version"] >= at_least:
            return frame


async def receive(comm: WebsocketCommunicator) -> dict[str, Any]:
    """The next frame, past any news of who watches (a spectator came or went)."""
    while True:
        frame = await comm.receive_json_from(timeout=TIMEOUT)
        if frame["type"] != "watchers":
            return frame


async def refused(comm: WebsocketCommunicator, text: str) -> dict[str, Any]:
    await comm.send_to(text_data=text)
    frame = await receive(comm)
    assert frame["type"] == "error", frame
    assert frame["message"]
    return frame


def cards_in(value: Any) -> set[str]:
    """Every card-like string anywhere in a frame."""
    if isinstance(value, str):
        return {value} if CARD.match(value) else set()
    if isinstance(value, dict):
        return set().union(*(cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(cards_in(v) for v in value)) if value else set()
    return set()


def held_at(table: Table, version: int) -> list[set[str]]:
    """The four hands as they are, server-side, at ``version``."""
    table.refresh_from_db()
    match = matches.load_match(table, version)
    return [{format_card(c) for c in cards_of(h)} for h in match.round.hands]


async def play_match(
    table: Table,
    humans: dict[int, WebsocketCommunicator],
    states: dict[Any, dict[str, Any]],
    socks: dict[Any, WebsocketCommunicator],
    frames: dict[Any, list[dict[str, Any]]],
    rng: random.Random,
    stop_after_round: int | None = None,
) -> None:
    """Humans act over their sockets (random legal actions) until the match ends."""
    while True:
        view = max(states.values(), key=lambda f: f["version"])["view"]
        if view["table"]["status"] == "finished":
            return
        if stop_after_round is not None and view["round_number"] > stop_after_round:
            return
        seat = view["to_act"]
        assert seat in humans, "bots move before the state reaches the sockets"
        mine = states[seat]["view"]
        assert mine["to_act"] == seat and mine["legal_actions"]
        action = rng.choice(mine["legal_actions"])
        frame = {"type": "act", "action": action, "version": mine["version"]}
        await humans[seat].send_json_to(frame)
        reply = await next_state(humans[seat], mine["version"] + 1)
        target = reply["version"]
        for key, comm in socks.items():
            frame = reply if comm is humans.get(seat) else await next_state(comm, target)
            assert frame["version"] == target
            states[key] = frame
            frames[key].append(frame)
