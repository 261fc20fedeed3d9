"""The four kinds of action a seat can take in a round, and their text forms.

>>> parse_action("E:3"), parse_action("W:bnil")
(Bid(seat=1, tricks=3, blind=False), Bid(seat=3, tricks=0, blind=True))
>>> format_action(Play(seat=0, card=51)), format_action(PassCards(seat=2, cards=3))
('N:AS', 'S>2C3C')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cards import (
    SEAT_LETTERS,
    CardError,
    Seat,
    cards_of,
    format_card,
    parse_card,
    parse_hand,
    parse_seat,
)


class ActionError(ValueError):
    """Text or data that does not describe an action."""


@dataclass(frozen=True, slots=True)
class Bid:
    """A bid of 0..13 tricks; 0 is nil, ``blind`` marks blind nil."""

    seat: Seat
    tricks: int
    blind: bool = False

    @property
    def is_nil(self) -> bool:
        return self.tricks == 0


@dataclass(frozen=True, slots=True)
class SeeCards:
    """A seat that could still bid blind nil looks at its cards (gives up blind nil)."""

    seat: Seat


@dataclass(frozen=True, slots=True)
class PassCards:
    """Cards given to partner in the blind nil exchange (a mask)."""

    seat: Seat
    cards: int


@dataclass(frozen=True, slots=True)
class Play:
    seat: Seat
    card: int


Action = Bid | SeeCards | PassCards | Play


def format_action(action: Action) -> str:
    """Compact text: 'N:4', 'E:nil', 'S:bnil', 'W:see', 'N>2C3C', 'E:AS'."""
    s = SEAT_LETTERS[action.seat]
    if isinstance(action, Bid):
        if action.tricks == 0:
            return f"{s}:{'bnil' if action.blind else 'nil'}"
        return f"{s}:{action.tricks}"
    if isinstance(action, SeeCards):
        return f"{s}:see"
    if isinstance(action, PassCards):
        return f"{s}>" + "".join(format_card(c) for c in cards_of(action.cards))
    return f"{s}:{format_card(action.card)}"


def parse_action(text: str) -> Action:
    """The inverse of :func:`format_action`."""
    try:
        if ">" in text:
            seat_text, cards_text = text.split(">", 1)
            cards_text = " ".join(cards_text[i : i + 2] for i in range(0, len(cards_text), 2))
            return PassCards(parse_seat(seat_text), parse_hand(cards_text))
        seat_text, what = text.split(":", 1)
        seat = parse_seat(seat_text)
        what = what.strip().lower()
        if what == "nil":
            return Bid(seat, 0)
        if what == "bnil":
            return Bid(seat, 0, blind=True)
        if what == "see":
            return SeeCards(seat)
        if what.isdigit():
            return Bid(seat, int(what))
        return Play(seat, parse_card(what))
    except (ValueError, CardError) as e:
        raise ActionError(f"{text!r} is not an action: {e}") from None


def action_to_dict(action: Action) -> dict[str, Any]:
    if isinstance(action, Bid):
        return {"type": "bid", "seat": action.seat, "tricks": action.tricks, "blind": action.blind}
    if isinstance(action, SeeCards):
        return {"type": "see_cards", "seat": action.seat}
    if isinstance(action, PassCards):
        return {
            "type": "pass_cards",
            "seat": action.seat,
            "cards": [format_card(c) for c in cards_of(action.cards)],
        }
    return {"type": "play", "seat": action.seat, "card": format_card(action.card)}


def _int_field(data: dict[str, Any], key: str, lo: int, hi: int) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ActionError(f"'{key}' must be a whole number from {lo} to {hi}")
    return value


def action_from_dict(data: Any, seat: Seat | None = None) -> Action:
    """Parse an action from untrusted JSON data.

    ``seat``, when given, is the seat the sender holds: it overrides any seat
    in the data so that a client can only ever act for its own seat.
    """
    if not isinstance(data, dict):
        raise ActionError("an action must be an object")
    kind = data.get("type")
    if seat is None:
        seat = _int_field(data, "seat", 0, 3)
    try:
        if kind == "bid":
            tricks = _int_field(data, "tricks", 0, 13)
            blind = data.get("blind", False)
            if not isinstance(blind, bool):
                raise ActionError("'blind' must be true or false")
            return Bid(seat, tricks, blind)
        if kind == "see_cards":
            return SeeCards(seat)
        if kind == "pass_cards":
            cards = data.get("cards")
            if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
                raise ActionError("'cards' must be a list of cards like ['AS', '2C']")
            if len(cards) > 13:
                raise ActionError("too many cards")
            return PassCards(seat, parse_hand(" ".join(cards)))
        if kind == "play":
            card = data.get("card")
            if not isinstance(card, str):
                raise ActionError("'card' must be a card like 'AS'")
            return Play(seat, parse_card(card))
    except CardError as e:
        raise ActionError(str(e)) from None
    raise ActionError("'type' must be one of bid, see_cards, pass_cards, play")
