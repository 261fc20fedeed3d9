"""What a bot may send (``spades-bot/1``), each field checked by type and range.

As on the table socket (``game.sockets.client_frames``): JSON text of at most
``MAX_FRAME_BYTES``, an object whose ``type`` names a frame below and which
carries exactly its fields; the action's own fields are the table socket's
(``ACTION_FIELDS``), its values parsed by the engine on the move path.
A refused frame raises ``FrameRefused`` with a stable code; nothing changes.

- ``{"type": "ready", "protocol": "spades-bot/1"}``
- ``{"type": "action", "table": "<id>", "seat": S, "version": N, "action": {...}}``
- ``{"type": "accept", "offer": N}`` and ``{"type": "decline", "offer": N}``: an
  ``offer`` of a seat (``botapi.offers``)
- ``{"type": "ping"}``
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from game.sockets.client_frames import (
    ACTION_FIELDS,
    CARD_TEXT_MAX,
    MAX_FRAME_BYTES,
    MAX_VERSION,
    FrameRefused,
)

TABLE_ID_MAX = 16  # Table.public_id

FIELDS = {
    "ready": {"type", "protocol"},
    "action": {"type", "table", "seat", "version", "action"},
    "accept": {"type", "offer"},
    "decline": {"type", "offer"},
    "ping": {"type"},
}
MAX_OFFER = 2**31 - 1


@dataclass(frozen=True)
class Ready:
    protocol: str


@dataclass(frozen=True)
class ActionFrame:
    table: str
    seat: int
    version: int
    action: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """An answer to an ``offer``: ``accept`` or ``decline``."""

    offer: int
    accept: bool


@dataclass(frozen=True)
class Ping:
    pass


Frame = Ready | ActionFrame | Answer | Ping


def _whole(data: dict[str, Any], key: str, hi: int) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= hi:
        raise FrameRefused(f"'{key}' must be a whole number from 0 to {hi}")
    return value


def _action(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or value.get("type") not in ACTION_FIELDS:
        raise FrameRefused(f"'action' must be an object of a type in {sorted(ACTION_FIELDS)}",
                           "bad_action")  # fmt: skip
    extra = set(value) - ACTION_FIELDS[value["type"]]
    if extra:
        raise FrameRefused(f"unknown field(s) in the action: {sorted(extra)}", "bad_action")
    card = value.get("card")
    if card is not None and (not isinstance(card, str) or len(card) > CARD_TEXT_MAX):
        raise FrameRefused("'card' must be a card like 'AS'", "bad_action")
    return value


def parse(text: str | None) -> Frame:
    if text is None:
        raise FrameRefused("frames are JSON text, not binary")
    if len(text.encode("utf-8", "replace")) > MAX_FRAME_BYTES:
        raise FrameRefused(f"a frame is at most {MAX_FRAME_BYTES} bytes")
    try:
        data = json.loads(text)
    except ValueError:
        raise FrameRefused("a frame must be JSON") from None
    if not isinstance(data, dict) or data.get("type") not in FIELDS:
        raise FrameRefused(f"a frame is an object whose 'type' is one of {sorted(FIELDS)}")
    fields = FIELDS[data["type"]]
    if set(data) != fields:
        raise FrameRefused(f"a {data['type']} frame has exactly the fields {sorted(fields)}")
    if data["type"] == "ready":
        if not isinstance(data["protocol"], str) or len(data["protocol"]) > 40:
            raise FrameRefused("'protocol' must be text like 'spades-bot/1'")
        return Ready(data["protocol"])
    if data["type"] == "ping":
        return Ping()
    if data["type"] in ("accept", "decline"):
        return Answer(_whole(data, "offer", MAX_OFFER), data["type"] == "accept")
    table = data["table"]
    if not isinstance(table, str) or not 0 < len(table) <= TABLE_ID_MAX:
        raise FrameRefused("'table' must be a table's id, as the server sent it")
    seat, version = _whole(data, "seat", 3), _whole(data, "version", MAX_VERSION)
    return ActionFrame(table, seat, version, _action(data["action"]))
