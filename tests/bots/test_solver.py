"""The exact endgame solver: agreement with a plain brute-force minimax, and
positions built by hand."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from bots.solver import (
    NIL_WEIGHT,
    NilObjective,
    PointsObjective,
    Position,
    Solver,
    TricksObjective,
    bench,
    max_tricks,
    points_gap,
    random_position,
    solve_nil,
)
from game.engine.cards import SIDE_SUIT_MASK, SUIT_MASKS, parse_card, parse_hand
from game.engine.rules import Rules
from game.engine.tricks import trick_winner

Leaf = Callable[[list[int]], int]  # tricks each seat took since the position -> value


def brute_force(p: Position, leaves: list[Leaf]) -> list[int]:
    """Plain minimax (no pruning, no table, no merging) of several objectives at
    once: North/South maximise each value, East/West minimise it."""
    hands = list(p.hands)
    won = [0, 0, 0, 0]
    n_obj = range(len(leaves))

    def node(leader: int, trick: list[int], broken: bool) -> list[int]:
        seat = (leader + len(trick)) & 3
        hand = hands[seat]
        if not trick:
            if not hand:
                return [leaf(won) for leaf in leaves]
            if not hand & (hand - 1) and all(h.bit_count() == 1 for h in hands):
                # The last trick: every seat has one card, so there is no choice.
                cards = [hands[(leader + i) & 3].bit_length() - 1 for i in range(4)]
                w = trick_winner(leader, cards)
                won[w] += 1
                vals = [leaf(won) for leaf in leaves]
                won[w] -= 1
                return vals
            legal = hand if broken else hand & SIDE_SUIT_MASK or hand
        else:
            legal = hand & SUIT_MASKS[trick[0] // 13] or hand
        maximize = seat % 2 == 0
        best: list[int] = []
        m = legal
        while m:
            low = m & -m
            m ^= low
            c = low.bit_length() - 1
            hands[seat] = hand ^ low
            trick.append(c)
            if len(trick) == 4:
                w = trick_winner(leader, trick)
                won[w] += 1
                vals = node(w, [], broken or c >= 39)
                won[w] -= 1
            else:
                vals = node(leader, trick, broken or c >= 39)
            trick.pop()
            if not best:
                best = vals
            elif maximize:
                best = [max(best[i], vals[i]) for i in n_obj]
            else:
                best = [min(best[i], vals[i]) for i in n_obj]
        hands[seat] = hand
        return best

    return node(p.leader, list(p.trick), p.spades_broken)


def test_agrees_with_brute_force_on_1000_random_positions() -> None:
    rng = random.Random(20261121)
    rules = Rules()
    # (cards per hand, cards then played to the trick (None: 0, or 1-3 every
    # third position), how many): 1,000 positions. Brute force grows fast, so
    # the 4- and 5-card positions are fewer or have most of a trick played.
    plan = [(2, None, 490), (3, None, 420), (4, 0, 15), (4, 1, 10), (4, 3, 60), (5, 3, 5)]
    checked = 0
    kinds = {"mid": 0, "unbroken": 0, "nil": 0}
    for k, on_trick, n in plan:
        for i in range(n):
            if on_trick is None:
                on_trick_now = rng.randint(1, 3) if i % 3 == 1 else 0
            else:
                on_trick_now = on_trick
            p = random_position(rng, k, spades_first=i % 2 == 0, trick_cards=on_trick_now)
            if i % 4 == 3 and not any(c >= 39 for c in p.trick):
                # Random play to the last tricks nearly always breaks spades:
                # take the same hands as if no spade had been played yet.
                p = p._replace(spades_broken=False)
            p.check()
            kinds["mid"] += bool(p.trick)
            kinds["unbroken"] += not p.spades_broken
            nil_seats = sorted(rng.sample(range(4), rng.choice((0, 1, 1, 2))))
            kinds["nil"] += bool(nil_seats)
            bids = [0 if s in nil_seats else rng.randint(1, 5) for s in range(4)]
            before = [rng.randint(0, 3) if s not in nil_seats else 0 for s in range(4)]
            points = PointsObjective(
                rules, bids, [False] * 4, before, (0, 0), (rng.randrange(10), 0)
            )
            tricks = TricksObjective()
            nil = NilObjective(nil_seats)

            memo: dict[tuple, int] = {}

            def leaf_of(obj, won, memo=memo):  # the objective's value from per-seat tricks
                key = (id(obj), *won)
                if key not in memo:
                    tracked = [
                        won[s] if obj.count_tracked else int(won[s] > 0) for s in obj.tracked
                    ]
                    memo[key] = obj.value(won[0] + won[2], tracked)
                return memo[key]

            points._remaining_total = p.hands[p.leader].bit_count() + (1 if p.trick else 0)
            expected = brute_force(
                p,
                [
                    lambda w: w[0] + w[2],
                    lambda w, nil=nil: leaf_of(nil, w),
                    lambda w, points=points: leaf_of(points, w),
                ],
            )
            got = [
                Solver(tricks).value(p),
                Solver(nil).value(p),
                Solver(points).value(p),
            ]
            assert got == expected, (p, nil_seats, bids, before)
            left = p.hands[p.leader].bit_count() + (1 if p.trick else 0)
            assert max_tricks(p, 0) + max_tricks(p, 1) == left
            checked += 1
    assert checked >= 1000
    assert min(kinds.values()) >= 100, kinds


def test_sure_tricks_by_hand() -> None:
    # North holds AS KS QS and the ace of hearts; the others cannot stop them.
    p = Position(
        (
            parse_hand("AS KS QS AH"),
            parse_hand("2S 3S 4S 2H"),
            parse_hand("5S 6S 7S 3H"),
            parse_hand("8S 9S TS 4H"),
        ),
        leader=0,
        trick=(),
        spades_broken=True,
    )
    assert max_tricks(p, 0) == 4
    assert max_tricks(p, 1) == 0
    # East to lead: still four for North/South (North over-ruffs nothing; spades win).
    assert max_tricks(p._replace(leader=1), 0) == 4


def test_unbroken_spades_keep_the_leader_off_trumps() -> None:
    # North must lead a heart (spades not broken) and East ruffs it; broken,
    # North cashes the ace of spades first.
    hands = (parse_hand("AS 2H"), parse_hand("2S 3S"), parse_hand("3H 4H"), parse_hand("5H 6H"))
    unbroken = Position(hands, leader=0, trick=(), spades_broken=False)
    broken = unbroken._replace(spades_broken=True)
    assert max_tricks(unbroken, 0) == 1
    assert max_tricks(broken, 0) == 1
    assert max_tricks(unbroken, 1) == 1


def test_mid_trick_position() -> None:
    # North led the king of hearts; East holds the ace and must win or duck.
    p = Position(
        (parse_hand("2C"), parse_hand("AH 3C"), parse_hand("2H 4C"), parse_hand("3H 5C")),
        leader=0,
        trick=(parse_card("KH"),),
        spades_broken=False,
    )
    p.check()
    assert max_tricks(p, 1) == 2  # the ace of hearts, then the five of clubs


def test_nil_protection() -> None:
    # South bid nil and holds the queen and two of hearts; North covers with
    # the ace and king. East leads the jack of hearts. For tricks alone North
    # could duck, but to protect the nil North must take control: the nil is
    # kept (balance +1) and North/South take what they need around it.
    p = Position(
        (
            parse_hand("AH KH 2C"),
            parse_hand("JH 3C 4C"),
            parse_hand("QH 2H 5C"),
            parse_hand("TH 9H 6C"),
        ),
        leader=1,
        trick=(),
        spades_broken=False,
    )
    result = solve_nil(p, nil_seats=[2])
    assert result.nil_balance == 1
    assert result.value == result.ns_tricks + NIL_WEIGHT
    # Without a partner able to cover, the nil is set.
    bare = Position(
        (
            parse_hand("3H 4H 2C"),
            parse_hand("5H 3C 4C"),
            parse_hand("AH 2H 5C"),
            parse_hand("TH 9H 6C"),
        ),
        leader=1,
        trick=(),
        spades_broken=False,
    )
    assert solve_nil(bare, nil_seats=[2]).nil_balance == 0


def test_points_gap_prefers_the_contract() -> None:
    rules = Rules()
    p = Position(
        (parse_hand("AS 2H"), parse_hand("KS 3H"), parse_hand("QS 4H"), parse_hand("JS 5H")),
        leader=0,
        trick=(),
        spades_broken=True,
    )
    # NS bid 6 and have 5: the ace of spades makes it (+60 + 0 bags) against
    # EW, who bid 6 with 5 taken and make theirs with the heart trick.
    obj = PointsObjective(rules, [3, 3, 3, 3], [False] * 4, [3, 3, 2, 2], (0, 0), (0, 0))
    assert points_gap(p, obj, 0) == 0
    assert points_gap(p, obj, 1) == 0


def test_a_kept_points_table_gives_what_fresh_solvers_give() -> None:
    # UCT keeps one solver for all the deals of a decision; its table must not
    # carry a value from one position into another it does not fit.
    rng = random.Random(5)
    rules = Rules()
    for nil_seats in ([], [1], [0, 3]):
        bids = [0 if s in nil_seats else rng.randint(2, 4) for s in range(4)]
        won = [0 if s in nil_seats else rng.randint(1, 3) for s in range(4)]
        objective = PointsObjective(rules, bids, [False] * 4, won, (120, 40), (7, 9))
        kept = Solver(objective)
        for k in (4, 4, 3, 4, 3, 3, 4, 2, 4) * 6:
            p = random_position(rng, k, mid_trick=rng.random() < 0.5)
            fresh = PointsObjective(rules, bids, [False] * 4, won, (120, 40), (7, 9))
            assert kept.value(p) == Solver(fresh).value(p), (p, nil_seats)
        assert kept.tt  # it kept entries from earlier positions


@pytest.mark.parametrize("k", [2, 3])
def test_bench_runs(k: int) -> None:
    rows = bench([k], samples=5, seed=3)
    assert rows[0]["k"] == k and rows[0]["samples"] == 5 and rows[0]["median_ms"] >= 0
