"""SPB's counterfactual fitted Q-iteration: its targets, reproducibility, resume, gauge."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from bots.baselines import RBBidder
from bots.learned import features
from bots.learned.bidders import SPB
from bots.learned.mlp import read_mlp
from game.engine.deal import deal_hands
from lab.training.spb_eval import duplicate_gauge
from lab.training.spb_sim import Simulator
from tests.support.learned_views import bid_views, constant_net


def always(bid: int) -> SPB:
    q = np.zeros(14, np.float32)
    q[bid] = 1.0
    return SPB(constant_net(features.BID_FEATURES, q))


def test_the_targets_are_every_bid_played_out_on_the_same_deal() -> None:
    from lab.training.spb_q import counterfactual_deal

    sim, hands, dealer = Simulator(), deal_hands("spbq/targets"), 3
    ours, theirs = always(4).network, always(2).network
    # temperature tiny: the sampled bids are the argmax, 4 for us and 2 for them
    xs, ys, acts = counterfactual_deal(
        sim, hands, dealer, 1, (ours, theirs), 1e-6, random.Random(0)
    )
    assert acts == [4, 4] and len(xs) == 2
    # dealer 3: seats bid 0, 1, 2, 3; the learner's are 1 and 3
    for x, y, (pos, seat) in zip(xs, ys, [(1, 1), (3, 3)], strict=True):
        assert x[52 + pos] == 1.0  # the bidding position
        for k in range(14):
            bids = [2, 4, 2, 4]
            bids[seat] = k
            p = sim.points(hands, dealer, np.array([bids]))[0]
            assert y[k] == pytest.approx((p[1] - p[0]) / 100.0)
    assert ys[0][0] != ys[0][4]  # nil is tried, and scores otherwise


def test_the_gauge_sees_a_silly_bidder_lose() -> None:
    g = duplicate_gauge(always(13), RBBidder(), 20, 1)
    assert g.games == 20 and g.wins <= 2 and g.nils == 0
    nil = duplicate_gauge(always(0), RBBidder(), 4, 1)
    assert nil.nils == nil.bids > 0 and nil.wins == 0  # a double nil set loses at once


@pytest.mark.usefixtures("torch_installed")
def test_training_is_reproducible_and_resumes_to_the_same_weights(tmp_path: Path) -> None:
    from lab.training.spb_q import train_spb_q

    settings = dict(seed=5, deals=30, snapshot_every=1, buffer=2, eval_every=2, eval_games=4)
    a, info = train_spb_q(iterations=3, checkpoint=tmp_path / "a.ckpt", **settings)
    b, _ = train_spb_q(iterations=3, checkpoint=tmp_path / "b.ckpt", **settings)
    assert a.checksum == b.checksum
    train_spb_q(iterations=1, checkpoint=tmp_path / "c.ckpt", **settings)
    c, resumed = train_spb_q(iterations=3, checkpoint=tmp_path / "c.ckpt", **settings)
    assert c.checksum == a.checksum and resumed["history"] == info["history"]
    assert info["history"]["eval_iteration"] == [2]
    d, _ = train_spb_q(iterations=3, checkpoint=tmp_path / "d.ckpt", **{**settings, "seed": 6})
    assert d.checksum != a.checksum
    a.save(tmp_path / "spb.npz")
    saved = SPB(read_mlp(tmp_path / "spb.npz"))
    for view in bid_views(10):
        assert SPB(a).bid(view, random.Random(0)) == saved.bid(view, random.Random(0))


def test_spb_score_sees_the_match_and_its_end_counts_in_the_return() -> None:
    from dataclasses import replace

    from bots.learned.features import SCORE_FEATURES, score_features
    from bots.learned.mlp import MLP
    from lab.training.spb_q import WIN_BONUS, returns
    from lab.training.spb_sim import DealFeatures

    hands = deal_hands("spbq/score")
    plain, scored = DealFeatures(hands, 0), DealFeatures(hands, 0, (150, -40), (3, 7))
    rows = np.array([[2, 3, 4, 5]])
    for pos in range(4):
        seat = plain.order[pos]
        x = scored.rows(pos, rows)[0]
        assert np.array_equal(x[: features.BID_FEATURES], plain.rows(pos, rows)[0])
        assert np.allclose(x[features.BID_FEATURES :], score_features(seat, (150, -40), (3, 7)))
    # East/West's view: their score first
    assert np.allclose(score_features(1, (150, -40), (3, 7)), [-0.2, 0.75, 0.7, 0.3])
    points = np.array([[60, -50], [-60, 30], [20, 10]])
    # from 150 : -40, +60 reaches 210 (N/S win), -60 : +30 ends nothing, 20 : 10 neither
    got = returns(points, 0, (150, -40))
    assert np.allclose(got, [1.1 + WIN_BONUS, -0.9, 0.1])
    assert np.allclose(returns(points, 1, (150, -40)), [-1.1 - WIN_BONUS, 0.9, -0.1])
    assert np.allclose(returns(points, 0, None), [1.1, -0.9, 0.1])
    # SPB with a 69-input network reads the score: nil when its side leads by much
    w = np.zeros((features.BID_FEATURES + SCORE_FEATURES, 14), np.float32)
    w[features.BID_FEATURES, 0] = 10.0  # our score / 200 pushes nil up
    b = np.zeros(14, np.float32)
    b[5] = 1.0
    spb = SPB(MLP([(w, b)]))
    view = bid_views(1)[0]
    assert spb.bid(view, random.Random(0)).tricks == 5  # bid_views are at 0 : 0
    leading = replace(view, scores=(150, 0) if view.seat in (0, 2) else (0, 150))
    assert spb.bid(leading, random.Random(0)).tricks == 0


def test_the_registry_builds_spb_score_from_its_shipped_weights() -> None:
    from bots.learned.features import SCORE_FEATURES
    from bots.registry import make_bot

    bot = make_bot("SPB-score+SRP")
    assert bot.bidder.network.inputs == features.BID_FEATURES + SCORE_FEATURES  # type: ignore[attr-defined]
    assert bot.bidder.network.meta["score_inputs"] is True  # type: ignore[attr-defined]
    view = bid_views(1)[0]
    assert 0 <= bot.act(view, random.Random(0)).tricks <= 13  # type: ignore[attr-defined]


def test_the_registry_builds_spb_pool_from_its_shipped_weights() -> None:
    from bots.registry import make_bot

    bot = make_bot("SPB-pool+SRP")
    meta = bot.bidder.network.meta  # type: ignore[attr-defined]
    assert meta["pool_bidders"] == ["BIS", "SIM75"] and meta["pool_bidder_share"] == 0.6
    assert meta["init"] == make_bot("SPB+SRP").bidder.network.checksum  # type: ignore[attr-defined]
    view = bid_views(1)[0]
    assert 0 <= bot.act(view, random.Random(0)).tricks <= 13  # type: ignore[attr-defined]


class Recording:
    """A bidder that records the views it is asked in and bids BIS's bid."""

    name = "Recording"

    def __init__(self) -> None:
        from bots.registry import BIDDERS

        self.bis = BIDDERS["BIS"]()
        self.views: list = []

    def bid(self, view, rng: random.Random):  # type: ignore[no-untyped-def]
        self.views.append(view)
        return self.bis.bid(view, rng)


def test_a_pool_bidder_answers_every_bid_as_at_a_table() -> None:
    from game.engine.actions import Bid
    from game.engine.state import RoundState
    from game.engine.view import view_for
    from lab.training.spb_q import counterfactual_deal
    from lab.training.spb_sim import TRAIN_RULES

    sim, hands, dealer, learner = Simulator(), deal_hands("spbq/pool"), 0, 0
    recording = Recording()
    ours = always(4).network
    # dealer 0: East, South, West, North bid; the learner's are South (2) and North (0)
    xs, ys, acts = counterfactual_deal(
        sim, hands, dealer, learner, (ours, recording), 1e-6, random.Random(0)  # type: ignore[arg-type]
    )
    assert acts == [4, 4] and recording.views
    assert {v.seat for v in recording.views} == {1, 3}  # the opponents' seats only
    for v in recording.views:  # each view is the engine's own, after the earlier bids
        r = RoundState(TRAIN_RULES, dealer, hands)
        for s in v.bid_order:
            r.apply(Bid(s, v.bids[s]))
        assert v == view_for(r, v.seat) and v.hand == hands[v.seat]
    east = recording.bis.bid(view_for(RoundState(TRAIN_RULES, dealer, hands), 1), None).tricks
    # North (seat 0) bids last: its 14 returns are the points of the row that BIS
    # completed at East and West (West answering South's 4), North's bid k
    for k in range(14):
        r = RoundState(TRAIN_RULES, dealer, hands)
        for s, b in ((1, east), (2, 4), (3, None), (0, k)):
            if b is None:
                b = recording.bis.bid(view_for(r, 3), None).tricks
            r.apply(Bid(s, b))
        p = sim.points(hands, dealer, np.array([r.bids]))[0]
        assert ys[1][k] == pytest.approx((p[0] - p[1]) / 100.0)
    west_answers = {v.bids[2] for v in recording.views if v.seat == 3}
    assert west_answers == set(range(14))  # West answered each of South's 14 bids


@pytest.mark.usefixtures("torch_installed")
def test_the_pool_bidders_change_the_run_and_a_resume_with_other_options_is_refused(
    tmp_path: Path,
) -> None:
    from lab.training.spb_q import train_spb_q
    from lab.training.train import TrainError

    settings = dict(seed=5, deals=20, snapshot_every=1, buffer=2)
    plain, _ = train_spb_q(iterations=1, checkpoint=tmp_path / "a.ckpt", **settings)
    pool = dict(pool_bidders=("BIS",), pool_bidder_share=1.0)
    a, info = train_spb_q(iterations=2, checkpoint=tmp_path / "b.ckpt", **settings, **pool)
    assert a.checksum != plain.checksum and info["pool_bidders"] == ["BIS"]
    train_spb_q(iterations=1, checkpoint=tmp_path / "c.ckpt", **settings, **pool)
    with pytest.raises(TrainError):
        train_spb_q(iterations=2, checkpoint=tmp_path / "c.ckpt", **settings)
    with pytest.raises(TrainError):
        other = dict(pool_bidders=("BIS",), pool_bidder_share=0.5)
        train_spb_q(iterations=2, checkpoint=tmp_path / "c.ckpt", **settings, **other)
    c, _ = train_spb_q(iterations=2, checkpoint=tmp_path / "c.ckpt", **settings, **pool)
    assert c.checksum == a.checksum  # resumed to the same weights
    with pytest.raises(TrainError):
        train_spb_q(iterations=1, checkpoint=tmp_path / "d.ckpt", **settings, pool_bidders=("BIS",))
    with pytest.raises(TrainError):
        train_spb_q(iterations=1, checkpoint=tmp_path / "e.ckpt", **settings,
                    pool_bidders=("NoSuch",), pool_bidder_share=1.0)  # fmt: skip
    # a warm start begins from the given weights: no fitting at all leaves them unchanged
    warm, _ = train_spb_q(iterations=1, checkpoint=tmp_path / "f.ckpt", **{**settings, "lr": 0.0},
                          init=plain)  # fmt: skip
    assert all(np.allclose(w, v) for (w, _), (v, _) in zip(warm.layers, plain.layers, strict=True))
