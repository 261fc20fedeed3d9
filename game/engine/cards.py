"""Cards, suits, seats and hands.

A card is an int 0..51: ``suit * 13 + rank``, rank 0 is the two and 12 the ace,
suits in the order clubs, diamonds, hearts, spades. Spades come last, so a
spade always has a higher number than any side-suit card. A hand (or any set
of cards) is a 52-bit int mask with bit ``card`` set for each card held; the
13 bits of one suit are that suit's *holding*.

>>> format_card(parse_card("AS")), parse_card("2C"), parse_card("TD")
('AS', 0, 21)
>>> format_hand(parse_hand("2C AS KS td"))
'AS KS TD 2C'
"""

from __future__ import annotations

from typing import Final

Card = int
Hand = int  # 52-bit mask
Seat = int  # 0..3

CLUBS: Final = 0
DIAMONDS: Final = 1
HEARTS: Final = 2
SPADES: Final = 3
SUITS: Final = (CLUBS, DIAMONDS, HEARTS, SPADES)
SUIT_LETTERS: Final = "CDHS"
SUIT_NAMES: Final = ("clubs", "diamonds", "hearts", "spades")
SUIT_SYMBOLS: Final = "♣♦♥♠"
RANK_LETTERS: Final = "23456789TJQKA"
RANK_NAMES: Final = (
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "jack", "queen", "king", "ace",
)  # fmt: skip
TWO, TEN, JACK, QUEEN, KING, ACE = 0, 8, 9, 10, 11, 12

NORTH: Final = 0
EAST: Final = 1
SOUTH: Final = 2
WEST: Final = 3
SEATS: Final = (NORTH, EAST, SOUTH, WEST)
SEAT_LETTERS: Final = "NESW"
SEAT_NAMES: Final = ("North", "East", "South", "West")
PARTNERSHIP_NAMES: Final = ("North/South", "East/West")

FULL_DECK: Final = (1 << 52) - 1
SUIT_MASKS: Final = tuple(0x1FFF << (13 * s) for s in SUITS)
SPADE_MASK: Final = SUIT_MASKS[SPADES]
SIDE_SUIT_MASK: Final = FULL_DECK ^ SPADE_MASK
TWO_OF_CLUBS: Final = 0
ACE_OF_SPADES: Final = 51


class CardError(ValueError):
    """Raised for text that does not name a card, hand or seat."""


def make_card(rank: int, suit: int) -> Card:
    return suit * 13 + rank


def suit_of(card: Card) -> int:
    return card // 13


def rank_of(card: Card) -> int:
    return card % 13


def format_card(card: Card) -> str:
    if not 0 <= card < 52:
        raise CardError(f"{card!r} is not a card number (0..51)")
    return RANK_LETTERS[card % 13] + SUIT_LETTERS[card // 13]


def card_name(card: Card) -> str:
    """'ace of spades' — for messages people read."""
    return f"{RANK_NAMES[card % 13]} of {SUIT_NAMES[card // 13]}"


def parse_card(text: str) -> Card:
    """Parse 'AS', 'td', '10h' or 'Q♠' into a card."""
    if not isinstance(text, str):
        raise CardError(f"{text!r} is not a card")
    t = text.strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) != 2:
        raise CardError(f"{text!r} is not a card (write it like AS, TD or 2C)")
    rank = RANK_LETTERS.find(t[0])
    suit_char = t[1]
    suit = SUIT_LETTERS.find(suit_char)
    if suit < 0:
        suit = SUIT_SYMBOLS.find(suit_char)
    if rank < 0 or suit < 0:
        raise CardError(f"{text!r} is not a card (write it like AS, TD or 2C)")
    return suit * 13 + rank


def mask_of(cards: list[Card] | tuple[Card, ...]) -> Hand:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: Hand) -> list[Card]:
    """The cards in a mask, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def parse_hand(text: str) -> Hand:
    """Parse 'AS KS 2C' (spaces or commas) into a mask; a card twice is an error."""
    mask = 0
    for token in text.replace(",", " ").split():
        c = parse_card(token)
        if mask >> c & 1:
            raise CardError(f"{format_card(c)} appears twice")
        mask |= 1 << c
    return mask


def format_hand(mask: Hand) -> str:
    """Cards by suit (spades first), high to low: 'AS KS TD 2C'."""
    return " ".join(format_card(c) for c in reversed(cards_of(mask)))


def holding(mask: Hand, suit: int) -> int:
    """The 13-bit holding of one suit (bit r set for rank r)."""
    return (mask >> (13 * suit)) & 0x1FFF


def count(mask: Hand) -> int:
    return mask.bit_count()


def partnership_of(seat: Seat) -> int:
    """0 for North/South, 1 for East/West."""
    return seat & 1


def partner_of(seat: Seat) -> Seat:
    return (seat + 2) & 3


def left_of(seat: Seat) -> Seat:
    return (seat + 1) & 3


def parse_seat(text: str | int) -> Seat:
    """'N', 'north', 0 -> 0."""
    if isinstance(text, int) and not isinstance(text, bool):
        if 0 <= text < 4:
            return text
        raise CardError(f"{text!r} is not a seat (0..3)")
    if isinstance(text, str) and text:
        t = text.strip().upper()
        if t and t[0] in SEAT_LETTERS and (len(t) == 1 or t.capitalize() in SEAT_NAMES):
            return SEAT_LETTERS.index(t[0])
    raise CardError(f"{text!r} is not a seat (N, E, S or W)")
