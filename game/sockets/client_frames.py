"""What a client may send on the table socket, each field checked by type and range.

Nothing a client sends reaches the database or the engine unchecked: a frame
is JSON text of at most :data:`MAX_FRAME_BYTES`, an object whose ``type``
names one of the frames below and which carries exactly that frame's fields
(an unknown field is refused, so a typo never passes silently). A refused
frame raises :class:`FrameRefused` with a stable ``code`` for the client.

- ``{"type": "act", "action": {...}, "version": N, "think_ms": T}``:
  ``version`` a whole number from 0 to :data:`MAX_VERSION`; ``action`` an
  object with the fields of its ``type`` (``bid``: tricks, blind;
  ``see_cards``; ``pass_cards``: cards; ``play``: card; each may carry
  ``seat``, which is ignored: the socket's seat is its own). The engine
  parses the values. ``think_ms`` (optional): the milliseconds from the
  moment the page drew the decision to the click, 0 to
  :data:`MAX_THINK_MS` (the server keeps it no larger than its own bound).
- ``{"type": "resync", "version": N}`` (``version`` optional).
- ``{"type": "chat", "text": "..."}``: 1 to :data:`CHAT_MAX_CHARS` characters
  once trimmed.
- ``{"type": "react", "emote": "..."}``: a quick reaction, one of
  :data:`REACTIONS`.
- ``{"type": "ping"}``: the page is still open.
- ``{"type": "back"}``: a player marked away is back ("I'm back").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_FRAME_BYTES = 4096
MAX_VERSION = 2**31 - 1  # far beyond any match, well inside every integer column
CHAT_MAX_CHARS = 200
MAX_THINK_MS = 24 * 3600 * 1000  # a day: far beyond any turn timer
# The quick reactions, by their word on the wire: the page draws each one
# (an emoji), so no client ever sends another client markup or free text.
REACTIONS = ("thumbs_up", "well_played", "laugh", "wow", "oops", "good_game")

FRAME_FIELDS = {
    "act": ({"type", "action", "version"}, {"type", "action", "version", "think_ms"}),
    "resync": ({"type"}, {"type", "version"}),
    "chat": ({"type", "text"}, {"type", "text"}),
    "react": ({"type", "emote"}, {"type", "emote"}),
    "ping": ({"type"}, {"type"}),
    "back": ({"type"}, {"type"}),
}  # (required, allowed)
ACTION_FIELDS = {
    "bid": {"type", "seat", "tricks", "blind"},
    "see_cards": {"type", "seat"},
    "pass_cards": {"type", "seat", "cards"},
    "play": {"type", "seat", "card"},
}
CARD_TEXT_MAX = 3  # "AS", "10H" at most


class FrameRefused(Exception):
    """The frame was refused and nothing changed."""

    def __init__(self, message: str, code: str = "bad_frame") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Act:
    action: dict[str, Any]
    version: int
    think_ms: int | None = None  # the browser's measure, unchecked against the server's


@dataclass(frozen=True)
class Resync:
    version: int | None


@dataclass(frozen=True)
class Chat:
    text: str


@dataclass(frozen=True)
class React:
    emote: str


@dataclass(frozen=True)
class Ping:
    """The page is still open."""


@dataclass(frozen=True)
class Back:
    """The player marked away is back at the keyboard."""


Frame = Act | Resync | Chat | React | Ping | Back


def _whole(value: Any, name: str, code: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_VERSION:
        raise FrameRefused(f"'{name}' must be a whole number from 0 to {MAX_VERSION}", code)
    return value


def _check_action(action: Any) -> dict[str, Any]:
    if not isinstance(action, dict):
        raise FrameRefused("'action' must be an object", "bad_action")
    allowed = ACTION_FIELDS.get(action.get("type"))  # type: ignore[arg-type]
    if allowed is None:
        raise FrameRefused(
            "an action's 'type' must be one of " + ", ".join(ACTION_FIELDS), "bad_action"
        )
    unknown = sorted(set(action) - allowed)
    if unknown:
        raise FrameRefused(f"unknown field in the action: {unknown[0]!r}", "bad_action")
    seat = action.get("seat")
    if "seat" in action and (isinstance(seat, bool) or seat not in (0, 1, 2, 3)):
        raise FrameRefused("'seat' must be 0, 1, 2 or 3", "bad_action")
    card = action.get("card")
    if "card" in action and not (isinstance(card, str) and len(card) <= CARD_TEXT_MAX):
        raise FrameRefused("'card' must be a card like 'AS'", "bad_action")
    cards = action.get("cards")
    if "cards" in action and not (
        isinstance(cards, list)
        and len(cards) <= 13
        and all(isinstance(c, str) and len(c) <= CARD_TEXT_MAX for c in cards)
    ):
        raise FrameRefused("'cards' must be a list of cards like ['AS', '2C']", "bad_action")
    return action


def parse(text: str | None) -> Frame:
    """The frame in ``text``, or :class:`FrameRefused`."""
    if text is None:
        raise FrameRefused("frames must be JSON text")
    if len(text) > MAX_FRAME_BYTES or len(text.encode()) > MAX_FRAME_BYTES:
        raise FrameRefused(f"frames are limited to {MAX_FRAME_BYTES} bytes")
    try:
        content = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise FrameRefused("that frame is not JSON") from None
    if not isinstance(content, dict):
        raise FrameRefused("a frame is a JSON object with a 'type'")
    kind = content.get("type")
    fields = FRAME_FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        raise FrameRefused("'type' must be " + ", ".join(FRAME_FIELDS))
    required, allowed = fields
    unknown = sorted(set(content) - allowed)
    if unknown:
        raise FrameRefused(f"unknown field in a {kind} frame: {unknown[0]!r}")
    missing = sorted(required - set(content))
    if missing:
        code = "bad_action" if kind == "act" else "bad_frame"
        raise FrameRefused(f"a {kind} frame needs '{missing[0]}'", code)
    if kind == "act":
        action = _check_action(content["action"])
        think = content.get("think_ms")
        if think is not None:
            think = _whole(think, "think_ms", "bad_action")
            if think > MAX_THINK_MS:
                raise FrameRefused(f"'think_ms' is at most {MAX_THINK_MS}", "bad_action")
        return Act(action, _whole(content["version"], "version", "bad_action"), think)
    if kind == "resync":
        version = content.get("version")
        return Resync(None if version is None else _whole(version, "version", "bad_frame"))
    if kind == "ping":
        return Ping()
    if kind == "back":
        return Back()
    if kind == "react":
        emote = content["emote"]
        if not isinstance(emote, str) or emote not in REACTIONS:
            raise FrameRefused("'emote' must be one of " + ", ".join(REACTIONS), "chat")
        return React(emote)
    text_value = content["text"]
    if not isinstance(text_value, str) or not text_value.strip():
        raise FrameRefused("a chat message needs some text", "chat")
    if len(text_value.strip()) > CHAT_MAX_CHARS:
        raise FrameRefused(f"chat messages are limited to {CHAT_MAX_CHARS} characters", "chat")
    return Chat(text_value.strip())
