"""The compiled deal samplers (bots/sampling_compiled.py) draw the reference's deals
(bots/sampling.py) from the same SplitMix64 stream, exactly."""

from __future__ import annotations

import random

import numpy as np

from bots import bidinfo
from bots.knowledge import Knowledge
from bots.sampling import Sampler, WeightedSampler
from bots.sampling_compiled import CompiledSampler, SplitMixRandom
from game.engine.fast_compiled import SplitMix
from game.engine.view import view_for
from tests.support.srp_positions import RULES, positions


def test_the_python_stream_is_the_engines_splitmix() -> None:
    a, b = SplitMixRandom(99), SplitMix(99)
    assert [a.random() for _ in range(100)] == [b.random() for _ in range(100)]


def test_randrange_and_shuffle_are_uniform_enough() -> None:
    rng = SplitMixRandom(5)
    counts = [0] * 7
    for _ in range(7000):
        counts[rng.randrange(7)] += 1
    assert all(900 < c < 1100 for c in counts)
    xs = list(range(10))
    rng.shuffle(xs)
    assert sorted(xs) == list(range(10)) and xs != list(range(10))


def test_the_same_deals_as_the_reference() -> None:
    table = bidinfo.load()
    rng = random.Random(3)
    deals = 0
    for r, _ in positions(RULES["default"], 40, "sampling"):
        if rng.random() > 0.1:  # a few positions of each round
            continue
        view = view_for(r, r.to_act)
        k = Knowledge(view)
        weighted = WeightedSampler.from_view(view, table.weights_for(view), k)
        for sampler in (Sampler.from_view(view, k), weighted):
            seed = rng.getrandbits(64)
            reference = SplitMixRandom(seed)
            compiled = CompiledSampler(sampler)
            state = np.array([seed], dtype=np.uint64)
            hands = np.zeros(4, dtype=np.int64)
            for _ in range(20):
                compiled.sample_into(state, hands)
                assert hands.tolist() == sampler.sample(reference)
                deals += 1
    assert deals > 2000
