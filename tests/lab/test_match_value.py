"""The match value SPB-match's return is read from: the match's end, bags, value iteration."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from game.engine.match import match_winner
from lab.training.match_value import MatchValue, _after, _ended, round_outcomes
from lab.training.spb_q import MATCH_SCALE, returns
from lab.training.spb_sim import TRAIN_RULES


def test_the_end_of_a_match_is_the_engines() -> None:
    scores = [-250, -110, -100, -99, 0, 150, 199, 200, 210, 300]
    for a, b in itertools.product(scores, scores):
        over, ours = _ended(np.array(a), np.array(b), TRAIN_RULES)
        winner = match_winner(TRAIN_RULES, (a, b))
        if winner is None:
            assert not over or ours == 0.5, (a, b)  # a tie beyond a goal plays on
        else:
            assert over and ours == (1.0 if winner == 0 else 0.0), (a, b)


def test_bags_held_are_the_last_digit_and_ten_cost_the_penalty() -> None:
    after = _after(np.array([195, 195, -57, 0]), 60, np.array([4, 5, 7, 3]), TRAIN_RULES)
    # 195 holds 5 bags: 4 more make 9 (no penalty), 5 more make 10 (-100, back to
    # 0); -57 holds 3 (-60 and 3 bags), so 7 more cost the penalty too
    assert after.tolist() == [259, 160, -90, 63]


def test_value_iteration_solves_a_race_of_hundreds() -> None:
    # Each round one side or the other scores 100, evenly: from 100 : 0 we win
    # unless they win twice running (3/4); level scores are even.
    race = np.array([[100, 0, 0, 0], [0, 0, 100, 0]])
    v = MatchValue(race)
    assert v(0, 0) == pytest.approx(0.5, abs=1e-5)
    assert v(100, 0) == pytest.approx(0.75, abs=1e-5)
    assert v(0, 100) == pytest.approx(0.25, abs=1e-5)
    assert v(100, 100) == pytest.approx(0.5, abs=1e-5)
    assert v(200, 100) == 1.0 and v(-100, 50) == 0.0  # the match is over


def test_the_value_from_bis_rounds_is_fair_and_rises_with_our_score() -> None:
    v = MatchValue(round_outcomes(60, "mv-test"))
    assert v(0, 0) == pytest.approx(0.5, abs=1e-5)  # both sides' rounds: symmetric
    for a, b in [(150, 30), (-40, 120), (193, 187)]:
        assert v(a, b) + v(b, a) == pytest.approx(1.0, abs=1e-5)
    assert v(0, 50) < v(0, 0) < v(50, 0) < v(150, 0) < 1.0


def test_the_return_is_the_change_in_the_chance_of_winning() -> None:
    v = MatchValue(np.array([[100, 0, 0, 0], [0, 0, 100, 0]]))
    # the learner is East/West (index 1), at 100 against North/South's 0
    points = np.array([[0, 100], [100, 0], [-50, 30]])
    y = returns(points, 1, (0, 100), v)
    before = v(100, 0)
    assert y.tolist() == pytest.approx(
        [
            MATCH_SCALE * (1.0 - before),
            MATCH_SCALE * (v(100, 100) - before),
            MATCH_SCALE * (v(130, -50) - before),
        ]
    )
    assert y[0] > 0 > y[1]


@pytest.mark.usefixtures("torch_installed")
def test_the_match_return_needs_the_score_as_input(tmp_path) -> None:
    from lab.training.spb_q import train_spb_q
    from lab.training.train import TrainError

    with pytest.raises(TrainError, match="--score-inputs"):
        train_spb_q(
            seed=1, iterations=1, deals=1, checkpoint=tmp_path / "c.ckpt", match_return=True
        )


@pytest.mark.usefixtures("torch_installed")
def test_a_run_with_the_match_return_trains_spb_match_and_resumes_to_the_same_weights(
    tmp_path,
) -> None:
    from bots.learned.bidders import SPB
    from bots.learned.features import BID_FEATURES, SCORE_FEATURES
    from lab.training.spb_q import train_spb_q
    from tests.support.learned_views import bid_views

    settings = dict(
        seed=3, deals=8, score_inputs=True, match_return=True, match_deals=40, buffer=2,
        pool_bidders=("BIS",), pool_bidder_share=0.9,
    )  # fmt: skip
    net, info = train_spb_q(iterations=2, checkpoint=tmp_path / "a.ckpt", **settings)
    assert net.inputs == BID_FEATURES + SCORE_FEATURES and info["match_return"]
    train_spb_q(iterations=1, checkpoint=tmp_path / "b.ckpt", **settings)
    again, _ = train_spb_q(iterations=2, checkpoint=tmp_path / "b.ckpt", **settings)
    assert again.checksum == net.checksum
    points, _ = train_spb_q(
        iterations=2, checkpoint=tmp_path / "c.ckpt", **{**settings, "match_return": False}
    )
    assert points.checksum != net.checksum  # the return is another
    for view in bid_views(5):
        SPB(net).bid(view, random.Random(0))  # the score is read from the view
