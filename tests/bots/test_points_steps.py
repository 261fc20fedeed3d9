"""The points search bounded by the trick count (bots/points_steps.py) gives the
reference solver's values; a search past its node limit stops and leaves its
solver right."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bots.points_steps import SteppedPoints, reach
from bots.solver import NilObjective, PointsObjective, Solver, TricksObjective, random_position
from bots.solver_compiled import CompiledSolver, SearchOverBudget, _idx, _splits
from game.engine.rules import Rules
from game.engine.tricks import trick_winner
from tests.support.solver_positions import a_position, play_line, random_objectives


def test_the_same_values_as_the_reference_with_full_and_null_windows() -> None:
    rng = random.Random(61)
    rules = Rules()
    trick_only = 0
    for k, count in [(1, 60), (2, 300), (3, 300), (4, 300), (5, 80), (6, 20)]:
        for i in range(count):
            p = a_position(rng, k, i)
            _, points = random_objectives(rng, rules)
            stepped = SteppedPoints(CompiledSolver(points()))
            true = Solver(points()).value(p)
            assert stepped.value(p) == true, p
            trick_only += stepped.points_questions == 0
            # a null window's answer: a bound on the right side of it
            m = true + rng.choice((-40, -10, -1, 0, 1, 10, 40))
            v = SteppedPoints(CompiledSolver(points())).value(p, m - 1, m)
            assert v >= m and true >= v if true >= m else v < m and true <= v, (p, m, v)
    assert trick_only > 200, "most questions without a nil should be the trick count's"


def test_the_nil_objective_answers_points_questions_exactly() -> None:
    # Positions with a nil bidder: the questions between the trick count's
    # bounds go to the nil objective first (a planted f_hi one too low fails).
    rng = random.Random(65)
    rules = Rules()
    answered = 0
    for k, count in [(2, 200), (3, 200), (4, 200), (5, 80), (6, 30)]:
        for i in range(count):
            p = a_position(rng, k, i)
            nils, points = random_objectives(rng, rules)
            if not nils:
                continue
            true = Solver(points()).value(p)
            stepped = SteppedPoints(CompiledSolver(points()))
            assert stepped.value(p) == true, p
            m = true + rng.choice((-10, -1, 0, 1, 10))
            v = stepped.value(p, m - 1, m)
            assert v >= m and true >= v if true >= m else v < m and true <= v, (p, m, v)
            answered += stepped.nil_answers
    assert answered > 50, "the nil objective should answer some points questions"


def test_the_nil_bounds_of_each_value_hold_over_every_split() -> None:
    # f_lo(m): no split worth m has a nil objective's value below it; f_hi(m):
    # every split with one at least that is worth m.
    rng = random.Random(66)
    checked = 0
    for _ in range(40):
        nils, points = random_objectives(rng, Rules())
        stepped = SteppedPoints(CompiledSolver(points()))
        left = rng.randint(1, 13)
        values = stepped.steps(left, left, 0)[0]
        live, f_lo, f_hi = stepped.nil_steps(left, left, 0)
        assert live == tuple(s for s in nils if not points().tricks_won[s])
        if not live:
            continue
        t = stepped.points.tables(left)
        splits = [w for n, w in _splits(left) if n == left]
        leaf = np.array([t[0, _idx(w)] for w in splits])
        weight = [14 if s % 2 == 0 else -14 for s in range(4)]
        f = np.array([w[0] + w[2] + sum(weight[s] for s in live if not w[s]) for w in splits])
        for m, lo, hi in zip(values, f_lo, f_hi, strict=True):
            assert not (leaf[f < lo] >= m).any() and (leaf[f == lo] >= m).any()
            assert (leaf[f >= hi] >= m).all()
            assert hi == -(10**6) or not (leaf[f >= hi - 1] >= m).all()
            checked += 1
    assert checked > 100


def test_every_split_a_play_reaches_is_within_reach() -> None:
    # Random lines of play to the end: North/South's tricks within (low, high),
    # and a nil bidder sure to take a trick takes one (a planted low + 1 fails).
    rng = random.Random(67)
    tight = 0
    for k in (1, 2, 3, 4, 5, 6, 8, 13):
        for i in range(60):
            p = a_position(rng, k, i)
            nils = tuple(rng.sample(range(4), rng.randint(0, 2)))
            low, high, sure = reach(p, nils)
            assert all(s in nils for s in range(4) if sure >> s & 1)
            for _ in range(20):
                *_, (last, taken) = play_line(rng, p)
                won = list(taken)
                winner = trick_winner(
                    last.leader, (*last.trick, last.hands[last.to_act].bit_length() - 1)
                )
                won[winner] += 1
                assert low <= won[0] + won[2] <= high, (p, nils, won)
                assert all(won[s] for s in range(4) if sure >> s & 1), (p, nils, won)
                tight += won[0] + won[2] == low or won[0] + won[2] == high
    assert tight > 100


def test_a_proved_floor_or_ceiling_gives_the_same_value() -> None:
    # As the analysis asks: a null window's fail-soft answer beyond the played
    # card's value, then the exact value searched from that bound only.
    rng = random.Random(64)
    rules = Rules()
    asked = 0
    for k, count in [(2, 150), (3, 150), (4, 150), (5, 60)]:
        for i in range(count):
            p = a_position(rng, k, i)
            _, points = random_objectives(rng, rules)
            true = Solver(points()).value(p)
            m = true + rng.choice((-40, -10, -1, 0, 1, 10, 40))
            stepped = SteppedPoints(CompiledSolver(points()))
            v = stepped.value(p, m - 1, m)
            bound = {"floor": v} if v >= m else {"ceiling": v}
            before = stepped.points_questions
            assert stepped.value(p, **bound) == true, (p, bound)
            asked += stepped.points_questions > before
    assert asked > 20, "the points questions from a bound should be asked"


def test_one_kept_pair_of_solvers_for_every_position_of_a_round() -> None:
    # As a round's analysis: one points solver from the first lead, told the
    # tricks taken since, and one trick count solver shared with it.
    rng = random.Random(62)
    rules = Rules()
    for _ in range(25):
        _, points = random_objectives(rng, rules)
        stepped = SteppedPoints(CompiledSolver(points()), CompiledSolver(TricksObjective()))
        start = points().tricks_won
        line = list(play_line(rng, random_position(rng, 6)))
        rng.shuffle(line)
        for p, taken in line:
            won = [a + b for a, b in zip(start, taken, strict=True)]
            o = points()
            objective = PointsObjective(rules, o.bids, o.blind, won, o.scores, o.bags)
            assert stepped.value(p, taken=taken) == Solver(objective).value(p), (p, taken)


def test_the_trick_bounds_of_each_value_hold_over_every_split() -> None:
    # k_lo(m): no split in which North/South take fewer is worth m; k_hi(m): every
    # split in which they take at least that many is.
    rng = random.Random(63)
    for _ in range(40):
        _, points = random_objectives(rng, Rules())
        stepped = SteppedPoints(CompiledSolver(points()))
        left = rng.randint(1, 13)
        values, k_lo, k_hi = stepped.steps(left, left, 0)
        t = stepped.points.tables(left)
        splits = [w for n, w in _splits(left) if n == left]
        leaf = np.array([t[0, _idx(w)] for w in splits])
        ns = np.array([w[0] + w[2] for w in splits])
        for m, lo, hi in zip(values, k_lo, k_hi, strict=True):
            assert not (leaf[ns < lo] >= m).any() and (leaf[ns == lo] >= m).any()
            assert (leaf[ns >= hi] >= m).all() and (hi == 0 or not (leaf[ns == hi - 1] >= m).all())


def test_a_trick_count_solver_is_needed() -> None:
    points = PointsObjective(Rules(), [3, 4, 2, 3], [False] * 4, [0] * 4)
    with pytest.raises(ValueError, match="trick count"):
        SteppedPoints(CompiledSolver(points), CompiledSolver(NilObjective([0])))


@pytest.mark.parametrize("objective", [TricksObjective(), NilObjective([1])])
def test_a_search_past_its_node_limit_stops_and_its_solver_stays_right(objective) -> None:
    rng = random.Random(64)
    deal = random_position(rng, 13)
    kept = CompiledSolver(objective)
    with pytest.raises(SearchOverBudget):
        kept.value(deal, node_limit=50)
    assert 50 < kept.nodes < 100
    want = CompiledSolver(objective).value(deal)
    stops = 0
    for limit in (200, 2_000, 20_000):  # stopped again and again: its entries stand
        try:
            assert kept.value(deal, node_limit=limit) == want
        except SearchOverBudget:
            stops += 1
    assert stops >= 1
    assert kept.value(deal) == want
    assert kept.total_nodes > kept.nodes
