"""The client over a real websocket, against a small server of the protocol's
frames (not the site: the site's own tests play the client there)."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest
from spades_bot_client import connection, play, random_policy
from spades_bot_client.connection import Stopped
from websockets.asyncio.server import ServerConnection, serve

TOKEN = "sbt_" + "x" * 43
DECISION = {"type": "decision", "table": "t1", "seat": 1, "version": 6, "time_left_ms": 1000,
            "legal_actions": [{"type": "bid", "seat": 1, "tricks": n, "blind": False}
                              for n in range(14)],
            "view": {"seat": 1}}  # fmt: skip


class FakeServer:
    """Plays one decision and one match end per connection; ``close_first``:
    close the first connection with that code after its hello."""

    def __init__(self, close_first: int | None = None) -> None:
        self.close_first = close_first
        self.connections = 0
        self.received: list[dict[str, Any]] = []
        self.tokens: list[str] = []

    async def handler(self, socket: ServerConnection) -> None:
        self.connections += 1
        self.tokens.append(socket.request.headers.get("Authorization", ""))
        await socket.send(json.dumps({"type": "hello", "protocol": "spades-bot/1", "bot": "b",
                                      "max_frame_bytes": 4096}))  # fmt: skip
        self.received.append(json.loads(await socket.recv()))
        if self.close_first is not None and self.connections == 1:
            await socket.close(self.close_first, "planted")
            return
        await socket.send(json.dumps(DECISION))
        self.received.append(json.loads(await socket.recv()))
        await socket.send(json.dumps({"type": "match_end", "table": f"t{self.connections}",
                                      "winner": 0, "scores": [60, 10], "rounds": 2}))  # fmt: skip
        await socket.wait_closed()


async def _run(server: FakeServer, **options: Any) -> Any:
    async with serve(server.handler, "127.0.0.1", 0) as running:
        port = next(iter(running.sockets)).getsockname()[1]
        return await asyncio.wait_for(
            play(f"ws://127.0.0.1:{port}/ws/bot/", TOKEN, random_policy(random.Random(1)),
                 **options), timeout=20)  # fmt: skip


def test_it_signs_in_says_ready_and_answers_the_decision() -> None:
    server = FakeServer()
    session = asyncio.run(_run(server, matches=1))
    assert server.tokens == [f"Bearer {TOKEN}"]
    ready, action = server.received
    assert ready == {"type": "ready", "protocol": "spades-bot/1"}
    assert (action["type"], action["table"], action["seat"], action["version"]) == (
        "action", "t1", 1, 6)  # fmt: skip
    assert action["action"] in DECISION["legal_actions"]
    assert session.finished == ["t1"]


def test_a_lost_connection_is_made_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "PAUSES", (0.01,))
    server = FakeServer(close_first=1011)
    session = asyncio.run(_run(server, matches=1))
    assert server.connections == 2 and session.finished == ["t2"]


@pytest.mark.parametrize("code", [4401, 4403, 4429])
def test_a_final_refusal_stops_the_client(code: int) -> None:
    server = FakeServer(close_first=code)
    with pytest.raises(Stopped) as stopped:
        asyncio.run(_run(server, matches=1))
    assert stopped.value.code == code and server.connections == 1
