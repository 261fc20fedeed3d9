"""Dealing the unseen cards: hidden hands consistent with what one seat knows.

What is certain, and only that, constrains a sample: each other seat's hand
count, the suits it showed void (failing to follow, or leading a spade before
spades were broken), and the cards this seat passed to its partner in a blind
nil exchange and has not seen played since. Every deal consistent with these
is equally likely: a small dynamic programme over the four suits counts the
ways to split each suit's unseen cards between the three seats (a seat void
in a suit gets none of it), computed once per decision, and each sample
walks it forwards (how many cards of each suit each seat gets), then shuffles
each suit's cards into those places.

>>> from game.engine.cards import parse_hand
>>> s = Sampler(me=0, my_hand=parse_hand("AS"), unseen=parse_hand("KS 2H 3H"),
...             counts=(1, 1, 1, 1), voids=(0, 0b0100, 0, 0))
>>> import random
>>> all(s.sample(random.Random(i))[1] == parse_hand("KS") for i in range(20))
True
"""

from __future__ import annotations

import random
from functools import lru_cache

from game.engine.cards import SUIT_MASKS, Hand, Seat, cards_of
from game.engine.view import SeatView

from .knowledge import Knowledge


class ImpossibleDeal(ValueError):
    """No deal of the unseen cards fits the constraints (should not happen from a real view)."""


@lru_cache(maxsize=4096)
def _multinomial(n: int, a: int, b: int) -> int:
    from math import comb

    return comb(n, a) * comb(n - a, b)


class Sampler:
    """Uniform deals of ``unseen`` to the three seats other than ``me``."""

    def __init__(
        self,
        me: Seat,
        my_hand: Hand,
        unseen: Hand,
        counts: tuple[int, int, int, int] | list[int],
        voids: tuple[int, ...] | list[int],
        fixed: dict[Seat, Hand] | None = None,
    ) -> None:
        self.me = me
        self.my_hand = my_hand
        self.others = [s for s in range(4) if s != me]
        fixed = {s: m & unseen for s, m in (fixed or {}).items() if s != me and m & unseen}
        self.fixed = fixed
        free = unseen
        for m in fixed.values():
            free &= ~m
        self.caps = [counts[s] - fixed.get(s, 0).bit_count() for s in self.others]
        if any(c < 0 for c in self.caps) or sum(self.caps) != free.bit_count():
            raise ImpossibleDeal("the hand counts do not match the unseen cards")
        self.suit_cards = [cards_of(free & SUIT_MASKS[s]) for s in range(4)]
        self.allowed = [[not voids[seat] >> s & 1 for seat in self.others] for s in range(4)]
        for seat, m in fixed.items():
            for s in range(4):
                if m & SUIT_MASKS[s] and voids[seat] >> s & 1:
                    raise ImpossibleDeal("a known card is in a suit its holder showed void")
        self._ways: dict[tuple[int, int, int], int] = {}
        if self._count(0, self.caps[0], self.caps[1]) == 0:
            raise ImpossibleDeal("no deal fits the voids and hand counts")

    @classmethod
    def from_view(cls, view: SeatView, knowledge: Knowledge | None = None) -> Sampler:
        k = knowledge or Knowledge(view)
        fixed = {}
        if view.passed and view.seat is not None:
            fixed[(view.seat + 2) & 3] = view.passed
        return cls(k.seat, k.hand, k.unseen, view.hand_counts, k.voids, fixed)

    def _splits(self, suit: int, a: int, b: int):
        """Ways (xa, xb, xc) to split ``suit``'s cards among the three seats."""
        n = len(self.suit_cards[suit])
        ok = self.allowed[suit]
        c_cap = self._c_cap(suit, a, b)
        for xa in range(min(n, a) + 1 if ok[0] else 1):
            rest = n - xa
            for xb in range(min(rest, b) + 1 if ok[1] else 1):
                xc = rest - xb
                if xc and not ok[2]:
                    continue
                if xc > c_cap:
                    continue
                yield xa, xb, xc

    def _c_cap(self, suit: int, a: int, b: int) -> int:
        left = sum(len(self.suit_cards[s]) for s in range(suit, 4))
        return left - a - b

    def _count(self, suit: int, a: int, b: int) -> int:
        """Deals of suits ``suit``..3 with capacities a, b (and the rest) left."""
        if suit == 4:
            return 1 if a == 0 and b == 0 else 0
        key = (suit, a, b)
        v = self._ways.get(key)
        if v is None:
            n = len(self.suit_cards[suit])
            v = 0
            for xa, xb, _ in self._splits(suit, a, b):
                sub = self._count(suit + 1, a - xa, b - xb)
                if sub:
                    v += _multinomial(n, xa, xb) * sub
            self._ways[key] = v
        return v

    def sample(self, rng: random.Random) -> list[Hand]:
        """Four hands: ``me``'s own and a uniform consistent deal of the rest."""
        hands = [0, 0, 0, 0]
        hands[self.me] = self.my_hand
        for seat, m in self.fixed.items():
            hands[seat] |= m
        a, b = self.caps[0], self.caps[1]
        sa, sb, sc = self.others
        for suit in range(4):
            cards = self.suit_cards[suit]
            n = len(cards)
            options = []
            weights = []
            for xa, xb, xc in self._splits(suit, a, b):
                sub = self._count(suit + 1, a - xa, b - xb)
                if sub:
                    options.append((xa, xb, xc))
                    weights.append(_multinomial(n, xa, xb) * sub)
            total = sum(weights)
            r = rng.randrange(total)
            pick = 0
            while r >= weights[pick]:
                r -= weights[pick]
                pick += 1
            xa, xb, _ = options[pick]
            if n:
                shuffled = cards[:]
                rng.shuffle(shuffled)
                for c in shuffled[:xa]:
                    hands[sa] |= 1 << c
                for c in shuffled[xa : xa + xb]:
                    hands[sb] |= 1 << c
                for c in shuffled[xa + xb :]:
                    hands[sc] |= 1 << c
            a -= xa
            b -= xb
        return hands
