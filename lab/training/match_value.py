"""The match's value of a score: the chance of winning from it, for SPB's return.

A round's points are a proxy for what a bidder wants, the match. SIM values a
bid by the points gap plus 200 when the round ends the match; played without
that bonus, SIM75 scores more points a round against BIS (+10.6 against +7.9)
and wins fewer matches (53.1% against 56.0% over the same 2,000 games;
docs/bots.md). Here each round is valued by what it does to the chance of
winning the match: ``V(ours, theirs)``, the probability that the partnership
holding ``ours`` wins a match played on from ``ours : theirs``.

``V`` is found by value iteration over every score pair the match can be in
(goal 200 / -100: -99..199 each, the bags being the score's last digit), with
the rounds' outcomes drawn from BIS bidding at all four seats and the compiled
rule SRP playing, from 0 : 0 (the outcomes' dependence on the score is left
out). An outcome is each partnership's contract points and the bags it takes,
so that the bag penalty falls where the bags before it make it fall.
"""

from __future__ import annotations

import random

import numpy as np

from game.engine.actions import Bid, SeeCards
from game.engine.deal import deal_hands
from game.engine.fast_compiled import score_points
from game.engine.match import match_winner
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import view_for

from .spb_sim import TRAIN_RULES, Simulator

LOW, HIGH = -99, 199  # the scores a match goes on from (goal 200 / -100)


def round_outcomes(deals: int, seed: int | str, rules: Rules = TRAIN_RULES) -> np.ndarray:
    """int64[2 * deals, 4]: (our contract points, our bags taken, theirs, theirs)
    for each partnership of ``deals`` rounds bid by BIS at every seat and played
    by the compiled rule SRP, from 0 : 0 and no bags."""
    from bots.registry import BIDDERS

    bis = BIDDERS["BIS"]()
    sim = Simulator(rules)
    unlimited = sim.rules_arr.copy()
    unlimited[3] = 1_000_000  # no penalty: the bags taken, as they are
    out = np.empty(4, dtype=np.int64)
    zero = np.zeros(2, dtype=np.int64)
    rows = np.empty((2 * deals, 4), dtype=np.int64)
    rng = random.Random(f"{seed}/match-value")
    for j in range(deals):
        hands = deal_hands(f"{seed}/match-value/{j}")
        dealer = rng.randrange(4)
        own = random.Random(rng.random())  # the bidders' stream, seeded by the deal
        r = RoundState(rules, dealer, hands, (0, 0), (0, 0))
        while r.phase is Phase.BIDDING:  # BIS at every seat, through the engine
            seat = r.to_act
            if not r.cards_seen[seat]:
                r.apply(SeeCards(seat))  # no blind nil from 0 : 0
            r.apply(Bid(seat, bis.bid(view_for(r, seat), own).tricks))
        bids = np.array([[b or 0 for b in r.bids]], dtype=np.int64)
        sim.points(hands, dealer, bids)
        score_points(bids[0], np.zeros(4, dtype=np.int64), sim.last_won[0], unlimited, zero, out)
        ns = (out[0] - out[2], out[2])
        ew = (out[1] - out[3], out[3])
        rows[2 * j] = (*ns, *ew)
        rows[2 * j + 1] = (*ew, *ns)
    return rows


def _after(scores: np.ndarray, contract: int, taken: int | np.ndarray, rules: Rules) -> np.ndarray:
    """The scores after a round of ``contract`` points and ``taken`` bags."""
    bags = np.mod(scores, 10) + taken  # the last digit is the bags held
    return scores + contract + taken - (bags // rules.bag_limit) * rules.bag_penalty_total


def _ended(a: np.ndarray, b: np.ndarray, rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """(the match is over, our chance then: 1, 0 or 0.5 for a tie that plays on)
    for score grids ``a`` (ours) and ``b`` (theirs), as :func:`match_winner`."""
    a_up, b_up = a >= rules.winning_goal, b >= rules.winning_goal
    a_down, b_down = a <= rules.losing_goal, b <= rules.losing_goal
    over = a_up | b_up | a_down | b_down
    both = (a_up & b_up) | (~a_up & ~b_up & a_down & b_down)
    ours = np.where(both, np.where(a > b, 1.0, np.where(a < b, 0.0, 0.5)), 0.0)
    ours = np.where(~both & (a_up | b_down & ~b_up), 1.0, ours)
    return over, ours


class MatchValue:
    """``V[ours - LOW, theirs - LOW]``: our chance to win from a score pair."""

    def __init__(self, outcomes: np.ndarray, rules: Rules = TRAIN_RULES, sweeps: int = 200) -> None:
        if rules.bag_limit != 10 or (rules.winning_goal, rules.losing_goal) != (200, -100):
            raise ValueError("the match value is for ten bags a penalty and goal 200 / -100")
        self.rules = rules
        kinds, counts = np.unique(outcomes, axis=0, return_counts=True)
        weights = counts / counts.sum()
        scores = np.arange(LOW, HIGH + 1)
        ended_value = np.zeros((len(scores), len(scores)))
        steps = []
        for (c_us, t_us, c_them, t_them), w in zip(kinds, weights, strict=True):
            a = _after(scores, int(c_us), int(t_us), rules)
            b = _after(scores, int(c_them), int(t_them), rules)
            over, ours = _ended(a[:, None], b[None, :], rules)
            ended_value += w * np.where(over, ours, 0.0)
            on_a = (a >= LOW) & (a <= HIGH)
            on_b = (b >= LOW) & (b <= HIGH)
            steps.append((w, np.clip(a - LOW, 0, HIGH - LOW), np.clip(b - LOW, 0, HIGH - LOW),
                          on_a[:, None] & on_b[None, :]))  # fmt: skip
        v = np.full((len(scores), len(scores)), 0.5)
        for _ in range(sweeps):
            new = ended_value.copy()
            for w, ia, ib, on in steps:
                new += w * np.where(on, v[np.ix_(ia, ib)], 0.0)
            change = float(np.abs(new - v).max())
            v = new
            if change < 1e-6:
                break
        self.table = v
        self.change = change

    @classmethod
    def estimate(cls, deals: int, seed: int | str, rules: Rules = TRAIN_RULES) -> MatchValue:
        return cls(round_outcomes(deals, seed, rules), rules)

    def __call__(self, ours: int, theirs: int) -> float:
        """Our chance to win from ``ours : theirs`` (the end's own value if over)."""
        winner = match_winner(self.rules, (ours, theirs))
        if winner is not None:
            return 1.0 if winner == 0 else 0.0
        if not (LOW <= ours <= HIGH and LOW <= theirs <= HIGH):
            return 0.5  # a tie beyond a goal: play goes on, even
        return float(self.table[ours - LOW, theirs - LOW])
