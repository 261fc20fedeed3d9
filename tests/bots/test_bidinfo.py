"""Bid-informed deal sampling: the card-location table, the weighted sampler, the error."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import numpy as np
import pytest

from bots import bidinfo
from bots.knowledge import Knowledge
from bots.registry import make_bot
from bots.sampling import ImpossibleDeal, WeightedSampler
from bots.uct import UCT, uct_search
from game.engine.actions import Play
from game.engine.cards import cards_of, parse_card, parse_hand
from game.engine.view import view_for
from tests.support.deals import check_deal, played_round

# ----- the table ---------------------------------------------------------------------


def test_shipped_table_shape_normalisation_and_provenance() -> None:
    table = bidinfo.load()
    assert table.prob.shape == (bidinfo.POSITIONS, bidinfo.BIDS, 52)
    # Every (position, bid) row is a 13-card hand: its probabilities sum to 13.
    assert np.allclose(table.prob.sum(axis=2), 13.0)
    assert (table.prob > 0).all() and (table.prob < 1).all()
    assert table.meta["seed"] is not None and table.meta["deals"] >= 100_000
    assert table.hands.sum() + table.meta["blind_bids_skipped"] == 4 * table.meta["deals"]
    # What the bids say: a nil bidder rarely holds the ace of spades, a 7+ bidder often.
    ace = parse_card("AS")
    assert table.row(0, 0)[ace] < 0.1 < 0.25 < table.row(0, 7)[ace]
    assert table.row(2, 9)[ace] == table.row(2, 7)[ace]  # 8+ folds into 7


def test_smoothing_shrinks_sparse_cells_toward_the_pooled_bid_and_uniform() -> None:
    holds = np.zeros((4, 8, 52), dtype=int)
    hands = np.zeros((4, 8), dtype=int)
    hands[0, 3] = 1000
    holds[0, 3, :13] = 1000  # the first bidder's 3 always held the 13 clubs
    hands[1, 3] = 1
    holds[1, 3, 13:26] = 1  # one hand of 13 diamonds
    table = bidinfo.BidTable({"holds": holds.tolist(), "hands": hands.tolist()}, alpha=100)
    assert np.allclose(table.prob.sum(axis=2), 13.0)
    assert table.prob[0, 3, 0] > 0.85  # many samples: close to the counts
    assert abs(table.prob[1, 3, 13] - table.prob[2, 3, 13]) < 0.02  # one sample: ~pooled
    assert np.allclose(table.prob[0, 5], 0.25)  # no sample of the bid at all: uniform
    with pytest.raises(ValueError):
        bidinfo.BidTable({"holds": [[0]], "hands": [[0]]})


# ----- the weighted sampler ----------------------------------------------------------


def test_weighted_deals_are_always_consistent_with_the_view() -> None:
    table = bidinfo.load()
    rng = random.Random(11)
    checked_voids = 0
    for seed in range(14):
        r = played_round(seed, stop_at_play=rng.randrange(0, 48), label="bidinfo-test")
        view = view_for(r, r.to_act)
        k = Knowledge(view)
        sampler = bidinfo.bid_informed_sampler(view, table)
        for _ in range(40):
            checked_voids += check_deal(sampler.sample(rng), view, k)
    assert checked_voids > 0


def test_weighted_sampler_keeps_known_cards_and_rejects_impossible_deals() -> None:
    unseen = parse_hand("2H 3H 4H 5H")
    weights = {s: [2.0] * 52 for s in range(4)}
    fixed = WeightedSampler(
        0, 0, unseen, (0, 2, 1, 1), (0, 0, 0, 0), weights, {2: parse_hand("5H")}
    )
    assert all(fixed.sample(random.Random(i))[2] == parse_hand("5H") for i in range(20))
    assert fixed.marginals()[2][parse_card("5H")] == 1.0
    with pytest.raises(ImpossibleDeal):  # only West may hold hearts
        WeightedSampler(0, 0, unseen, (0, 2, 1, 1), (0, 0b0100, 0b0100, 0), weights)
    with pytest.raises(ImpossibleDeal):
        WeightedSampler(0, 0, unseen, (0, 2, 1, 2), (0, 0, 0, 0), weights)


def brute_force_marginals(
    unseen: int, caps: dict[int, int], voids: dict[int, int], weights: dict[int, list[float]]
) -> dict[tuple[int, int], float]:
    """P(seat holds card) under the product weights, by enumerating every deal."""
    cards = cards_of(unseen)
    seats = sorted(caps)
    total = 0.0
    mass: Counter[tuple[int, int]] = Counter()
    for owners in itertools.product(seats, repeat=len(cards)):
        if any(owners.count(s) != caps[s] for s in seats):
            continue
        if any(voids[s] >> (c // 13) & 1 for c, s in zip(cards, owners, strict=True)):
            continue
        w = float(np.prod([weights[s][c] for c, s in zip(cards, owners, strict=True)]))
        total += w
        for c, s in zip(cards, owners, strict=True):
            mass[(s, c)] += w
    return {key: v / total for key, v in mass.items()}


def test_weighted_sampler_draws_the_product_distribution_exactly() -> None:
    rng = random.Random(3)
    unseen = parse_hand("2C 9C KC 3D 4H AH 5S")
    caps = {1: 3, 2: 2, 3: 2}
    voids = {1: 0, 2: 0b0010, 3: 0}  # South showed void in diamonds
    weights = {s: [rng.uniform(0.2, 3.0) for _ in range(52)] for s in (1, 2, 3)}
    sampler = WeightedSampler(0, parse_hand("AS"), unseen, (1, 3, 2, 2),
                              (0, voids[1], voids[2], voids[3]), weights)  # fmt: skip
    exact = brute_force_marginals(unseen, caps, voids, weights)
    marg = sampler.marginals()
    for (s, c), p in exact.items():
        assert marg[s][c] == pytest.approx(p, abs=1e-9)
    n = 20_000
    seen: Counter[tuple[int, int]] = Counter()
    for _ in range(n):
        hands = sampler.sample(rng)
        for s in (1, 2, 3):
            for c in cards_of(hands[s]):
                seen[(s, c)] += 1
    for key, p in exact.items():
        assert abs(seen[key] / n - p) < 0.015, key


def test_equal_weights_are_the_uniform_sampler() -> None:
    r = played_round(5, stop_at_play=0, label="bidinfo-test")
    view = view_for(r, 0)
    marg = WeightedSampler.from_view(view).marginals()
    assert all(p == pytest.approx(1 / 3) for cards in marg.values() for p in cards.values())


# ----- the article's error -----------------------------------------------------------------


def test_learned_inference_beats_uniform_on_held_out_deals() -> None:
    result = bidinfo.average_error(
        bidinfo.load(), deals=25, seed="test-held-out", bot=make_bot(bidinfo.DEFAULT_BIDDER)
    )
    assert result["uniform"] == pytest.approx(4 / 9)
    assert result["learned"] < result["uniform"] - 0.003
    assert result["learned_brier"] < result["uniform_brier"]


# ----- UCT with bid-informed sampling --------------------------------------------------


def test_uct_with_bid_informed_sampling_searches_and_is_registered() -> None:
    for stop in range(32, 44):  # a position with more than one choice that matters
        r = played_round(7, stop_at_play=stop, label="bidinfo-test")
        view = view_for(r, r.to_act)
        if UCT(5).needs_search(view):
            break
    result = uct_search(view, random.Random(7), budget=None, iterations=30, sampling="bids")
    assert result.iterations == 30 and len(result.visits) > 1
    assert result.card in {a.card for a in view.legal_actions if isinstance(a, Play)}
    for name in ("BIS+UCT3b", "BIS+UCT5b", "BIS+UCT7b"):
        bot = make_bot(name)
        assert bot.name == name and isinstance(bot.player, UCT)
        assert bot.player.sampling == "bids"
    assert make_bot("BIS+UCT5").player.sampling == "uniform"
    with pytest.raises(ValueError):
        UCT(5, sampling="psychic")
