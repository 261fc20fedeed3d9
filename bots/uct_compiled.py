"""UCT's root loop compiled, for searches whose deals are all remembered (bots.uct).

When every hand already fits the solver, an iteration is a pure function of
(deal, root card), and UCT remembers each value (``UCTSearch.memo``). Most
iterations then only choose a card (UCB1), draw a deal and look its value
up, about a microsecond of work that the Python loop spent several on.
:func:`ucb_run` runs that loop in machine code. It stops:
- at the first deal whose value for the chosen card is not remembered yet
  (Python solves it, and :meth:`Remembered.add` stores it);
- at the iteration count it is given (Python looks at the clock between
  calls);
- when the table is half full (:meth:`Remembered.grow`).
The choices, deals and values are those of the Python loop, so a seeded
search gives the same statistics (tests/bots/test_uct_compiled.py).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from game.engine import kernel_cache  # noqa: F401  (before the kernels: their cache folder)
from game.engine.cards import parse_hand

from .sampling import Sampler, WeightedSampler
from .sampling_compiled import (
    CompiledSampler,
    sample_uniform,
    sample_weighted,
    uniform_tables,
    weighted_tables,
)

STOPPED = -1  # the iteration count was reached
FULL = -2  # the table of remembered values needs room
FIRST_SIZE = 1 << 12  # slots of a new table (a power of two)
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _slot(keys, card, hands):
    """The slot of (card, hands): where it is stored, or the empty slot it goes in."""
    h = np.uint64(card) * _MIX
    for s in range(4):
        h = (h ^ np.uint64(hands[s])) * _MIX
    mask = keys.shape[0] - 1
    i = np.int64(h >> np.uint64(32)) & mask
    while keys[i, 0] >= 0:
        if (
            keys[i, 0] == card
            and keys[i, 1] == hands[0]
            and keys[i, 2] == hands[1]
            and keys[i, 3] == hands[2]
            and keys[i, 4] == hands[3]
        ):
            return i
        i = (i + 1) & mask
    return i


@njit(cache=True)
def _put(keys, values, card, hands, value):
    i = _slot(keys, card, hands)
    keys[i, 0] = card
    for s in range(4):
        keys[i, 1 + s] = hands[s]
    values[i] = value


@njit(cache=True)
def _rehash(keys, values, new_keys, new_values):
    hands = np.zeros(4, dtype=np.int64)
    for i in range(keys.shape[0]):
        if keys[i, 0] >= 0:
            for s in range(4):
                hands[s] = keys[i, 1 + s]
            _put(new_keys, new_values, keys[i, 0], hands, values[i])


@njit(cache=True)
def _select(visits, totals, n, c, scale):
    """UCB1 as ``UCTSearch._select``: an unvisited choice first, in order."""
    for j in range(visits.shape[0]):
        if visits[j] == 0:
            return j
    log_n = math.log(n)
    best, best_v = 0, -np.inf
    for j in range(visits.shape[0]):
        v = totals[j] / visits[j] / scale + c * math.sqrt(log_n / visits[j])
        if v > best_v:
            best, best_v = j, v
    return best


@njit(cache=True)
def ucb_run(
    weighted, uniform_t, weighted_t, stream, choices, visits, totals, n, stop, c, scale,
    keys, values, used, hands,
):  # fmt: skip
    """UCB iterations from ``n`` up to ``stop``; returns (n, what stopped it): a
    choice's index (its deal, in ``hands``, is not remembered), STOPPED or FULL."""
    while n < stop:
        if 2 * used[0] >= keys.shape[0]:
            return n, FULL
        j = _select(visits, totals, n, c, scale)
        if weighted:
            sample_weighted(*weighted_t, stream, hands)
        else:
            sample_uniform(*uniform_t, stream, hands)
        i = _slot(keys, choices[j], hands)
        if keys[i, 0] < 0:
            return n, j
        visits[j] += 1
        totals[j] += values[i]
        n += 1
    return n, STOPPED


_stand_ins: dict[bool, tuple[np.ndarray, ...]] = {}


def _stand_in_tables(weighted: bool) -> tuple[np.ndarray, ...]:
    """Tables of the sampler kind not in use (the kernel takes both kinds)."""
    if weighted not in _stand_ins:
        args = (0, parse_hand("AS"), parse_hand("KS 2H 3H"), (1, 1, 1, 1), (0, 0, 0, 0))
        if weighted:
            _stand_ins[weighted] = weighted_tables(WeightedSampler(*args))
        else:
            _stand_ins[weighted] = uniform_tables(Sampler(*args))
    return _stand_ins[weighted]


class Remembered:
    """The values of (root card, deal) a search has solved, in an open-addressing
    table the kernel reads; the loop over UCB iterations that uses it."""

    def __init__(self, sampler: CompiledSampler) -> None:
        size = FIRST_SIZE
        self.keys = np.full((size, 5), -1, dtype=np.int64)
        self.values = np.zeros(size, dtype=np.float64)
        self.used = np.zeros(1, dtype=np.int64)
        self.weighted = sampler.weighted
        if sampler.weighted:
            self.tables = (_stand_in_tables(False), sampler.tables)
        else:
            self.tables = (sampler.tables, _stand_in_tables(True))

    def add(self, card: int, hands: np.ndarray, value: float) -> None:
        _put(self.keys, self.values, card, hands, value)
        self.used[0] += 1

    def grow(self) -> None:
        size = 2 * self.keys.shape[0]
        keys = np.full((size, 5), -1, dtype=np.int64)
        values = np.zeros(size, dtype=np.float64)
        _rehash(self.keys, self.values, keys, values)
        self.keys, self.values = keys, values

    def run(
        self,
        stream: np.ndarray,
        choices: np.ndarray,
        visits: np.ndarray,
        totals: np.ndarray,
        n: int,
        stop: int,
        c: float,
        scale: float,
        hands: np.ndarray,
    ) -> tuple[int, int]:
        """:func:`ucb_run` on this table, grown as it fills."""
        while True:
            n, stopped = ucb_run(
                self.weighted, *self.tables, stream, choices, visits, totals, n, stop, c, scale,
                self.keys, self.values, self.used, hands,
            )  # fmt: skip
            if stopped != FULL:
                return n, stopped
            self.grow()


def warm_up() -> None:
    """Compile or load the kernels (a searching process's start,
    :func:`bots.solver_compiled.warm_up`): with either sampler, a miss, a stored
    value and a grown table."""
    args = (0, parse_hand("AS"), parse_hand("KS 2H 3H"), (1, 1, 1, 1), (0, 0, 0, 0))
    for sampler in (Sampler(*args), WeightedSampler(*args)):
        table = Remembered(CompiledSampler(sampler))
        hands = np.zeros(4, dtype=np.int64)
        choices = np.zeros(1, dtype=np.int64)
        visits, totals = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.float64)
        stream = np.zeros(1, dtype=np.uint64)
        table.run(stream, choices, visits, totals, 0, 1, 0.4, 100.0, hands)
        table.add(0, hands, 0.0)
        table.grow()
