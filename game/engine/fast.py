"""The fast path: whole rounds on plain ints, for simulations and tournaments.

Same rules as :class:`RoundState` (the tests play both side by side and
compare), without action objects or checks: hands are 52-bit masks, the
trick is a short list, and the loop keeps everything in local variables.
"""

from __future__ import annotations

from collections.abc import Callable

from .cards import SIDE_SUIT_MASK, SUIT_MASKS, TWO_OF_CLUBS
from .tricks import BEATS

_SUIT_MASKS = SUIT_MASKS
_SIDE = SIDE_SUIT_MASK


def random_card(mask: int, r: float) -> int:
    """The card of ``mask`` picked by a uniform ``r`` in [0, 1)."""
    k = int(r * mask.bit_count())
    while k:
        mask &= mask - 1
        k -= 1
    return (mask & -mask).bit_length() - 1


def play_random(
    hands: list[int],
    leader: int,
    random: Callable[[], float],
    spades_broken: bool = False,
    two_of_clubs_lead: bool = False,
) -> list[int]:
    """Play the rest of a round (from a trick's start) by uniform random legal cards.

    ``hands`` is changed in place. Returns the tricks each seat took.
    """
    won = [0, 0, 0, 0]
    beats = BEATS  # a local: the trick rule is one table lookup per card
    tricks = hands[0].bit_count()
    for t in range(tricks):
        # The lead.
        hand = hands[leader]
        if two_of_clubs_lead and t == 0:
            card = TWO_OF_CLUBS
        else:
            legal = hand if spades_broken else (hand & _SIDE) or hand
            card = random_card(legal, random())
        hands[leader] = hand ^ (1 << card)
        follow_mask = _SUIT_MASKS[card // 13]
        best, winner = card, leader
        seat = leader
        for _ in range(3):
            seat = (seat + 1) & 3
            hand = hands[seat]
            legal = (hand & follow_mask) or hand
            c = random_card(legal, random())
            hands[seat] = hand ^ (1 << c)
            if beats[best][c]:
                best, winner = c, seat
        # A spade that does not take the trick falls under a higher spade: the
        # winning card alone tells whether spades were broken.
        if best >= 39:
            spades_broken = True
        won[winner] += 1
        leader = winner
    return won
