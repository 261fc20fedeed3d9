"""The fast path compiled (numba): whole random rounds without leaving machine code.

:mod:`game.engine.fast` stays the readable reference. Here the same round --
a shuffled deal, four random bids, 52 uniform random legal cards, the
scoring -- runs in one compiled loop. Its random numbers come from
SplitMix64 (:class:`SplitMix`), written twice, in Python and compiled, so
the tests can play a round both ways from the same numbers and compare
every trick and point (``tests/engine/test_fast_compiled.py``).

``cache=True``: the first call compiles (a few seconds), later processes
load the machine code from ``__pycache__``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from game.engine import kernel_cache  # noqa: F401  (before the kernels: their cache folder)

from .cards import SIDE_SUIT_MASK, SUIT_MASKS, TWO_OF_CLUBS
from .rules import Rules
from .tricks import BEATERS

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
TO_UNIT = 1.0 / (1 << 53)

_SUIT = np.array(SUIT_MASKS, dtype=np.int64)
_SIDE = np.int64(SIDE_SUIT_MASK)
_BEATERS = np.array(BEATERS, dtype=np.int64)


class SplitMix:
    """SplitMix64 in Python: the same numbers as the compiled :func:`_uniform`."""

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64

    def random(self) -> float:
        self.state = x = (self.state + GOLDEN) & MASK64
        z = ((x ^ (x >> 30)) * MIX1) & MASK64
        z = ((z ^ (z >> 27)) * MIX2) & MASK64
        return ((z ^ (z >> 31)) >> 11) * TO_UNIT


@njit(cache=True)
def _uniform(state):
    """The next number in [0, 1) of the SplitMix64 stream ``state[0]``."""
    x = state[0] + np.uint64(GOLDEN)
    state[0] = x
    z = (x ^ (x >> np.uint64(30))) * np.uint64(MIX1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(MIX2)
    z = z ^ (z >> np.uint64(31))
    return np.float64(z >> np.uint64(11)) * TO_UNIT


@njit(cache=True)
def _random_card(mask, r):
    """The card of ``mask`` picked by ``r`` in [0, 1) (as ``fast.random_card``)."""
    n = 0
    m = mask
    while m:
        m &= m - 1
        n += 1
    k = int(r * n)
    while k:
        mask &= mask - 1
        k -= 1
    low = mask & -mask
    c = 0
    while low > 1:
        low >>= 1
        c += 1
    return c


@njit(cache=True)
def play_random(hands, leader, state, spades_broken, two_of_clubs_lead, won):
    """``fast.play_random`` compiled: the rest of a round from a trick's start, by
    uniform random legal cards drawn from ``state``. ``hands`` (int64[4]) changes in
    place; the tricks each seat took are added to ``won``."""
    n = 0
    m = hands[0]
    while m:
        m &= m - 1
        n += 1
    for t in range(n):
        hand = hands[leader]
        if two_of_clubs_lead and t == 0:
            card = TWO_OF_CLUBS
        else:
            legal = hand
            if not spades_broken and hand & _SIDE:
                legal = hand & _SIDE
            card = _random_card(legal, _uniform(state))
        hands[leader] = hand ^ (np.int64(1) << card)
        follow = _SUIT[card // 13]
        best = card
        winner = leader
        seat = leader
        for _ in range(3):
            seat = (seat + 1) & 3
            hand = hands[seat]
            legal = hand & follow
            if legal == 0:
                legal = hand
            c = _random_card(legal, _uniform(state))
            hands[seat] = hand ^ (np.int64(1) << c)
            if (_BEATERS[best] >> c) & 1:
                best = c
                winner = seat
        if best >= 39:
            spades_broken = True
        won[winner] += 1
        leader = winner


@njit(cache=True)
def score_points(bids, blind, tricks, rules, bags_before, out):
    """Each partnership's round points into ``out[0:2]`` and bags after into
    ``out[2:4]`` (as ``scoring.score_round``). ``rules``: nil, nil points, nil
    tricks count for the team, bag limit, bag penalty total (:func:`rules_array`)."""
    for p in range(2):
        contract = 0
        counted = 0
        nil_bags = 0
        nil_points = 0
        for seat in (p, p + 2):
            took = tricks[seat]
            if bids[seat] == 0 and rules[0]:
                value = rules[1] * (2 if blind[seat] else 1)
                nil_points += value if took == 0 else -value
                if rules[2]:
                    counted += took
                else:
                    nil_bags += took
            else:
                contract += bids[seat]
                counted += took
        made = counted >= contract
        points = 10 * contract if made else -10 * contract
        bags = (counted - contract if made else 0) + nil_bags
        total = bags_before[p] + bags
        penalties = total // rules[3]
        out[p] = points + bags + nil_points - penalties * rules[4]
        out[2 + p] = total - penalties * rules[3]


def rules_array(rules: Rules) -> np.ndarray:
    """What :func:`score_points` reads of a rule set."""
    return np.array(
        [
            int(rules.nil),
            rules.nil_points,
            int(rules.nil_tricks_count_for_team),
            rules.bag_limit,
            rules.bag_penalty_total,
        ],
        dtype=np.int64,
    )


@njit(cache=True)
def random_rounds(n, seed, rules, record):
    """``n`` random rounds from one SplitMix64 stream: a Fisher-Yates deal, dealer
    ``i % 4``, bids 1..4, random play from left of the dealer, the scoring from
    0 bags. Row ``i`` of ``record`` (int64[n, 6] or [0, 6]: not kept) gets the
    round's NS and EW points and its four bids' tricks; returns the sum of the
    points gaps."""
    state = np.empty(1, dtype=np.uint64)
    state[0] = np.uint64(seed)
    deck = np.empty(52, dtype=np.int64)
    hands = np.empty(4, dtype=np.int64)
    bids = np.empty(4, dtype=np.int64)
    blind = np.zeros(4, dtype=np.int64)
    won = np.empty(4, dtype=np.int64)
    bags = np.zeros(2, dtype=np.int64)
    out = np.empty(4, dtype=np.int64)
    total = 0
    for i in range(n):
        for c in range(52):
            deck[c] = c
        for j in range(51, 0, -1):
            k = int(_uniform(state) * (j + 1))
            deck[j], deck[k] = deck[k], deck[j]
        hands[:] = 0
        for j in range(52):
            hands[j & 3] |= np.int64(1) << deck[j]
        for s in range(4):
            bids[s] = 1 + int(_uniform(state) * 4)
        won[:] = 0
        play_random(hands, (i + 1) & 3, state, False, False, won)
        score_points(bids, blind, won, rules, bags, out)
        total += out[0] - out[1]
        if i < record.shape[0]:
            record[i, 0] = out[0]
            record[i, 1] = out[1]
            for s in range(4):
                record[i, 2 + s] = won[s]
    return total


def compiled_rounds(n: int, seed: int, rules: Rules | None = None) -> int:
    """Play ``n`` random rounds compiled; the checksum of the points gaps."""
    keep = np.empty((0, 6), dtype=np.int64)
    return int(random_rounds(n, seed, rules_array(rules or Rules()), keep))
