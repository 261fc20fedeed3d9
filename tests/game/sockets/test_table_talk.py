"""Table talk: chat kept for reload, quick reactions, who watches (game.sockets.talk,
game.sockets.watchers, the socket's frames)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async

from game.models import ChatLine
from game.sockets import talk, watchers
from tests.support.helpers import make_table
from tests.support.inline import InlineScheduler
from tests.support.sockets import TIMEOUT, connect, receive, refused

pytestmark = pytest.mark.django_db(transaction=True)


async def test_the_last_fifty_chat_lines_come_back_on_connecting(
    live: InlineScheduler,
) -> None:
    table = await database_sync_to_async(make_table)("HHHH")

    def fill() -> None:
        for i in range(55):
            talk.say(table.pk, i % 4, f"Guest {i % 4}", f"line {i}")

    await database_sync_to_async(fill)()
    comm = await _raw_connect(table, "g1")
    frames = [await comm.receive_json_from(timeout=TIMEOUT) for _ in range(3)]
    assert [f["type"] for f in frames] == ["state", "chat_history", "watchers"]
    lines = frames[1]["lines"]
    assert [line["text"] for line in lines] == [f"line {i}" for i in range(5, 55)]
    assert lines[0]["seat"] == 1 and lines[0]["name"] == "Guest 1" and lines[0]["at"]
    await comm.disconnect()


async def test_a_line_said_at_the_table_is_kept_for_the_next_visit(
    live: InlineScheduler,
) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    north, _ = await connect(table, "g0")
    await north.send_json_to({"type": "chat", "text": "good luck"})
    assert (await receive(north))["text"] == "good luck"
    await north.disconnect()
    kept = await database_sync_to_async(
        lambda: list(ChatLine.objects.values_list("seat", "name", "text"))
    )()
    assert kept == [(0, "Guest 0", "good luck")]
    again = await _raw_connect(table, "g0")
    await again.receive_json_from(timeout=TIMEOUT)  # state
    history = await again.receive_json_from(timeout=TIMEOUT)
    assert [line["text"] for line in history["lines"]] == ["good luck"]
    await again.disconnect()


async def test_a_named_spectator_may_chat_and_a_nameless_one_may_not(
    live: InlineScheduler,
) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    north, _ = await connect(table, "g0")
    ann, _ = await connect(table, "spectator-ann", name="Ann")
    nobody, _ = await connect(table)
    await ann.send_json_to({"type": "chat", "text": "nice play"})
    for comm in (north, ann, nobody):
        heard = await receive(comm)
        assert (heard["seat"], heard["name"], heard["text"]) == (None, "Ann", "nice play")
    assert (await refused(nobody, json.dumps({"type": "chat", "text": "hi"})))["code"] == "chat"
    for comm in (north, ann, nobody):
        await comm.disconnect()


async def test_everyone_sees_who_watches_as_spectators_come_and_go(
    live: InlineScheduler,
) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    north, _ = await connect(table, "g0")
    ann, _ = await connect(table, "spectator-ann", name="Ann")
    assert await _watchers(north) == ["Ann"]
    nobody, _ = await connect(table)
    assert await _watchers(north) == ["", "Ann"]
    assert await _watchers(ann) == ["", "Ann"]
    # A player who connects now is told the current list at once.
    south = await _raw_connect(table, "g2")
    frames = [await south.receive_json_from(timeout=TIMEOUT) for _ in range(3)]
    assert frames[2] == {"type": "watchers", "names": ["", "Ann"]}
    await ann.disconnect()
    assert await _watchers(north) == [""]
    for comm in (north, south, nobody):
        await comm.disconnect()


async def test_reactions_reach_the_table_are_checked_and_rate_limited(
    live: InlineScheduler,
) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    north, _ = await connect(table, "g0")
    east, _ = await connect(table, "g1")
    nobody, _ = await connect(table)
    await east.send_json_to({"type": "react", "emote": "well_played"})
    for comm in (north, east, nobody):
        assert await receive(comm) == {
            "type": "reaction",
            "seat": 1,
            "name": "Guest 1",
            "emote": "well_played",
        }
    for bad in ('{"type": "react", "emote": "<img>"}', '{"type": "react", "emote": 1}'):
        assert (await refused(east, bad))["code"] == "chat"
    assert (await refused(nobody, '{"type": "react", "emote": "wow"}'))["code"] == "chat"
    for _ in range(4):  # five in ten seconds (one above), then no more
        await east.send_json_to({"type": "react", "emote": "laugh"})
        assert (await receive(east))["emote"] == "laugh"
    too_many = await refused(east, '{"type": "react", "emote": "laugh"}')
    assert too_many["code"] == "chat_rate"
    # Reactions are of the moment: nothing is kept.
    assert await database_sync_to_async(ChatLine.objects.count)() == 0
    for comm in (north, east, nobody):
        await comm.disconnect()


async def test_a_watcher_not_seen_for_a_while_fades(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(watchers.time, "time", lambda: now[0])
    assert await watchers.seen(7, "chan-a", "Ann") == ["Ann"]
    now[0] += 100
    assert await watchers.seen(7, "chan-b", "Bo") == ["Ann", "Bo"]
    now[0] += watchers.STALE_SECONDS - 50  # Ann's socket last seen 150 + s ago: its process died
    assert await watchers.names(7) == ["Bo"]
    assert await watchers.gone(7, "chan-b", "Bo") == []


async def test_watchers_live_in_redis_on_the_production_stack(
    settings: Any, redis_url: str
) -> None:
    settings.REDIS_URL = redis_url
    import redis.asyncio as aioredis

    table_pk = 987654321  # no real table: a key of its own
    client = aioredis.Redis.from_url(redis_url)
    await client.delete(f"{watchers.KEY_PREFIX}{table_pk}")
    try:
        assert await watchers.seen(table_pk, "chan-a", "Ann") == ["Ann"]
        assert await watchers.seen(table_pk, "chan-b", "") == ["", "Ann"]
        # Another server process sees the same list.
        assert await client.zcard(f"{watchers.KEY_PREFIX}{table_pk}") == 2
        assert await watchers.gone(table_pk, "chan-a", "Ann") == [""]
        assert await watchers.names(table_pk) == [""]
    finally:
        await client.delete(f"{watchers.KEY_PREFIX}{table_pk}")
        await client.aclose()


async def _raw_connect(table: Any, guest: str) -> Any:
    from channels.routing import URLRouter
    from channels.testing import WebsocketCommunicator
    from django.contrib.auth.models import AnonymousUser

    from game.sockets.routing import websocket_urlpatterns

    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/table/{table.public_id}/")
    comm.scope["user"] = AnonymousUser()
    comm.scope["session"] = {"guest_id": guest, "guest_name": ""}
    assert (await comm.connect(timeout=TIMEOUT))[0]
    return comm


async def _watchers(comm: Any) -> list[str]:
    while True:
        frame = await comm.receive_json_from(timeout=TIMEOUT)
        if frame["type"] == "watchers":
            return frame["names"]


async def _watch(table: Any, query: str, user: Any) -> Any:
    """A spectator socket of ``user`` (the study monitor's watch link adds ``silent=1``)."""
    from channels.routing import URLRouter
    from channels.testing import WebsocketCommunicator

    from game.sockets.routing import websocket_urlpatterns

    path = f"/ws/table/{table.public_id}/{query}"
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), path)
    comm.scope["user"] = user
    comm.scope["session"] = {"guest_id": "spectator-bo", "guest_name": "Bo"}
    assert (await comm.connect(timeout=TIMEOUT))[0]
    frames = [await comm.receive_json_from(timeout=TIMEOUT) for _ in range(3)]
    assert [f["type"] for f in frames] == ["state", "chat_history", "watchers"]
    assert not frames[0].get("hand")  # a spectator's: no hand
    return comm


async def test_staff_watching_silently_are_unseen_and_cannot_chat(
    live: InlineScheduler,
) -> None:
    from django.contrib.auth.models import AnonymousUser, User

    table = await database_sync_to_async(make_table)("HHHH")
    staff = await database_sync_to_async(User.objects.create)(username="researcher", is_staff=True)
    north, _ = await connect(table, "g0")
    silent = await _watch(table, "?silent=1", staff)
    await silent.send_json_to({"type": "ping"})
    chat = json.dumps({"type": "chat", "text": "hi"})
    assert (await refused(silent, chat))["code"] == "spectator"
    react = json.dumps({"type": "react", "emote": "wow"})
    assert (await refused(silent, react))["code"] == "spectator"
    await silent.disconnect()
    # Nobody was told of a watcher; the table's list never held one.
    assert await north.receive_nothing(timeout=0.2)
    assert await watchers.names(table.pk) == []
    # Without the flag the same staff member watches as anyone does.
    seen = await _watch(table, "", staff)
    assert await _watchers(north) == ["researcher"]
    await seen.disconnect()
    assert await _watchers(north) == []
    # Anyone else asking to watch silently is seen all the same.
    bo = await _watch(table, "?silent=1", AnonymousUser())
    assert await _watchers(north) == ["Bo"]
    for comm in (north, bo):
        await comm.disconnect()


@pytest.mark.parametrize(
    ("talk", "chat", "reaction"),
    [("off", "chat_off", "chat_off"), ("reactions", "chat_off", None), ("chat", None, None)],
)
async def test_a_tables_talk_allows_what_it_says_and_refuses_the_rest(
    live: InlineScheduler, talk: str, chat: str | None, reaction: str | None
) -> None:
    """A study's table is silent by default; its file may allow reactions or chat."""
    table = await database_sync_to_async(make_table)("HHHH")
    await database_sync_to_async(lambda: type(table).objects.filter(pk=table.pk).update(
        talk=talk))()  # fmt: skip
    await database_sync_to_async(talk_line)(table.pk)
    comm = await _raw_connect(table, "g0")
    frames = [await comm.receive_json_from(timeout=TIMEOUT) for _ in range(3)]
    history = next(f for f in frames if f["type"] == "chat_history")
    assert len(history["lines"]) == (1 if talk == "chat" else 0)  # nothing said is shown
    for frame, code in (
        ({"type": "chat", "text": "hello"}, chat),
        ({"type": "react", "emote": "thumbs_up"}, reaction),
    ):
        if code is None:
            await comm.send_json_to(frame)
            assert (await receive(comm))["type"] in ("chat", "reaction")
        else:
            assert (await refused(comm, json.dumps(frame)))["code"] == code
    await comm.disconnect()
    said = await database_sync_to_async(ChatLine.objects.count)()
    assert said == (2 if talk == "chat" else 1)


def talk_line(table_pk: int) -> None:
    talk.say(table_pk, 1, "Guest 1", "said before")
