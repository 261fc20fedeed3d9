"""SIM: BIS's candidate bids checked by simulated rounds, blended by k_s."""

from __future__ import annotations

import random

import pytest

from bots.bis import RISKY_NIL_PROBABILITY
from bots.registry import make_bot
from bots.sim import SIM, WIN_VALUE, bid_to_play, blend, outcome, play_out, quantile
from bots.srp import SRP
from game.engine.actions import Bid
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import SeatView, view_for

BIS_BOT = make_bot("BIS+SRP")


def bidding_view(seed: int, before: int, scores: tuple[int, int] = (0, 0)) -> SeatView:
    """The view of the seat to bid after ``before`` BIS bids, in a fresh round."""
    r = RoundState(Rules(), seed % 4, deal_hands(f"sim-test/{seed}"), scores_before=scores)
    rng = random.Random(seed)
    for _ in range(before):
        r.apply(BIS_BOT.act(view_for(r, r.to_act), rng))
    return view_for(r, r.to_act)


@pytest.mark.parametrize("seed", range(12))
def test_k_s_zero_is_bis_and_simulates_nothing(seed: int) -> None:
    view = bidding_view(seed, seed % 4)
    sim = SIM(0.0, deals=5)
    result = sim.search(view, random.Random(seed), deals=5)
    assert result.deals == 0 and result.simulated == {}
    assert sim.bid(view, random.Random(seed)) == BIS_BOT.bidder.bid(view, random.Random(seed))


@pytest.mark.parametrize("seed", range(12))
def test_candidates_are_legal_and_include_bis_bid_first(seed: int) -> None:
    view = bidding_view(seed, seed % 4)
    bis_bid, cands, info = SIM(0.5).candidates(view)
    legal = {a.tricks for a in view.legal_actions if isinstance(a, Bid) and not a.blind}
    assert cands[0] == bis_bid == BIS_BOT.bidder.bid(view, random.Random(0)).tricks
    assert set(cands) <= legal and len(set(cands)) == len(cands)
    risky = info["nil_probability"] >= RISKY_NIL_PROBABILITY
    assert (0 in cands) == (0 in legal and (bis_bid == 0 or risky))


def test_the_sampled_round_keeps_the_bids_so_far_and_finishes_the_bidding() -> None:
    view = bidding_view(4, 2)
    seat = view.seat
    assert seat is not None and view.hand is not None
    rest = ~view.hand & ((1 << 52) - 1)
    # Any consistent deal: our hand, the other 39 cards in three hands.
    cards = [c for c in range(52) if rest >> c & 1]
    hands = [0, 0, 0, 0]
    hands[seat] = view.hand
    for i, s in enumerate(s for s in range(4) if s != seat):
        for c in cards[13 * i : 13 * i + 13]:
            hands[s] |= 1 << c
    r = bid_to_play(view, hands, 3, BIS_BOT, random.Random(1))
    assert r.phase is Phase.PLAYING
    assert r.bids[seat] == 3
    for s in view.bid_order:
        assert r.bids[s] == view.bids[s]
    assert r.bid_order[: len(view.bid_order)] == list(view.bid_order)
    assert len(r.bid_order) == 4
    done = play_out(r, random.Random(1), SRP(cover_deals=0))
    assert done.phase is Phase.DONE and sum(done.tricks_won) == 13


def test_outcome_counts_the_match_won_or_lost_by_the_round() -> None:
    rules = Rules(winning_goal=200, losing_goal=-100)
    hands = deal_hands("outcome")
    view = bidding_view(1, 0, scores=(190, -40))
    r = RoundState(rules, view.dealer, hands, scores_before=(190, -40))
    rng = random.Random(2)
    while r.phase is not Phase.DONE:
        r.apply(BIS_BOT.act(view_for(r, r.to_act), rng))
    assert r.result is not None
    gap = r.result[0].points - r.result[1].points
    after = 190 + r.result[0].points, -40 + r.result[1].points
    ns = outcome(r, 0)
    assert outcome(r, 1) == -ns
    assert after[0] >= rules.winning_goal > after[1]  # this deal ends the match for N/S
    assert ns == gap + WIN_VALUE
    r.scores_before = (0, 0)  # the same round earlier in the match ends nothing
    assert outcome(r, 0) == gap


def test_blend_weights_simulation_against_bis() -> None:
    knowledge = {3: 30.0, 2: 35.0, 4: 0.0}
    values = {3: [10.0, 10.0], 2: [0.0, 0.0], 4: [40.0, -20.0]}
    # k_s = 0: BIS's bid (its estimate raised to the best other candidate's).
    assert blend(3, knowledge, values, 0.0, None)[0] == 3
    # k_s = 1: the best simulated mean (4: 10 ties 3: 10, BIS's bid wins ties).
    assert blend(3, knowledge, values, 1.0, None)[0] == 3
    values[4] = [50.0, -20.0]
    assert blend(3, knowledge, values, 1.0, None)[0] == 4
    # The lower quantile prefers the steady bid.
    assert blend(3, knowledge, values, 1.0, 0.25)[0] == 3
    # No simulated deal: BIS's bid.
    assert blend(4, knowledge, {}, 1.0, None)[0] == 4
    assert quantile([4.0, 0.0, 8.0], 0.5) == 4.0 and quantile([0.0, 8.0], 0.25) == 2.0


def test_same_deals_for_every_candidate_and_reproducible() -> None:
    view = bidding_view(7, 1)
    sim = SIM(1.0)
    a = sim.search(view, random.Random(3), deals=3)
    b = sim.search(view, random.Random(3), deals=3)
    assert a.deals == 3 and a == b
    assert set(a.simulated) == set(sim.candidates(view)[1])
    # Each candidate's value is its outcome on the same three deals.
    from bots import bidinfo
    from bots.sampling import WeightedSampler

    rng = random.Random(3)
    sampler = WeightedSampler.from_view(view, bidinfo.load().weights_for(view))
    rows = []
    for _ in range(3):
        hands = sampler.sample(rng)
        seed = rng.random()
        rows.append({c: sim.simulate(view, hands, c, seed) for c in a.simulated})
    for c, mean in a.simulated.items():
        assert mean == pytest.approx(sum(row[c] for row in rows) / 3)


def test_no_time_means_bis_bid() -> None:
    view = bidding_view(5, 3)
    sim = SIM(1.0)
    assert sim.search(view, random.Random(1), budget=0.0).deals == 0
    assert sim.bid_within(view, random.Random(1), 0.0) == sim.fallback(view, random.Random(1))
    assert sim.needs_search(view) and not SIM(0.0).needs_search(view)


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_playout_gives_the_reference_values(seed: int) -> None:
    view = bidding_view(seed, seed % 4, scores=(10 * seed, -20))
    sim = SIM(1.0)
    from bots import sim as sim_module

    results = []
    for mode in ("reference", "compiled"):
        original = sim_module.PLAYOUT
        sim_module.PLAYOUT = mode
        try:
            results.append(sim.search(view, random.Random(seed), deals=3))
        finally:
            sim_module.PLAYOUT = original
    assert results[0] == results[1] and results[0].deals == 3
