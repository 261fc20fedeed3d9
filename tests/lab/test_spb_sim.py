"""SPB's compiled simulator against the Python engine and SRP, and its features."""

from __future__ import annotations

import random

import numpy as np

from bots.learned.features import bid_features
from bots.srp import SRP
from game.engine.actions import Bid, Play
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import view_for
from lab.training.spb_sim import TRAIN_RULES, DealFeatures, Simulator


def reference(
    rules: Rules, dealer: int, hands: list[int], bids: list[int], bags: tuple[int, int]
) -> RoundState:
    r = RoundState(rules, dealer, hands, bags_before=bags)
    while r.phase is Phase.BIDDING:
        r.apply(Bid(r.to_act, bids[r.to_act]))
    srp, rng = SRP(cover_deals=0), random.Random(0)
    while r.phase is Phase.PLAYING:
        r.apply(Play(r.to_act, srp.play(view_for(r, r.to_act), rng)))
    return r


def test_rounds_equal_the_python_engine_and_srp() -> None:
    rng = random.Random(7)
    for rules in (TRAIN_RULES, Rules(first_lead="two_of_clubs", nil_tricks_count_for_team=False)):
        sim = Simulator(rules)
        for i in range(150):
            hands, dealer = deal_hands(f"spb-sim/{i}"), rng.randrange(4)
            # nils often, so that nil play and nil scoring are compared too
            bids = [0 if rng.random() < 0.25 else rng.randint(1, 6) for _ in range(4)]
            bags = (rng.randrange(10), rng.randrange(10)) if i & 1 else (0, 0)
            points = sim.points(hands, dealer, np.array([bids]), bags)
            r = reference(rules, dealer, hands, bids, bags)
            assert r.result is not None
            assert list(sim.last_won[0]) == r.tricks_won, (i, bids)
            assert list(points[0]) == [r.result[0].points, r.result[1].points], (i, bids)


def test_many_rows_of_one_deal_are_played_independently() -> None:
    sim, hands = Simulator(), deal_hands("spb-sim/rows")
    rows = np.array([[k, 3, 4, 2] for k in range(14)])
    together = sim.points(hands, 2, rows)
    alone = np.concatenate([sim.points(hands, 2, rows[k : k + 1]) for k in range(14)])
    assert (together == alone).all()
    assert len({tuple(p) for p in together}) > 3  # the bid changes the points


def test_deal_features_equal_bid_features() -> None:
    hands, dealer = deal_hands("spb-sim/features"), 1
    feats = DealFeatures(hands, dealer)
    rows = np.array([[0, 5, 13, 2], [4, 0, 1, 7]])
    for position in range(4):
        seat = (dealer + 1 + position) & 3
        got = feats.rows(position, rows)
        for i, row in enumerate(rows):
            earlier = feats.order[:position]
            bids = [int(row[s]) if s in earlier else None for s in range(4)]
            assert np.array_equal(got[i], bid_features(hands[seat], seat, bids, position))
