"""UCT with the compiled solver makes the same search as with the reference solver:
the same values end every playout, so a seeded search with an iteration budget
gives the same statistics and card."""

from __future__ import annotations

import random

import pytest

from bots.uct import UCTSearch
from game.engine.view import view_for
from tests.bots.deals import played_round


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
