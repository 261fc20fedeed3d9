"""UCT with the compiled solver makes the same search as with the reference solver:
the same values end every playout, so a seeded search with an iteration budget
gives the same statistics and card."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bots import uct_compiled
from bots.sampling import Sampler
from bots.sampling_compiled import CompiledSampler
from bots.uct import UCTSearch
from game.engine.view import view_for
from tests.support.deals import played_round


@pytest.mark.parametrize(
    ("seed", "stop_at_play", "root"),
    [(14, 24, "ucb"), (5, 33, "paired"), (8, 22, "paired"), (11, 37, "ucb"), (12, 26, "ucb")],
)
def test_the_same_search_with_either_solver(seed: int, stop_at_play: int, root: str) -> None:
    r = played_round(seed, stop_at_play=stop_at_play)
    view = view_for(r, r.to_act)
    results = []
    for solver in ("compiled", "reference"):
        search = UCTSearch(view, root=root, solver=solver)
        if len(search.groups) < 2:
            pytest.skip("one choice: nothing to search")
        results.append(search.run(random.Random(seed), budget=None, iterations=60))
    a, b = results
    assert (a.card, a.visits, a.means, a.solver_calls) == (
        b.card,
        b.visits,
        b.means,
        b.solver_calls,
    )
    assert a.solver_calls > 0


def test_an_unknown_solver_is_refused() -> None:
    r = played_round(3, stop_at_play=30)
    with pytest.raises(ValueError, match="solver"):
        UCTSearch(view_for(r, r.to_act), solver="fast")


@pytest.mark.parametrize(
    ("seed", "stop_at_play", "root", "sampling"),
    [
        (5, 4, "paired", "uniform"),
        (8, 13, "paired", "bids"),
        (14, 24, "ucb", "uniform"),
        (11, 37, "ucb", "bids"),
        (3, 41, "paired", "uniform"),  # every hand fits the solver: memoized deals
        (3, 41, "ucb", "uniform"),  # the same, UCB's compiled loop (bots.uct_compiled)
        (5, 39, "ucb", "bids"),
    ],
)
def test_the_same_search_with_either_playout(
    seed: int, stop_at_play: int, root: str, sampling: str
) -> None:
    """SRP's cards and the deals compiled or in Python: the same deals from the
    same stream, the same cards, so the same statistics."""
    r = played_round(seed, stop_at_play=stop_at_play)
    view = view_for(r, r.to_act)
    results = []
    for playout in ("compiled", "reference"):
        search = UCTSearch(view, root=root, sampling=sampling, playout=playout)
        if len(search.groups) < 2:
            pytest.skip("one choice: nothing to search")
        results.append(search.run(random.Random(seed), budget=None, iterations=40))
    a, b = results
    assert (a.card, a.visits, a.means, a.solver_calls) == (
        b.card,
        b.visits,
        b.means,
        b.solver_calls,
    )


def test_an_unknown_playout_is_refused() -> None:
    r = played_round(3, stop_at_play=30)
    with pytest.raises(ValueError, match="playout"):
        UCTSearch(view_for(r, r.to_act), playout="numba")


@pytest.mark.parametrize(
    ("seed", "stop_at_play", "sampling"), [(3, 41, "uniform"), (4, 37, "bids")]
)
def test_the_compiled_loop_of_remembered_deals_is_the_python_loop(
    seed: int, stop_at_play: int, sampling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every hand fits the solver: UCB's loop in machine code, its table of
    values grown from 16 slots, gives the Python loop's statistics over
    thousands of iterations and two runs of one search."""
    monkeypatch.setattr(uct_compiled, "FIRST_SIZE", 16)
    r = played_round(seed, stop_at_play=stop_at_play)
    view = view_for(r, r.to_act)
    results, searches = [], []
    for playout in ("compiled", "reference"):
        search = UCTSearch(view, root="ucb", sampling=sampling, playout=playout)
        assert search.memo is not None
        if len(search.groups) < 2:
            pytest.skip("one choice: nothing to search")
        rng = random.Random(seed)
        first = search.run(rng, budget=None, iterations=3000)
        results.append((first, search.run(rng, budget=None, iterations=500)))
        searches.append(search)
    for a, b in zip(*results, strict=True):
        assert (a.card, a.visits, a.means, a.solver_calls) == (
            b.card,
            b.visits,
            b.means,
            b.solver_calls,
        )
    # Each (card, deal) solved once, in either loop.
    table = searches[0].remembered
    assert table is not None and table.keys.shape[0] > 16
    assert results[0][1].solver_calls == searches[0].remembered_count == len(searches[1].memo or ())


def test_the_table_of_remembered_values_finds_what_it_holds() -> None:
    rng = random.Random(1)
    sampler = CompiledSampler(Sampler(0, 1, (1 << 52) - 2, (1, 17, 17, 17), (0, 0, 0, 0)))
    table = uct_compiled.Remembered(sampler)
    stored = {}
    for i in range(5000):
        hands = np.array([rng.getrandbits(52) for _ in range(4)], dtype=np.int64)
        card = rng.randrange(52)
        table.add(card, hands, float(i))
        stored[(card, *hands.tolist())] = float(i)
        if 2 * table.used[0] >= table.keys.shape[0]:
            table.grow()
    assert table.keys.shape[0] >= 2 * len(stored)
    for (card, *hands), value in stored.items():
        i = uct_compiled._slot(table.keys, card, np.array(hands, dtype=np.int64))
        assert table.keys[i, 0] == card and table.values[i] == value
