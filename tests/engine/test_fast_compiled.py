"""The compiled fast path plays exactly the reference fast path's rounds
(game/engine/fast.py, scoring.py) from the same random numbers."""

from __future__ import annotations

import random

import numpy as np
import pytest

from game.engine import fast_compiled as fc
from game.engine.fast import play_random
from game.engine.rules import Rules
from game.engine.scoring import score_round


def reference_round(rng: fc.SplitMix, i: int, rules: Rules) -> list[int]:
    """One round of :func:`fc.random_rounds`, in Python: [NS points, EW points, tricks...]."""
    deck = list(range(52))
    for j in range(51, 0, -1):
        k = int(rng.random() * (j + 1))
        deck[j], deck[k] = deck[k], deck[j]
    hands = [0, 0, 0, 0]
    for j, c in enumerate(deck):
        hands[j & 3] |= 1 << c
    bids = [1 + int(rng.random() * 4) for _ in range(4)]
    won = play_random(hands, (i + 1) & 3, rng.random)
    ns, ew = score_round(rules, bids, (False,) * 4, won, (0, 0), (0, 0))
    return [ns.points, ew.points, *won]


def test_the_same_numbers_in_python_and_compiled() -> None:
    py = fc.SplitMix(12345)
    state = np.array([12345], dtype=np.uint64)
    for _ in range(1000):
        assert fc._uniform(state) == py.random()


@pytest.mark.parametrize("seed", [1, 2])
def test_random_rounds_equal_the_reference_on_2000_rounds(seed: int) -> None:
    rules = Rules()
    n = 2000
    record = np.zeros((n, 6), dtype=np.int64)
    total = fc.random_rounds(n, seed, fc.rules_array(rules), record)
    rng = fc.SplitMix(seed)
    want = [reference_round(rng, i, rules) for i in range(n)]
    assert record.tolist() == want
    assert total == sum(r[0] - r[1] for r in want)
    assert fc.compiled_rounds(n, seed) == total


def test_play_random_from_any_trick_start_equals_the_reference() -> None:
    rng = random.Random(3)
    for case in range(3000):
        deck = list(range(52))
        rng.shuffle(deck)
        k = rng.randint(1, 13)
        hands = [0, 0, 0, 0]
        for j in range(4 * k):
            hands[j & 3] |= 1 << deck[j]
        two_of_clubs = k == 13 and case % 5 == 0
        if two_of_clubs:  # the two of clubs leads: its holder leads
            hands = [0, 0, 0, 0]
            for j, c in enumerate(deck):
                hands[j & 3] |= 1 << c
            leader = next(s for s in range(4) if hands[s] & 1)
        else:
            leader = rng.randrange(4)
        broken = case % 3 == 0
        seed = rng.getrandbits(63)
        want = play_random(list(hands), leader, fc.SplitMix(seed).random, broken, two_of_clubs)
        got = np.zeros(4, dtype=np.int64)
        h = np.array(hands, dtype=np.int64)
        fc.play_random(h, leader, np.array([seed], dtype=np.uint64), broken, two_of_clubs, got)
        assert got.tolist() == want and not h.any()


def test_scoring_equals_the_reference() -> None:
    rng = random.Random(4)
    out = np.zeros(4, dtype=np.int64)
    for _ in range(3000):
        rules = Rules(
            nil=(nil := rng.random() < 0.8),
            blind_nil=nil and rng.random() < 0.5,
            nil_points=rng.choice((50, 100)),
            nil_tricks_count_for_team=rng.random() < 0.5,
            bag_limit=rng.choice((5, 10)),
            bag_penalty=rng.choice((50, 100)),
            bag_penalty_removes_bag_points=rng.random() < 0.5,
        )
        bids = [rng.randint(0 if nil else 1, 7) for _ in range(4)]
        blind = [b == 0 and rng.random() < 0.3 for b in bids]
        cuts = sorted(rng.randint(0, 13) for _ in range(3))
        tricks = [cuts[0], cuts[1] - cuts[0], cuts[2] - cuts[1], 13 - cuts[2]]
        bags = (rng.randrange(rules.bag_limit), rng.randrange(rules.bag_limit))
        ns, ew = score_round(rules, bids, blind, tricks, (0, 0), bags)
        fc.score_points(
            np.array(bids, dtype=np.int64),
            np.array(blind, dtype=np.int64),
            np.array(tricks, dtype=np.int64),
            fc.rules_array(rules),
            np.array(bags, dtype=np.int64),
            out,
        )
        assert out.tolist() == [ns.points, ew.points, ns.bags_after, ew.bags_after]
