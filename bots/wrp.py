"""WRP, the paper's Weak Rule-based Player: the plain habits of an average
recreational player (BIS paper, section 5.1, "Playing modules").

No card counting and no inference: each card is chosen from the seat's hand,
the legal cards and the trick on the table.

* Lead: the highest card of the longest side suit that may be led (ties:
  the suit with the higher top card); with only spades to lead, the
  highest spade.
* Follow suit: if partner is winning the trick, the lowest card; otherwise
  the highest card if it beats the card winning so far, else the lowest.
* Void in the suit led: if partner is not winning and a spade would win,
  trump with the lowest spade that wins; otherwise discard the lowest side
  card (lowest rank; the lowest spade only when nothing else is left).
* The nil bidder (the only nil-specific habit): the card of highest rank
  that does not beat the card winning so far (under a trump that may be a
  side-suit ace); when every card would win, the highest. A nil bidder
  leads like anyone else.

Cards are masks throughout: the highest card of a mask is
``mask.bit_length() - 1``, the lowest ``(mask & -mask).bit_length() - 1``.
"""

from __future__ import annotations

import random

from game.engine.actions import Play
from game.engine.cards import SIDE_SUIT_MASK, SPADES, SUIT_MASKS, Hand
from game.engine.tricks import beaters, winning_card
from game.engine.view import SeatView

from .base import Player

_SIDE_MASKS = SUIT_MASKS[:SPADES]
_RANK_MASKS = tuple(sum(1 << (s * 13 + r) for s in range(4)) for r in range(13))


def _highest(mask: Hand) -> int:
    return mask.bit_length() - 1


def _lowest(mask: Hand) -> int:
    return (mask & -mask).bit_length() - 1


def _lowest_rank(mask: Hand) -> int:
    """The card of lowest rank in ``mask`` (ties: the lower suit)."""
    for rank_mask in _RANK_MASKS:
        m = mask & rank_mask
        if m:
            return _lowest(m)
    raise ValueError("empty mask")


def _highest_rank(mask: Hand) -> int:
    """The card of highest rank in ``mask`` (ties: the higher suit, spades first)."""
    for rank_mask in reversed(_RANK_MASKS):
        m = mask & rank_mask
        if m:
            return _highest(m)
    raise ValueError("empty mask")


def lead_card(hand: Hand, legal: Hand) -> int:
    side = legal & SIDE_SUIT_MASK
    if not side:
        return _highest(legal)
    best_suit_cards = 0
    best_key = (-1, -1)
    for suit_mask in _SIDE_MASKS:
        cards = side & suit_mask
        if cards:
            key = ((hand & suit_mask).bit_count(), _highest(cards) % 13)
            if key > best_key:
                best_key, best_suit_cards = key, cards
    return _highest(best_suit_cards)


def choose_card(
    hand: Hand, legal: Hand, trick: tuple[int, ...], leader: int, seat: int, nil: bool
) -> int:
    """WRP's card: ``legal`` is the mask of legal cards (never empty)."""
    if not trick:
        return lead_card(hand, legal)
    lead_suit = trick[0] // 13
    best, winning_seat = winning_card(leader, trick)
    winners = beaters(legal, best)
    if nil:
        under = legal & ~winners
        return _highest_rank(under or legal)
    partner_winning = winning_seat == seat ^ 2
    if legal & SUIT_MASKS[lead_suit]:
        if partner_winning or not winners:
            return _lowest(legal)
        return _highest(legal)
    if winners and not partner_winning:
        return _lowest(winners)
    side = legal & SIDE_SUIT_MASK
    return _lowest_rank(side) if side else _lowest(legal)


def legal_mask(view: SeatView) -> Hand:
    mask = 0
    for a in view.legal_actions:
        if isinstance(a, Play):
            mask |= 1 << a.card
    return mask


class WRP(Player):
    """The weak rule-based player."""

    name = "WRP"

    def play(self, view: SeatView, rng: random.Random) -> int:
        seat = view.seat
        if seat is None:
            raise ValueError("a player plays for a seat")
        legal = legal_mask(view)
        if not legal:
            raise ValueError("no card is legal for this view")
        return choose_card(
            view.hand or 0, legal, view.trick, view.leader, seat, view.bids[seat] == 0
        )
