"""The compiled solver gives exactly the reference solver's values (bots/solver.py),
for the three objectives, on thousands of random positions."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bots import solver_compiled
from bots.solver import (
    NilObjective,
    PointsObjective,
    Position,
    Solver,
    TricksObjective,
    random_position,
)
from bots.solver import max_tricks as ref_max_tricks
from bots.solver_compiled import CompiledSolver, max_tricks, objective_tables
from game.engine.cards import parse_hand
from game.engine.rules import Rules
from tests.support.solver_positions import a_position, play_line, random_objectives

# (cards per hand, positions): 3,000 positions, each solved for three objectives.
PLAN = [(1, 100), (2, 900), (3, 900), (4, 800), (5, 250), (6, 50)]


@pytest.fixture(params=["partition", "exact"])
def partition(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both table modes at every size: partition search (entries fix only the
    cards their bounds rest on), as from PARTITION_FROM tricks left, and exact
    entries, as below it."""
    monkeypatch.setattr(
        solver_compiled, "PARTITION_FROM", 1 if request.param == "partition" else 14
    )
    return request.param


def test_same_values_as_the_reference_on_3000_random_positions(partition: str) -> None:
    rng = random.Random(20261201)
    rules = Rules()
    checked = 0
    for k, count in PLAN:
        for i in range(count):
            p = a_position(rng, k, i)
            nil_seats, points = random_objectives(rng, rules)
            for make in (TricksObjective, lambda s=nil_seats: NilObjective(s), points):
                want = Solver(make()).value(p)
                got = CompiledSolver(make()).value(p)
                assert got == want, (p, nil_seats, type(make()).__name__)
            checked += 1
    assert checked == 3000


def test_the_bounds_of_the_points_search_keep_the_values(
    partition: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # From SIDE_FROM tricks a points search is bounded by the top spades (they
    # win whatever is played) and, for the leader's side only, its quick tricks;
    # lowered here to every size.
    monkeypatch.setattr(solver_compiled, "SIDE_FROM", 1)
    rng = random.Random(8)
    rules = Rules()
    for k, count in [(2, 300), (3, 400), (4, 400), (5, 150), (6, 30)]:
        for i in range(count):
            p = a_position(rng, k, i)
            _, points = random_objectives(rng, rules)
            assert CompiledSolver(points()).value(p) == Solver(points()).value(p), p


def test_side_tables_hold_the_least_and_greatest_value_for_each_trick_count() -> None:
    rules = Rules()
    objective = PointsObjective(rules, [0, 4, 3, 4], [False] * 4, [0, 3, 2, 4], (120, 80), (8, 2))
    left = 4
    t = objective_tables(objective, left)
    g = solver_compiled.side_tables(t, left)
    start = solver_compiled._idx((0, 1, 0, 0))  # East took one of the four
    for x in range(4):
        leaves = [
            t[0, start + solver_compiled._idx(w)]
            for n, w in solver_compiled._splits(3)
            if n == 3 and w[0] + w[2] == x
        ]
        assert (g[0, x, start], g[1, x, start]) == (min(leaves), max(leaves))
    assert g[0, 4, start] == solver_compiled.INF  # four of three tricks left


def test_kept_tables_give_what_fresh_solvers_give(partition: str) -> None:
    # UCT keeps one solver for all the deals of a decision: entries must carry
    # over only where they fit (the points objective's keys count the outcome
    # since the position, so only positions with as many tricks left share them).
    rng = random.Random(7)
    rules = Rules()
    for _ in range(12):
        nil_seats, points = random_objectives(rng, rules)
        kept = [CompiledSolver(points()), CompiledSolver(NilObjective(nil_seats))]
        for k in (4, 4, 3, 4, 5, 3, 2, 4, 5) * 4:
            p = random_position(rng, k, mid_trick=rng.random() < 0.5)
            assert kept[0].value(p) == Solver(points()).value(p), p
            assert kept[1].value(p) == Solver(NilObjective(nil_seats)).value(p), p


def test_entries_answer_other_positions_only_where_they_fit(partition: str) -> None:
    # A table entry fixes only the cards its bound rests on (partition search),
    # so one solver kept over many positions reuses entries across them: every
    # value must still be the reference's. Positions of one deal share the most.
    rng = random.Random(2026)
    for objective in (TricksObjective, lambda: NilObjective([rng.randrange(4)])):
        solver = CompiledSolver(objective())
        for _ in range(40):
            deal = random_position(rng, 6)
            for k in (6, 5, 5, 4, 4, 4):
                p = random_position(rng, k) if rng.random() < 0.3 else _played_down(rng, deal, k)
                assert solver.value(p) == Solver(solver.objective).value(p), p


def test_one_solver_for_every_position_of_a_round_gives_each_positions_value(
    partition: str,
) -> None:
    # A round's analysis keeps one points solver, its objective from the first
    # lead, and tells each position the tricks taken since (``taken``): entries
    # of later positions then serve earlier ones. Each value must be that of a
    # fresh reference solver whose objective starts at the position.
    rng = random.Random(46)
    rules = Rules()
    for _ in range(25):
        nil_seats, points = random_objectives(rng, rules)
        kept = CompiledSolver(points())
        start = points().tricks_won
        line = list(play_line(rng, random_position(rng, 6)))
        rng.shuffle(line)  # any order: the analysis goes from the last card back
        for p, taken in line:
            won = [a + b for a, b in zip(start, taken, strict=True)]
            objective = PointsObjective(rules, points().bids, points().blind, won,
                                        points().scores, points().bags)  # fmt: skip
            assert kept.value(p, taken=taken) == Solver(objective).value(p), (p, taken)


def _played_down(rng: random.Random, p: Position, k: int) -> Position:
    """``p`` with random cards removed (one a hand a trick) to ``k`` cards a hand."""
    hands = list(p.hands)
    for seat in range(4):
        while hands[seat].bit_count() > k:
            cards = [c for c in range(52) if hands[seat] >> c & 1]
            hands[seat] &= ~(1 << rng.choice(cards))
    return Position(tuple(hands), rng.randrange(4), (), p.spades_broken)


def test_partition_search_as_used_from_7_cards() -> None:
    # Without the threshold lowered: 7 and 8 cards a hand, the three objectives.
    assert solver_compiled.PARTITION_FROM <= 7  # so these are partition searches
    rng = random.Random(77)
    rules = Rules()
    for i in range(30):
        p = random_position(rng, rng.choice((7, 8)), mid_trick=i % 3 == 1)
        nil = sorted(rng.sample(range(4), rng.choice((1, 2))))
        bids = [0 if s in nil else rng.randint(1, 5) for s in range(4)]
        for make in (
            TricksObjective,
            lambda nil=nil: NilObjective(nil),
            lambda bids=bids: PointsObjective(rules, bids, [False] * 4, [0] * 4),
        ):
            assert CompiledSolver(make()).value(p) == Solver(make()).value(p), (p, nil)


def test_quick_tricks_and_top_spades_are_lower_bounds() -> None:
    # The bounds cut the search: each must never promise a side more tricks
    # than it takes (the reference's trick count, the leader to lead).
    rng = random.Random(99)
    tighter = 0
    for i in range(3000):
        p = random_position(rng, rng.randint(2, 5))
        if i % 2:
            p = p._replace(spades_broken=False)
        h = np.array(p.hands, dtype=np.int64)
        side = p.leader & 1
        tricks = [ref_max_tricks(p, 0), ref_max_tricks(p, 1)]
        q, _ = solver_compiled._quick_tricks(h, p.leader, int(p.spades_broken))
        assert q <= tricks[side], p
        for s in (0, 1):
            assert solver_compiled._top_spades(h, s)[0] <= tricks[s], p
        tighter += q == tricks[side]
    assert tighter > 600  # and they are not trivially low


def test_the_later_spade_tricks_are_lower_bounds() -> None:
    # DDS's later tricks (two top spades split between a side's hands, for
    # either side; a second spade behind the top one, for the side not on
    # lead) never promise a side more tricks than it takes.
    rng = random.Random(61)
    later = 0
    for i in range(3000):
        p = random_position(rng, rng.randint(2, 5))
        if i % 2:
            p = p._replace(spades_broken=False)
        h = np.array(p.hands, dtype=np.int64)
        left = p.hands[p.leader].bit_count()
        ns = ref_max_tricks(p, 0)
        tricks = (ns, left - ns)
        other = 1 - (p.leader & 1)
        n, _ = solver_compiled._defenders_spades(h, other)
        assert n <= tricks[other], p
        later += n > solver_compiled._top_spades(h, other)[0]
        for side in (0, 1):
            n, _ = solver_compiled._split_top_spades(h, side)
            assert n <= tricks[side], p
            later += n > solver_compiled._top_spades(h, side)[0]
    assert later > 20  # and they are not vacuous


def test_top_spades_counts_one_hands_spades_above_the_other_sides() -> None:
    # North's ace and queen both beat every East/West spade (South's king between
    # them does not matter): two tricks; with East/West void, all of one hand's.
    north = parse_hand("AS QS 2H 3H")
    south = parse_hand("KS 4H 5H 6H")
    east = parse_hand("JS 7H 8H 9H")
    west = parse_hand("TH JH QH KH")
    h = np.array((north, east, south, west), dtype=np.int64)
    queen = parse_hand("QS").bit_length() - 1
    assert solver_compiled._top_spades(h, 0) == (2, 1 << queen)
    assert solver_compiled._top_spades(h, 1)[0] == 0
    h[1] = parse_hand("AH 7H 8H 9H")
    h[2] = parse_hand("KS JS 4H 5H")
    assert solver_compiled._top_spades(h, 0) == (2, 0)  # no East/West spade: lengths


def test_owners_less_a_tricks_cards_as_from_scratch() -> None:
    # A trick's start takes the previous one's owner words less the four cards
    # played (_drop): they must be what _owners reads from the hands.
    rng = random.Random(4)
    for _ in range(500):
        p = random_position(rng, rng.randint(2, 13))
        h = np.array(p.hands, dtype=np.int64)
        live = int(h[0] | h[1] | h[2] | h[3])
        pa, pb = solver_compiled._owners(h, live)
        for seat in rng.sample(range(4), 4):
            cards = [c for c in range(52) if int(h[seat]) >> c & 1]
            c = rng.choice(cards)
            pa, pb = solver_compiled._drop(pa, pb, live, c)
            h[seat] ^= 1 << c
            live ^= 1 << c
        assert (pa, pb) == solver_compiled._owners(h, live)


def test_a_window_gives_a_bound_on_the_true_value(partition: str) -> None:
    # Fail-soft: a value at or below alpha is an upper bound, at or above beta a
    # lower bound, in between exact; the table must keep that true across calls.
    rng = random.Random(11)
    rules = Rules()
    solver = CompiledSolver(PointsObjective(rules, [3, 4, 2, 3], [False] * 4, [0] * 4))
    for _ in range(300):
        p = random_position(rng, rng.randint(2, 5), mid_trick=rng.random() < 0.3)
        true = Solver(PointsObjective(rules, [3, 4, 2, 3], [False] * 4, [0] * 4)).value(p)
        a = rng.randint(-250, 200)
        b = a + rng.randint(1, 120)
        v = solver.value(p, a, b)
        if v <= a:
            assert true <= v
        elif v >= b:
            assert true >= v
        else:
            assert true == v


def test_whole_deals_by_hand() -> None:
    # North holds ten spades and the side suits' aces, East the other three spades.
    north = parse_hand("AS KS QS JS TS 9S 8S 7S 6S 5S AH AD AC")
    east = parse_hand("4S 3S 2S KH QH JH TH 9H KD QD JD TD 9D")
    south = parse_hand("KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C 8H")
    west = (1 << 52) - 1 ^ north ^ east ^ south
    p = Position((north, east, south, west), leader=0, trick=(), spades_broken=True)
    p.check()
    # North draws the three small spades in three rounds and cashes the rest.
    assert max_tricks(p, 0) == 13
    # East to lead takes nothing either: North wins or ruffs every lead.
    assert max_tricks(p._replace(leader=1), 1) == 0
    # Unbroken, North must lead a side suit: East ruffs the ace of clubs with the
    # two of spades and South's clubs are dead, so North/South lose tricks.
    assert max_tricks(p._replace(spades_broken=False), 0) < 13


def rotated(p: Position) -> Position:
    """The same deal one seat to the left: East/West's tricks become North/South's."""
    h = p.hands
    return Position((h[3], h[0], h[1], h[2]), (p.leader + 1) & 3, p.trick, p.spades_broken)


def swap_clubs_and_hearts(p: Position) -> Position:
    def swap(mask: int) -> int:
        clubs, hearts = mask & 0x1FFF, mask >> 26 & 0x1FFF
        return mask & ~(0x1FFF | 0x1FFF << 26) | hearts | clubs << 26

    return p._replace(hands=tuple(swap(m) for m in p.hands))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_13_cards_the_same_deal_seen_from_the_other_side(seed: int) -> None:
    # No reference solves 13 cards in a test's time; the deal turned one seat
    # (the other side's tricks) and with two side suits swapped must agree.
    p = random_position(random.Random(seed), 13)
    ns = CompiledSolver().value(p)
    assert CompiledSolver().value(rotated(p)) == 13 - ns
    assert CompiledSolver().value(swap_clubs_and_hearts(p)) == ns
    assert CompiledSolver(NilObjective([])).value(p) == ns


def test_objective_tables_reach_every_split() -> None:
    t = objective_tables(TricksObjective(), 3)
    # From the start North/South take 0..3; after North takes two, 2..3.
    assert (t[1, 0], t[2, 0]) == (0, 3)
    assert (t[1, 2], t[2, 2]) == (2, 3)


def test_points_outcomes_alike_for_the_rest_of_the_round_share_a_key() -> None:
    # North bid nil, South 4, East/West 3 and 5: after 3 tricks, two outcomes so far
    # share a key exactly when every split of the other 10 tricks gives values that
    # differ by the difference of their offsets.
    from bots.solver_compiled import IDX_SIZE, _splits

    objective = PointsObjective(Rules(), [0, 3, 4, 5], [False] * 4, [0, 0, 0, 0])
    t = objective_tables(objective, 13)
    rest = [w for n, w in _splits(10) if n == 10]
    so_far = [w for n, w in _splits(3) if n == 3]

    def idx(w: tuple[int, ...]) -> int:
        return w[0] + 14 * w[1] + 196 * w[2] + 2744 * w[3]

    def leaves(w: tuple[int, ...]) -> list[int]:
        return [int(t[0, idx(tuple(a + b for a, b in zip(w, x, strict=True)))]) for x in rest]

    keys = {w: int(t[3, idx(w)]) for w in so_far}
    assert len(set(keys.values())) < len(so_far)  # some outcomes do share
    for a in so_far:
        for b in so_far:
            shift = int(t[4, idx(a)] - t[4, idx(b)])
            alike = all(x - y == shift for x, y in zip(leaves(a), leaves(b), strict=True))
            assert (keys[a] == keys[b]) == alike
    assert t.shape[1] == IDX_SIZE


def test_the_generation_wraps_by_wiping_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    import itertools

    monkeypatch.setattr(
        solver_compiled, "_generation", itertools.count(solver_compiled.MAX_GENERATION)
    )
    s = CompiledSolver()
    p = random_position(random.Random(3), 4)
    assert s.value(p) == Solver().value(p)
    tt = solver_compiled._shared_table()[0]
    k1 = tt[:, 1 : 2 * solver_compiled.BUCKET : 2]  # the keys' second words
    assert (k1 >> solver_compiled.GEN_SHIFT).max() < 2  # generation 1 or none


def test_the_table_size_changes_the_speed_not_the_values() -> None:
    # A round's analysis gives the shared table more entries
    # (ANALYSIS_TABLE_BITS); a small one overwrites entries all the time.
    with pytest.raises(ValueError, match="table bits"):
        solver_compiled.use_table_bits(solver_compiled.TABLE_BITS_RANGE[1] + 1)
    rng = random.Random(16)
    rules = Rules()
    try:
        solver_compiled.use_table_bits(16)
        assert solver_compiled._shared_table()[0].shape[0] == (1 << 16) // solver_compiled.BUCKET
        for i in range(60):
            p = a_position(rng, 5, i)
            _, points = random_objectives(rng, rules)
            assert CompiledSolver(points()).value(p) == Solver(points()).value(p), p
    finally:
        solver_compiled.use_table_bits(solver_compiled.TT_BITS)
    assert solver_compiled._shared_table()[0].shape[0] == (1 << 20) // solver_compiled.BUCKET


def test_the_kept_tables_stay_within_their_byte_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # A replays worker analyses round after round, each with objectives of its own:
    # the tables kept for them must not grow without end (they did up to 3 GB).
    rules = Rules()
    one = objective_tables(PointsObjective(rules, [3] * 4, [False] * 4, [0] * 4, (0, 0), (0, 0)), 5)
    monkeypatch.setattr(solver_compiled, "_TABLES", {})
    monkeypatch.setattr(solver_compiled, "MAX_TABLE_BYTES", 3 * one.nbytes)
    sizes = []
    for bags in range(10):
        objective = PointsObjective(rules, [3] * 4, [False] * 4, [0] * 4, (0, 0), (bags, 0))
        kept = solver_compiled.shared_tables(objective, 5)
        assert np.array_equal(kept, objective_tables(objective, 5))
        assert solver_compiled.shared_tables(objective, 5) is kept  # made once
        sizes.append(sum(a.nbytes for a in solver_compiled._TABLES.values()))
    assert max(sizes) == 3 * one.nbytes and min(sizes) == one.nbytes
