"""SPB's simulator: rounds from the deal and the four bids to the points, compiled.

SPB's training asks, for one seat on one deal, what every bid would have
scored. Each answer is a whole round of SRP play; in Python (engine views,
``bots.srp.SRP``) that is about 25 rounds a second. Here the round is the
state array of :mod:`bots.srp_compiled` (UCT's playouts): the bids are
written into a template of the deal, SRP plays the 52 cards compiled and
:func:`game.engine.fast_compiled.score_points` scores them, many bid rows of
one deal in one call. The compiled SRP is the rule SRP without the sampled
nil-cover check (``SRP(cover_deals=0)``, registry name ``SRP-rule``):
``tests/lab/test_spb_sim.py`` holds the rounds equal to the Python engine
with that player, trick for trick and point for point.

Blind nil is not simulated: it is legal only 100 points behind, and SPB's
rounds start from 0 : 0 (its input has no score).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bots import srp_compiled as sc
from bots.learned.features import BID_FEATURES, SCORE_FEATURES, hand_bits, score_features
from game.engine import kernel_cache  # noqa: F401  (before the kernels: their cache folder)
from game.engine.cards import TWO_OF_CLUBS, left_of
from game.engine.fast_compiled import rules_array, score_points
from game.engine.rules import Rules

# The rules SPB trains under (the tournaments' goal 200 / -100; the rest default).
TRAIN_RULES = Rules(winning_goal=200, losing_goal=-100)


@njit(cache=True)
def play_bid_rows(template, hands, bids, bags, rules, sure_t, points, won):
    """For each row of ``bids`` (int64[n, 4], 0 = nil): the deal ``hands`` played
    to the end by SRP at every seat from ``template`` (a state of the deal in
    play, any bids); the partnerships' round points with ``bags`` (int64[2])
    before into ``points[i]``, the tricks each seat took into ``won[i]``."""
    st = np.empty_like(template)
    blind = np.zeros(4, dtype=np.int64)
    out = np.empty(4, dtype=np.int64)
    for i in range(bids.shape[0]):
        st[:] = template
        for s in range(4):
            st[s] = hands[s]
            st[sc.BIDS + s] = bids[i, s]
        while st[sc.DONE] < 13:
            sc.play_card(st, sc.srp_play(st, sure_t))
        for s in range(4):
            won[i, s] = st[sc.WON + s]
        score_points(bids[i], blind, won[i], rules, bags, out)
        points[i, 0] = out[0]
        points[i, 1] = out[1]


def first_leader(rules: Rules, dealer: int, hands: list[int]) -> int:
    """Who leads the first trick (as ``RoundState`` decides it)."""
    if rules.first_lead == "two_of_clubs":
        return next(s for s in range(4) if hands[s] >> TWO_OF_CLUBS & 1)
    return left_of(dealer)


class Simulator:
    """Rounds of one rule set: :meth:`points` of many bid rows on one deal."""

    def __init__(self, rules: Rules = TRAIN_RULES) -> None:
        self.rules = rules
        self.rules_arr = rules_array(rules)
        self.sure_t = sc.sure_table()

    def points(
        self, hands: list[int], dealer: int, bids: np.ndarray, bags: tuple[int, int] = (0, 0)
    ) -> np.ndarray:
        """int64[n, 2]: North/South's and East/West's round points for each bid row,
        the partnerships holding ``bags`` before the round."""
        bids = np.ascontiguousarray(bids, dtype=np.int64)
        leader = first_leader(self.rules, dealer, hands)
        template = sc.state_from(self.rules, [0] * 4, [], [], leader, [0] * 4, False)
        points = np.empty((len(bids), 2), dtype=np.int64)
        won = np.empty((len(bids), 4), dtype=np.int64)
        play_bid_rows(
            template,
            np.array(hands, dtype=np.int64),
            bids,
            np.array(bags, dtype=np.int64),
            self.rules_arr,
            self.sure_t,
            points,
            won,
        )
        self.last_won = won
        return points


class DealFeatures:
    """SPB's input (``bots.learned.features.bid_features``) for many bid sequences
    of one deal at once: the hands' bits are made once."""

    def __init__(
        self,
        hands: list[int],
        dealer: int,
        scores: tuple[int, int] | None = None,
        bags: tuple[int, int] = (0, 0),
    ) -> None:
        self.order = [(dealer + 1 + i) & 3 for i in range(4)]
        self.bits = [hand_bits(h) for h in hands]
        # SPB-score's inputs: the match's score and bags, from each seat's side.
        self.match = None if scores is None else [score_features(s, scores, bags) for s in range(4)]

    def rows(self, position: int, bids: np.ndarray) -> np.ndarray:
        """float32[n, 65]: the input of the seat bidding ``position``-th (0..3) for
        each row of ``bids`` (int64[n, 4] by seat; only earlier seats are read)."""
        seat = self.order[position]
        extra = 0 if self.match is None else SCORE_FEATURES
        x = np.zeros((len(bids), BID_FEATURES + extra), dtype=np.float32)
        x[:, :52] = self.bits[seat]
        if self.match is not None:
            x[:, BID_FEATURES:] = self.match[seat]
        x[:, 52 + position] = 1.0
        earlier = set(self.order[:position])
        for k, s in enumerate(((seat + 2) & 3, (seat + 1) & 3, (seat + 3) & 3)):
            if s in earlier:
                b = bids[:, s]
                x[:, 56 + 3 * k] = 1.0
                x[:, 57 + 3 * k] = b == 0
                x[:, 58 + 3 * k] = b / 13.0
        return x
