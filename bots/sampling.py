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


def _constraints(
    me: Seat,
    unseen: Hand,
    counts: tuple[int, int, int, int] | list[int],
    voids: tuple[int, ...] | list[int],
    fixed: dict[Seat, Hand] | None,
) -> tuple[list[Seat], dict[Seat, Hand], Hand, list[int]]:
    """(the other three seats, their known unseen cards, the free cards, how many
    free cards each of the three still gets), checked for consistency."""
    others = [s for s in range(4) if s != me]
    known = {s: m & unseen for s, m in (fixed or {}).items() if s != me and m & unseen}
    free = unseen
    for m in known.values():
        free &= ~m
    for seat, m in known.items():
        for s in range(4):
            if m & SUIT_MASKS[s] and voids[seat] >> s & 1:
                raise ImpossibleDeal("a known card is in a suit its holder showed void")
    caps = [counts[s] - known.get(s, 0).bit_count() for s in others]
    if any(c < 0 for c in caps) or sum(caps) != free.bit_count():
        raise ImpossibleDeal("the hand counts do not match the unseen cards")
    return others, known, free, caps


def _passed_to_partner(view: SeatView) -> dict[Seat, Hand]:
    """The cards this seat passed in a blind nil exchange: known to be its partner's."""
    if view.passed and view.seat is not None:
        return {(view.seat + 2) & 3: view.passed}
    return {}


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
        self.others, self.fixed, free, self.caps = _constraints(me, unseen, counts, voids, fixed)
        self.suit_cards = [cards_of(free & SUIT_MASKS[s]) for s in range(4)]
        self.allowed = [[not voids[seat] >> s & 1 for seat in self.others] for s in range(4)]
        self._ways: dict[tuple[int, int, int], int] = {}
        if self._count(0, self.caps[0], self.caps[1]) == 0:
            raise ImpossibleDeal("no deal fits the voids and hand counts")

    @classmethod
    def from_view(cls, view: SeatView, knowledge: Knowledge | None = None) -> Sampler:
        k = knowledge or Knowledge(view)
        return cls(k.seat, k.hand, k.unseen, view.hand_counts, k.voids, _passed_to_partner(view))

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


class WeightedSampler:
    """Deals of ``unseen`` to the three seats other than ``me``, each deal drawn
    with probability proportional to the product, over the cards dealt, of the
    receiving seat's weight for that card (``weights[seat][card]``).

    The constraints are the same as :class:`Sampler`'s and hold exactly (hand
    counts, voids, fixed cards): a void seat's weight for its void suits is
    zero. With every weight 1 this is the uniform sampler. A forward pass over
    the free cards, one at a time, sums the weights of the partial deals by how
    many cards seats A and B got so far (the third seat's count follows); a
    sample walks it backwards, placing each card with probability proportional
    to the weight of the partial deals that complete it. :meth:`marginals`
    adds the backward pass: each free card's exact probability of being in
    each seat under this distribution.
    """

    def __init__(
        self,
        me: Seat,
        my_hand: Hand,
        unseen: Hand,
        counts: tuple[int, int, int, int] | list[int],
        voids: tuple[int, ...] | list[int],
        weights: dict[Seat, list[float]] | None = None,
        fixed: dict[Seat, Hand] | None = None,
    ) -> None:
        import numpy as np

        self.me = me
        self.my_hand = my_hand
        self.others, self.fixed, free, self.caps = _constraints(me, unseen, counts, voids, fixed)
        self.cards = cards_of(free)
        # w[i] = (weight for seat A, B, C) of card i; zero where the seat is void.
        w = []
        for c in self.cards:
            row = []
            for seat in self.others:
                if voids[seat] >> (c // 13) & 1:
                    row.append(0.0)
                else:
                    x = float(weights[seat][c]) if weights and seat in weights else 1.0
                    if not x > 0.0:
                        raise ValueError("card weights must be positive")
                    row.append(x)
            w.append(tuple(row))
        self.w = w
        ca, cb = self.caps[0], self.caps[1]
        f = np.zeros((ca + 1, cb + 1))
        f[0, 0] = 1.0
        forward = [f]
        for wa, wb, wc in w:
            g = f * wc
            if ca:
                g[1:, :] += f[:-1, :] * wa
            if cb:
                g[:, 1:] += f[:, :-1] * wb
            top = g.max()
            if top > 0:
                g /= top  # a common scale per step: only ratios within a step matter
            forward.append(g)
            f = g
        if not f[ca, cb] > 0:
            raise ImpossibleDeal("no deal fits the voids and hand counts")
        self._forward = forward
        self._rows = [x.tolist() for x in forward]

    @classmethod
    def from_view(
        cls,
        view: SeatView,
        weights: dict[Seat, list[float]] | None = None,
        knowledge: Knowledge | None = None,
    ) -> WeightedSampler:
        k = knowledge or Knowledge(view)
        fixed = _passed_to_partner(view)
        return cls(k.seat, k.hand, k.unseen, view.hand_counts, k.voids, weights, fixed)

    def sample(self, rng: random.Random) -> list[Hand]:
        """Four hands: ``me``'s own and a weighted consistent deal of the rest."""
        hands = [0, 0, 0, 0]
        hands[self.me] = self.my_hand
        for seat, m in self.fixed.items():
            hands[seat] |= m
        sa, sb, sc = self.others
        ha = hb = hc = 0
        a, b = self.caps[0], self.caps[1]
        rows = self._rows
        w = self.w
        cards = self.cards
        for i in range(len(cards) - 1, -1, -1):
            f = rows[i]
            wa, wb, wc = w[i]
            pc = f[a][b] * wc if a + b <= i else 0.0
            pa = f[a - 1][b] * wa if a else 0.0
            pb = f[a][b - 1] * wb if b else 0.0
            x = rng.random() * (pa + pb + pc)
            bit = 1 << cards[i]
            if x < pa:
                ha |= bit
                a -= 1
            elif x < pa + pb:
                hb |= bit
                b -= 1
            else:
                hc |= bit
        hands[sa] |= ha
        hands[sb] |= hb
        hands[sc] |= hc
        return hands

    def marginals(self) -> dict[Seat, dict[int, float]]:
        """``{seat: {card: P(seat holds card)}}`` for the free unseen cards (exact)."""
        import numpy as np

        ca, cb = self.caps[0], self.caps[1]
        n = len(self.cards)
        g = np.zeros((ca + 1, cb + 1))
        g[ca, cb] = 1.0
        out: dict[Seat, dict[int, float]] = {s: {} for s in self.others}
        for i in range(n - 1, -1, -1):
            f = self._forward[i]
            wa, wb, wc = self.w[i]
            pc = float((f * g).sum()) * wc
            pa = float((f[:-1, :] * g[1:, :]).sum()) * wa if ca else 0.0
            pb = float((f[:, :-1] * g[:, 1:]).sum()) * wb if cb else 0.0
            total = pa + pb + pc
            c = self.cards[i]
            for seat, p in zip(self.others, (pa, pb, pc), strict=True):
                out[seat][c] = p / total
            h = g * wc
            if ca:
                h[:-1, :] += g[1:, :] * wa
            if cb:
                h[:, :-1] += g[:, 1:] * wb
            top = h.max()
            if top > 0:
                h /= top
            g = h
        for seat, m in self.fixed.items():
            for c in cards_of(m):
                for s in self.others:
                    out[s][c] = 1.0 if s == seat else 0.0
        return out
