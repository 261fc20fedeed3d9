"""The points search bounded by the trick count: a round's score is a step function of the tricks.

A question of the points search, "is the value at least m?", asks whether
North/South can force the round's remaining tricks into the splits worth at
least m. Those splits lie among the ones in which North/South take at least
k_lo(m) tricks and hold all those in which they take at least k_hi(m). So
once the trick count's value x (the most tricks North/South can force) is
known, x >= k_hi(m) answers yes and x < k_lo(m) answers no, exactly: a
play's outcome is its split of the tricks. Where no nil bidder's trick and
no bag decides a question, k_lo(m) = k_hi(m) and every question is answered
so: a whole points search is one trick count search, which quick tricks,
top spades and the trick count's shared table answer far faster. Only the
questions left between the two (a nil's, a bag's) go to the points search.
"""

from __future__ import annotations

import bisect

import numpy as np

from .solver import Position, TricksObjective
from .solver_compiled import CompiledSolver, _idx, _splits


class SteppedPoints:
    """The values of a points :class:`CompiledSolver`, from the same calls
    (:meth:`value`), bounded first by the trick count's value (of ``tricks``, a
    trick count solver the caller may share: its entries serve both).

    For each value m, the splits worth at least m lie among those in which
    North/South take at least ``k_lo(m)`` tricks, and hold all those in which
    they take at least ``k_hi(m)`` (the two are equal where the question is
    the trick count's). With x the most tricks North/South can force, the
    value is at least m when x >= k_hi(m) and below it when x < k_lo(m); only
    the values in between are the points search's questions."""

    def __init__(self, points: CompiledSolver, tricks: CompiledSolver | None = None) -> None:
        if tricks is not None and not isinstance(tricks.objective, TricksObjective):
            raise ValueError("the trick questions need a trick count solver")
        self.points = points
        self.tricks = tricks or CompiledSolver(TricksObjective())
        self._steps: dict[tuple[int, int, int], tuple[list[int], list[int], list[int]]] = {}
        self.points_questions = 0
        self.nodes = 0  # the last call's, both solvers'

    def steps(self, left: int, span: int, start: int) -> tuple[list[int], list[int], list[int]]:
        """The objective's distinct values over the splits of the ``left`` tricks
        left (as :meth:`CompiledSolver.outcome_values`) and, for each, ``k_lo``
        and ``k_hi`` (``left + 1`` where no number of tricks makes sure of it)."""
        key = (left, span, start)
        found = self._steps.get(key)
        if found is None:
            values = self.points.outcome_values(left, span, start)
            t = self.points.tables(span)
            splits = [w for n, w in _splits(left) if n == left]
            leaf = t[0, [start + _idx(w) for w in splits]]
            ns = np.array([w[0] + w[2] for w in splits])
            k_lo, k_hi = [], []
            for m in values:
                wins = leaf >= m
                k_lo.append(int(ns[wins].min()))
                losing = ns[~wins]
                k_hi.append(int(losing.max()) + 1 if losing.size else 0)
            found = self._steps[key] = (values, k_lo, k_hi)
        return found

    def value(
        self,
        position: Position,
        alpha: int = -(10**9),
        beta: int = 10**9,
        taken: tuple[int, ...] | None = None,
        node_limit: int | None = None,
        floor: int | None = None,
        ceiling: int | None = None,
    ) -> int:
        """As :meth:`CompiledSolver.value` of the points solver: the exact value,
        or with a null window (``beta == alpha + 1``) a fail-soft bound;
        ``node_limit`` for all the searches it makes. ``floor`` / ``ceiling``:
        bounds of the value the caller has proved (a null window's fail-soft
        answer): the exact value is then only searched between them."""
        left = position.hands[position.leader].bit_count() + (1 if position.trick else 0)
        span = left + (sum(taken) if taken else 0)
        values, k_lo, k_hi = self.steps(left, span, _idx(taken) if taken else 0)
        self.nodes = 0
        x = self._ask(self.tricks, position, -(10**9), 10**9, None, node_limit)
        # values[lo] <= the value <= values[hi], from the trick count alone
        lo = bisect.bisect_right(k_hi, x) - 1
        hi = bisect.bisect_right(k_lo, x) - 1
        if beta == alpha + 1:  # is the value at least beta?
            i = bisect.bisect_left(values, beta)
            if i <= lo:
                return values[lo]
            if i > hi:
                return values[hi]
            return self._ask(self.points, position, beta - 1, beta, taken, node_limit)
        # With a bound proved, the questions go from it one value at a time
        # (each answer's fail-soft bound may skip several): the value is most
        # often the bound's neighbour, and a question far from the value is the
        # dear one. The binary search's first question lies halfway between the
        # trick count's bounds: a nil round's first leads spent 70% of their
        # time on "at least 83?" next to a proved 172 (seed 1's nil-heavy mix,
        # round 16).
        if floor is not None:
            lo = max(lo, bisect.bisect_left(values, floor))
            while lo < hi:
                m = values[lo + 1]
                v = self._ask(self.points, position, m - 1, m, taken, node_limit)
                if v < m:
                    return values[lo]
                lo = max(lo + 1, bisect.bisect_left(values, v))
            return values[lo]
        if ceiling is not None:
            hi = min(hi, bisect.bisect_right(values, ceiling) - 1)
            while lo < hi:
                m = values[hi]
                v = self._ask(self.points, position, m - 1, m, taken, node_limit)
                if v >= m:
                    return values[hi]
                hi = min(hi - 1, bisect.bisect_right(values, v) - 1)
            return values[lo]
        while lo < hi:  # a binary search over the values left, as the points solver's
            m = values[(lo + hi + 1) // 2]
            v = self._ask(self.points, position, m - 1, m, taken, node_limit)
            if v >= m:
                lo = max(lo, bisect.bisect_left(values, v))
            else:
                hi = min(hi, bisect.bisect_right(values, v) - 1)
        return values[lo]

    def _ask(
        self,
        solver: CompiledSolver,
        position: Position,
        alpha: int,
        beta: int,
        taken: tuple[int, ...] | None,
        node_limit: int | None,
    ) -> int:
        """``solver``'s value within what is left of ``node_limit``."""
        if solver is self.points:
            self.points_questions += 1
        left = None if node_limit is None else max(1, node_limit - self.nodes)
        v = solver.value(position, alpha, beta, taken, left)
        self.nodes += solver.nodes
        return v
