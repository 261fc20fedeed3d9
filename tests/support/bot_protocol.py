"""The bot protocol's tests' means (tests/botapi): an external bot's token, a
table with its seats, a connection to ``/ws/bot/`` on the site's ASGI app,
frames checked against the protocol's schemas, and the reference client
(docs/examples/spades_bot.py) loaded as a module to play a session."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from botapi import accounts
from game import seating
from game.engine import Rules
from game.models import Table
from tests.support import ROOT, schema_check
from tests.support.helpers import QUICK_RULES

TIMEOUT = 5
SCHEMAS = schema_check.load()

EXAMPLE = ROOT / "docs" / "examples" / "spades_bot.py"
_spec = importlib.util.spec_from_file_location("spades_bot_example", EXAMPLE)
assert _spec is not None and _spec.loader is not None
reference_client = importlib.util.module_from_spec(_spec)
sys.modules["spades_bot_example"] = reference_client
_spec.loader.exec_module(reference_client)


def bot_token(name: str = "randy") -> str:
    """The token of a newly registered bot ``name`` (owner "author")."""
    owner, _ = User.objects.get_or_create(username="author")
    return accounts.register(owner, name, "random legal", "author@example.org")[1]


def bot_table(kinds: str, bots: dict[int, str], rules: Rules = QUICK_RULES, *, start: bool = True,
              turn_seconds: int = 30) -> Table:  # fmt: skip
    """A table: 'H' a guest, 'B' a house bot, 'X' the external bot ``bots[position]``."""
    table = seating.create_table(rules=rules, turn_seconds=turn_seconds, stand_in_bots=True)
    for p, kind in enumerate(kinds):
        if kind == "H":
            seating.take_seat(table, p, guest_id=f"g{p}", guest_name=f"Guest {p}")
        else:
            seating.add_bot(table, p, f"ext:{bots[p]}" if kind == "X" else "Random+Random")
    if start:
        seating.start_table(table)
    table.refresh_from_db()
    return table


async def connect_bot(token: str | None) -> WebsocketCommunicator:
    """A connection to the bot endpoint with ``token`` as its bearer (None: without one)."""
    from spadesite.asgi import application

    headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
    comm = WebsocketCommunicator(application, "/ws/bot/", headers=headers)
    connected, _ = await comm.connect(timeout=TIMEOUT)
    assert connected
    return comm


async def next_frame(comm: WebsocketCommunicator, sent: list[dict[str, Any]]) -> dict[str, Any]:
    """The next frame the server sends, checked against its schema, kept in ``sent``."""
    frame = await comm.receive_json_from(timeout=TIMEOUT)
    assert schema_check.check_frame(frame, SCHEMAS) == [], frame
    sent.append(frame)
    return frame


async def frame_until(comm: WebsocketCommunicator, sent: list[dict[str, Any]], kind: str) -> dict:
    """The next frame of type ``kind`` (those before it kept in ``sent``)."""
    while True:
        frame = await next_frame(comm, sent)
        if frame["type"] == kind:
            return frame


async def play_session(comm: WebsocketCommunicator, session: Any, sent: list[dict[str, Any]],
                       tables: int = 1) -> None:  # fmt: skip
    """Run the reference client's session on ``comm`` until ``tables`` matches end."""
    while len(session.finished) < tables:
        for reply in session.handle(await next_frame(comm, sent)):
            assert schema_check.check_frame(reply, SCHEMAS) == [], reply
            await comm.send_json_to(reply)
