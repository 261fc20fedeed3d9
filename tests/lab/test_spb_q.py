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
from tests import services
from tests.bots.test_learned import bid_views, constant_net


@pytest.fixture
def torch_installed() -> None:
    try:
        import torch  # noqa: F401
    except ImportError:
        services.unavailable("PyTorch is not installed: pip install -e '.[train]'")


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
