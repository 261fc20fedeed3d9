"""UCT's deal samplers compiled (numba): :mod:`bots.sampling` stays the reference.

Both samplers keep their Python set-up (the uniform one's count of deals per
suit and capacities, the weighted one's forward pass) and hand its tables to
a kernel that draws a deal the way the reference's ``sample`` does, from a
SplitMix64 stream (:func:`game.engine.fast_compiled._uniform`). The same
stream in Python, :class:`SplitMixRandom`, makes the reference draw the same
deals: ``randrange`` and ``shuffle`` are written out here as CPython's
``Random`` does them (rejection sampling on the top bits, Fisher-Yates from
the end) so the two never depend on the interpreter's version.
``tests/bots/test_sampling_compiled.py`` holds them equal.
"""

from __future__ import annotations

import random
from math import comb

import numpy as np
from numba import njit

from game.engine import kernel_cache  # noqa: F401  (before the kernels: their cache folder)
from game.engine.fast_compiled import GOLDEN, MASK64, MIX1, MIX2, TO_UNIT, _uniform

from .sampling import Sampler, WeightedSampler

_COMB = np.array([[comb(n, k) for k in range(14)] for n in range(14)], dtype=np.int64)


class SplitMixRandom(random.Random):
    """A ``random.Random`` on the SplitMix64 stream, for the reference samplers and
    UCT's Python playouts: the same numbers as the compiled kernels draw."""

    def __init__(self, seed: int = 0) -> None:
        self.state = seed & MASK64

    def seed(self, a: object = None, version: int = 2) -> None:  # noqa: ARG002
        self.state = hash(a) & MASK64

    def _next(self) -> int:
        self.state = x = (self.state + GOLDEN) & MASK64
        z = ((x ^ (x >> 30)) * MIX1) & MASK64
        z = ((z ^ (z >> 27)) * MIX2) & MASK64
        return z ^ (z >> 31)

    def random(self) -> float:
        return (self._next() >> 11) * TO_UNIT

    def getrandbits(self, k: int) -> int:
        if not 0 < k <= 64:
            raise ValueError("1 to 64 bits")
        return self._next() >> (64 - k)

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:  # type: ignore[override]
        if stop is not None or step != 1 or start <= 0:
            raise ValueError("randrange(n) with n > 0 only")
        return self._randbelow(start)

    def _randbelow(self, n: int) -> int:  # type: ignore[override]
        k = n.bit_length()
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return r

    def shuffle(self, x: list) -> None:  # type: ignore[override]
        for i in range(len(x) - 1, 0, -1):
            j = self._randbelow(i + 1)
            x[i], x[j] = x[j], x[i]


@njit(cache=True)
def _bits(state, k):
    """getrandbits(k), 1 <= k <= 64, of the stream ``state[0]``."""
    x = state[0] + np.uint64(GOLDEN)
    state[0] = x
    z = (x ^ (x >> np.uint64(30))) * np.uint64(MIX1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(MIX2)
    z = z ^ (z >> np.uint64(31))
    return np.int64(z >> np.uint64(64 - k))


@njit(cache=True)
def _randbelow(state, n):
    k = 0
    m = n
    while m:
        m >>= 1
        k += 1
    r = _bits(state, k)
    while r >= n:
        r = _bits(state, k)
    return r


# ----- the uniform sampler (Sampler.sample) ----------------------------------------------


def uniform_tables(s: Sampler) -> tuple[np.ndarray, ...]:
    """The kernel's arguments for ``s``: (base hands, seats, caps, cards by suit,
    count by suit, allowed by suit and seat, deals by (suit, a, b), cards left by suit)."""
    base = np.zeros(4, dtype=np.int64)
    base[s.me] = s.my_hand
    for seat, m in s.fixed.items():
        base[seat] |= m
    cards = np.zeros((4, 13), dtype=np.int64)
    counts = np.zeros(4, dtype=np.int64)
    for suit in range(4):
        counts[suit] = len(s.suit_cards[suit])
        cards[suit, : counts[suit]] = s.suit_cards[suit]
    allowed = np.array(s.allowed, dtype=np.int64)
    ca, cb = s.caps[0], s.caps[1]
    ways = np.zeros((5, ca + 1, cb + 1), dtype=np.int64)
    for suit in range(1, 5):
        for a in range(ca + 1):
            for b in range(cb + 1):
                ways[suit, a, b] = s._count(suit, a, b)
    left = np.array([int(counts[suit:].sum()) for suit in range(4)], dtype=np.int64)
    seats = np.array(s.others, dtype=np.int64)
    caps = np.array(s.caps, dtype=np.int64)
    return base, seats, caps, cards, counts, allowed, ways, left


@njit(cache=True)
def sample_uniform(base, seats, caps, cards, counts, allowed, ways, left, state, hands):
    """Sampler.sample into ``hands``, from the stream ``state``."""
    for s in range(4):
        hands[s] = base[s]
    a, b = caps[0], caps[1]
    opt_a = np.empty(196, dtype=np.int64)
    opt_b = np.empty(196, dtype=np.int64)
    weights = np.empty(196, dtype=np.int64)
    deck = np.empty(13, dtype=np.int64)
    for suit in range(4):
        n = counts[suit]
        c_cap = left[suit] - a - b
        k = 0
        total = 0
        for xa in range(min(n, a) + 1 if allowed[suit, 0] else 1):
            rest = n - xa
            for xb in range(min(rest, b) + 1 if allowed[suit, 1] else 1):
                xc = rest - xb
                if xc and not allowed[suit, 2]:
                    continue
                if xc > c_cap:
                    continue
                sub = ways[suit + 1, a - xa, b - xb]
                if sub:
                    opt_a[k] = xa
                    opt_b[k] = xb
                    weights[k] = _COMB[n, xa] * _COMB[n - xa, xb] * sub
                    total += weights[k]
                    k += 1
        r = _randbelow(state, total)
        pick = 0
        while r >= weights[pick]:
            r -= weights[pick]
            pick += 1
        xa, xb = opt_a[pick], opt_b[pick]
        if n:
            for i in range(n):
                deck[i] = cards[suit, i]
            for i in range(n - 1, 0, -1):
                j = _randbelow(state, i + 1)
                deck[i], deck[j] = deck[j], deck[i]
            for i in range(n):
                seat = seats[0] if i < xa else (seats[1] if i < xa + xb else seats[2])
                hands[seat] |= np.int64(1) << deck[i]
        a -= xa
        b -= xb


# ----- the weighted sampler (WeightedSampler.sample) ---------------------------------------


def weighted_tables(s: WeightedSampler) -> tuple[np.ndarray, ...]:
    """The kernel's arguments for ``s``: (base hands, seats, caps, cards, weights,
    forward pass)."""
    base = np.zeros(4, dtype=np.int64)
    base[s.me] = s.my_hand
    for seat, m in s.fixed.items():
        base[seat] |= m
    forward = np.stack(s._forward) if s._forward else np.zeros((1, 1, 1))
    return (
        base,
        np.array(s.others, dtype=np.int64),
        np.array(s.caps, dtype=np.int64),
        np.array(s.cards, dtype=np.int64),
        np.array(s.w, dtype=np.float64).reshape(len(s.cards), 3),
        np.ascontiguousarray(forward, dtype=np.float64),
    )


@njit(cache=True)
def sample_weighted(base, seats, caps, cards, w, forward, state, hands):
    """WeightedSampler.sample into ``hands``, from the stream ``state``."""
    a, b = caps[0], caps[1]
    ha = hb = hc = np.int64(0)
    for i in range(cards.shape[0] - 1, -1, -1):
        f = forward[i]
        wa, wb, wc = w[i, 0], w[i, 1], w[i, 2]
        pc = f[a, b] * wc if a + b <= i else 0.0
        pa = f[a - 1, b] * wa if a else 0.0
        pb = f[a, b - 1] * wb if b else 0.0
        x = _uniform(state) * (pa + pb + pc)
        bit = np.int64(1) << cards[i]
        if x < pa:
            ha |= bit
            a -= 1
        elif x < pa + pb:
            hb |= bit
            b -= 1
        else:
            hc |= bit
    for s in range(4):
        hands[s] = base[s]
    hands[seats[0]] |= ha
    hands[seats[1]] |= hb
    hands[seats[2]] |= hc


class CompiledSampler:
    """Draws from a reference sampler's distribution with its kernel: the same deals
    as the reference's ``sample`` given a :class:`SplitMixRandom` of the same seed."""

    def __init__(self, sampler: Sampler | WeightedSampler) -> None:
        self.weighted = isinstance(sampler, WeightedSampler)
        self.tables = weighted_tables(sampler) if self.weighted else uniform_tables(sampler)

    def sample_into(self, state: np.ndarray, hands: np.ndarray) -> None:
        if self.weighted:
            sample_weighted(*self.tables, state, hands)
        else:
            sample_uniform(*self.tables, state, hands)


def warm_up() -> None:
    """Compile or load both kernels (a searching process's start)."""
    from game.engine.cards import parse_hand

    unseen = parse_hand("KS 2H 3H")
    state = np.zeros(1, dtype=np.uint64)
    hands = np.zeros(4, dtype=np.int64)
    for sampler in (
        Sampler(0, parse_hand("AS"), unseen, (1, 1, 1, 1), (0, 0, 0, 0)),
        WeightedSampler(0, parse_hand("AS"), unseen, (1, 1, 1, 1), (0, 0, 0, 0)),
    ):
        CompiledSampler(sampler).sample_into(state, hands)
