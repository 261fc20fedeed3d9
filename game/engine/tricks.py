"""One helper per rule of the trick, shared by the checked path (``RoundState``),
the fast rollouts (``fast.py``) and every bot, so each rule is written once.

>>> from .cards import parse_card
>>> lead, *rest = [parse_card(c) for c in ("KH", "AH", "2S", "QH")]
>>> winning_card(1, [lead, *rest]) == (parse_card("2S"), 3)  # West trumps
True
>>> beats(parse_card("3S"), parse_card("2S")), beats(parse_card("AH"), parse_card("2S"))
(True, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .cards import SIDE_SUIT_MASK, SPADE_MASK, SUIT_MASKS, TWO_OF_CLUBS, Card, Hand, Seat

# ABOVE[card]: the cards of its suit ranked higher; BELOW[card]: ranked lower.
ABOVE: tuple[int, ...] = tuple(SUIT_MASKS[c // 13] & ~((2 << c) - 1) for c in range(52))
BELOW: tuple[int, ...] = tuple(SUIT_MASKS[c // 13] & ((1 << c) - 1) for c in range(52))
# BEATERS[best]: the cards that beat ``best``, the card winning a trick so far (which is
# of the led suit or a spade): a higher card of its suit, or any spade over a side suit.
BEATERS: tuple[int, ...] = tuple(ABOVE[c] | (0 if c >= 39 else SPADE_MASK) for c in range(52))
# BEATS[best][card]: the same as booleans, for the hottest loops (no int is made).
BEATS: tuple[tuple[bool, ...], ...] = tuple(
    tuple(bool(BEATERS[best] >> card & 1) for card in range(52)) for best in range(52)
)


class Trick(NamedTuple):
    leader: Seat
    cards: tuple[Card, ...]  # in play order, the leader's first
    winner: Seat


def winning_card(leader: Seat, cards: Sequence[Card]) -> tuple[Card, Seat]:
    """The card winning a (partial) trick and its seat: the highest spade, else
    the highest card of the led suit."""
    best = cards[0]
    best_i = 0
    for i in range(1, len(cards)):
        c = cards[i]
        if BEATS[best][c]:
            best, best_i = c, i
    return best, (leader + best_i) & 3


def trick_winner(leader: Seat, cards: Sequence[Card]) -> Seat:
    """The seat that wins a trick (see :func:`winning_card`)."""
    return winning_card(leader, cards)[1]


def beats(card: Card, best: Card) -> bool:
    """Does ``card`` beat ``best``, the card now winning a trick (see ``BEATERS``)?"""
    return BEATS[best][card]


def beaters(mask: Hand, best: Card) -> Hand:
    """The cards of ``mask`` that beat ``best`` (see ``BEATERS``)."""
    return mask & BEATERS[best]


def played_cards(tricks: Sequence[Trick], trick: Sequence[Card]) -> Hand:
    """The mask of the cards in the completed ``tricks`` and the current ``trick``."""
    m = 0
    for t in tricks:
        for c in t.cards:
            m |= 1 << c
    for c in trick:
        m |= 1 << c
    return m


def legal_play_mask_for(
    hand: Hand, trick: Sequence[Card], spades_broken: bool, two_of_clubs_lead: bool
) -> Hand:
    """The cards of ``hand`` that may be played to ``trick`` (shared by every path)."""
    if trick:
        follow = hand & SUIT_MASKS[trick[0] // 13]
        return follow or hand
    if two_of_clubs_lead:
        return 1 << TWO_OF_CLUBS
    if spades_broken:
        return hand
    return (hand & SIDE_SUIT_MASK) or hand
