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

from .solver import NIL_WEIGHT, NilObjective, Position, TricksObjective
from .solver_compiled import CompiledSolver, SearchOverBudget, _idx, _splits

NO_NILS: tuple[int, ...] = ()


# (the least and most tricks North/South can take in any play from a position,
# and the seats sure to take a trick, as a mask)
Reach = tuple[int, int, int]
SPADES = 3


def reach(position: Position, nils: tuple[int, ...] = ()) -> Reach:
    """What any play from ``position`` leaves possible: North/South take from
    ``low`` to ``high`` of the tricks left, and each seat of ``nils`` in ``sure``
    takes one. A side's top spades (those above every spade of the other side)
    each win the trick they fall on, and one hand's fall on as many tricks: the
    side takes at least as many as either hand holds, one fewer when the trick
    under way holds a spade above the lowest of them. A seat holding the
    highest spade left, above any on the trick, takes a trick."""
    hands = position.hands
    left = hands[position.leader].bit_count() + (1 if position.trick else 0)
    spades = [h >> (13 * SPADES) for h in hands]
    live = spades[0] | spades[1] | spades[2] | spades[3]
    sure_tricks = [0, 0]
    sure = 0
    if live:
        top = live.bit_length() - 1
        side = next(s for s in range(4) if spades[s] >> top & 1) % 2
        others = spades[1 - side] | spades[3 - side]
        run = live & ~((1 << others.bit_length()) - 1)  # above the other side's spades
        held = max((spades[side] & run).bit_count(), (spades[side + 2] & run).bit_count())
        on_trick = max((c - 13 * SPADES for c in position.trick if c >= 13 * SPADES), default=-1)
        lowest = (run & -run).bit_length() - 1
        sure_tricks[side] = max(0, held - (1 if on_trick > lowest else 0))
        if top > on_trick:
            owner = next(s for s in range(4) if spades[s] >> top & 1)
            if owner in nils:
                sure = 1 << owner
    return sure_tricks[0], left - sure_tricks[1], sure


# The nodes a nil objective's question may take before it is given up for the
# points search: it answers some questions for a fraction of their points
# search, and others not at all (nil objective searches have no quick tricks).
NIL_QUESTION_NODES = 50_000
NIL_DECIDING_TIMES = 20  # a question that decides alone: 1M nodes


class SteppedPoints:
    """The values of a points :class:`CompiledSolver`, from the same calls
    (:meth:`value`), bounded first by the trick count's value (of ``tricks``, a
    trick count solver the caller may share: its entries serve both).

    For each value m, the splits worth at least m lie among those in which
    North/South take at least ``k_lo(m)`` tricks, and hold all those in which
    they take at least ``k_hi(m)`` (the two are equal where the question is
    the trick count's). With x the most tricks North/South can force, the
    value is at least m when x >= k_hi(m) and below it when x < k_lo(m); only
    the values in between are the points search's questions.

    With a nil bidder still without a trick, the same holds of the nil
    objective's order of the splits (:class:`NilObjective` of the live nils:
    each side's kept nils first, then the tricks; :meth:`nil_steps`): a
    question between the trick count's bounds is asked of the nil objective
    (a null window at ``f_hi(m)`` and, if that leaves it open, ``f_lo(m)``)
    before the points search."""

    def __init__(self, points: CompiledSolver, tricks: CompiledSolver | None = None) -> None:
        if tricks is not None and not isinstance(tricks.objective, TricksObjective):
            raise ValueError("the trick questions need a trick count solver")
        self.points = points
        self.tricks = tricks or CompiledSolver(TricksObjective())
        self._steps: dict[
            tuple[int, int, int, Reach | None], tuple[list[int], list[int], list[int]]
        ] = {}
        self._nil_steps: dict[
            tuple[int, int, int, Reach | None], tuple[tuple[int, ...], list[int], list[int]]
        ] = {}
        self._nil_solvers: dict[tuple[int, ...], CompiledSolver] = {}
        self._nil_bounds: tuple[object, list[int]] = (None, [])
        self.nil_question_nodes = NIL_QUESTION_NODES
        self.points_questions = 0
        self.nil_questions = 0
        self.nil_stops = 0  # nil questions stopped at nil_question_nodes
        self.nil_answers = 0  # points questions the nil objective answered
        self.nodes = 0  # the last call's, every solver's

    def _leaves(
        self, left: int, span: int, start: int, reach: Reach | None
    ) -> tuple[list[tuple[int, ...]], np.ndarray]:
        """The splits of the tricks left that a play can reach (all, without
        ``reach``) and their leaf values."""
        t = self.points.tables(span)
        splits = [w for n, w in _splits(left) if n == left]
        if reach is not None:
            low, high, sure = reach
            splits = [
                w
                for w in splits
                if low <= w[0] + w[2] <= high and all(w[s] for s in range(4) if sure >> s & 1)
            ]
        return splits, t[0, [start + _idx(w) for w in splits]]

    def steps(
        self, left: int, span: int, start: int, reach: Reach | None = None
    ) -> tuple[list[int], list[int], list[int]]:
        """The objective's distinct values over the splits of the ``left`` tricks
        left (as :meth:`CompiledSolver.outcome_values`) and, for each, ``k_lo``
        (``left + 1`` where no split a play can reach is worth it) and ``k_hi``
        (``left + 1`` where no number of tricks makes sure of it); ``reach``
        (:func:`reach`): only the splits it leaves count."""
        key = (left, span, start, reach)
        found = self._steps.get(key)
        if found is None:
            values = self.points.outcome_values(left, span, start)
            splits, leaf = self._leaves(left, span, start, reach)
            ns = np.array([w[0] + w[2] for w in splits])
            k_lo, k_hi = [], []
            for m in values:
                wins = leaf >= m
                k_lo.append(int(ns[wins].min()) if wins.any() else left + 1)
                losing = ns[~wins]
                k_hi.append(int(losing.max()) + 1 if losing.size else 0)
            found = self._steps[key] = (values, k_lo, k_hi)
        return found

    def nil_steps(
        self, left: int, span: int, start: int, reach: Reach | None = None
    ) -> tuple[tuple[int, ...], list[int], list[int]]:
        """The live nils (nil bidders without a trick from the objective's start
        to the position, the outcome ``start``) and, for each value of
        :meth:`steps`, ``f_lo`` and ``f_hi`` of the nil objective's value f of
        a split (North/South's tricks, plus :data:`NIL_WEIGHT` for each of
        their live nils kept, less it for each of East/West's): no split worth
        at least m has f below ``f_lo(m)``, every split with f at least
        ``f_hi(m)`` is worth m (of the splits ``reach`` leaves). No live nil:
        ``()`` and no bounds."""
        key = (left, span, start, reach)
        found = self._nil_steps.get(key)
        if found is None:
            objective = self.points.objective
            won = getattr(objective, "tricks_won", (0, 0, 0, 0))
            taken = (start % 14, start // 14 % 14, start // 196 % 14, start // 2744)
            tracked = getattr(objective, "tracked", ())
            nils = tuple(s for s in tracked if won[s] + taken[s] == 0)
            f_lo: list[int] = []
            f_hi: list[int] = []
            if nils:
                values = self.steps(left, span, start, reach)[0]
                splits, leaf = self._leaves(left, span, start, reach)
                f = np.array(
                    [
                        w[0]
                        + w[2]
                        + sum((NIL_WEIGHT if s % 2 == 0 else -NIL_WEIGHT) for s in nils if not w[s])
                        for w in splits
                    ]
                )
                for m in values:
                    wins = leaf >= m
                    f_lo.append(int(f[wins].min()) if wins.any() else 10**6)
                    losing = f[~wins]
                    f_hi.append(int(losing.max()) + 1 if losing.size else -(10**6))
            found = self._nil_steps[key] = (nils, f_lo, f_hi)
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
        start = _idx(taken) if taken else 0
        # (only the splits a play can reach: a bag penalty or a set nil no play
        # reaches decides nothing)
        key = (left, span, start, reach(position, getattr(self.points.objective, "tracked", ())))
        values, k_lo, k_hi = self.steps(*key)
        self.nodes = 0
        x = self._ask(self.tricks, position, -(10**9), 10**9, None, node_limit)
        # values[lo] <= the value <= values[hi], from the trick count alone
        lo = bisect.bisect_right(k_hi, x) - 1
        hi = bisect.bisect_right(k_lo, x) - 1
        ask = _Questions(self, position, taken, node_limit, values, lo, hi, key)
        if beta == alpha + 1:  # is the value at least beta?
            # (the analysis asks whether the side to act has better than its
            # card: most often not, so North/South's answer is most often no)
            return ask.at_least(bisect.bisect_left(values, beta), position.to_act % 2 == 1)
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
                v = ask.at_least(lo + 1, False)
                if v < values[lo + 1]:
                    return values[lo]
                lo = max(lo + 1, bisect.bisect_left(values, v))
            return values[lo]
        if ceiling is not None:
            hi = min(hi, bisect.bisect_right(values, ceiling) - 1)
            while lo < hi:
                v = ask.at_least(hi, True)
                if v >= values[hi]:
                    return values[hi]
                hi = min(hi - 1, bisect.bisect_right(values, v) - 1)
            return values[lo]
        while lo < hi:  # a binary search over the values left, as the points solver's
            i = (lo + hi + 1) // 2
            v = ask.at_least(i)
            if v >= values[i]:
                lo = max(lo, bisect.bisect_left(values, v))
            else:
                hi = min(hi, bisect.bisect_right(values, v) - 1)
        return values[lo]

    @property
    def total_nodes(self) -> int:
        """Every call's nodes, of every solver (stopped searches too)."""
        nils = sum(s.total_nodes for s in self._nil_solvers.values())
        return self.points.total_nodes + self.tricks.total_nodes + nils

    def nil_solver(self, nils: tuple[int, ...]) -> CompiledSolver:
        """The nil objective's solver of these live nils (kept: its entries serve
        every position of the round with them live)."""
        found = self._nil_solvers.get(nils)
        if found is None:
            found = self._nil_solvers[nils] = CompiledSolver(NilObjective(nils))
        return found

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
        elif solver is not self.tricks:
            self.nil_questions += 1
        left = None if node_limit is None else max(1, node_limit - self.nodes)
        v = solver.value(position, alpha, beta, taken, left)
        self.nodes += solver.nodes
        return v


class _Questions:
    """One call's questions "is the value at least values[i]?": the trick count's
    bounds (``lo``, ``hi``) first, then the nil objective's, then the points
    search; each answer fail-soft (at least values[i]: a value proved reached;
    below it: a value proved not passed)."""

    def __init__(
        self,
        owner: SteppedPoints,
        position: Position,
        taken: tuple[int, ...] | None,
        node_limit: int | None,
        values: list[int],
        lo: int,
        hi: int,
        key: tuple[int, int, int, Reach],
    ) -> None:
        self.owner, self.position, self.taken, self.node_limit = owner, position, taken, node_limit
        self.values, self.lo, self.hi, self.key = values, lo, hi, key
        self.nils: tuple[int, ...] | None = None  # read when first needed
        # the nil objective's value: bounds proved (kept for the position's next call)
        mine = (position, taken)
        if owner._nil_bounds[0] != mine:
            owner._nil_bounds = (mine, [-(10**6), 10**6])
        self.f = owner._nil_bounds[1]

    def at_least(self, i: int, expect_yes: bool = True) -> int:
        values, lo, hi = self.values, self.lo, self.hi
        if i <= lo:
            return values[lo]
        if i > hi:
            return values[hi]
        known = self._nil_answer(i, expect_yes)
        if known is not None:
            return known
        m = values[i]
        owner = self.owner
        return owner._ask(owner.points, self.position, m - 1, m, self.taken, self.node_limit)

    def _nil_answer(self, i: int, expect_yes: bool) -> int | None:
        """The fail-soft answer the nil objective's value gives, or None; the
        question that can answer as expected first."""
        if self.nils is None:
            self.nils, self.f_lo, self.f_hi = self.owner.nil_steps(*self.key)
        if not self.nils:
            return None
        f_lo, f_hi = self.f_lo, self.f_hi
        for t in (f_hi[i], f_lo[i]) if expect_yes else (f_lo[i], f_hi[i]):
            if self.f[0] >= f_hi[i] or self.f[1] < f_lo[i]:
                break
            if self.f[0] >= t or self.f[1] < t:  # this one's answer is known
                continue
            owner = self.owner
            solver = owner.nil_solver(self.nils)
            # One question that decides (f_hi <= f_lo) is the points question
            # itself, asked of the nil objective: it may take more nodes (dear
            # ones took from 0.6x to over 3x the points search's nodes). Where
            # it takes two, and may decide nothing, each may take only a few.
            cap = owner.nil_question_nodes * (NIL_DECIDING_TIMES if f_hi[i] <= f_lo[i] else 1)
            left = None if self.node_limit is None else self.node_limit - owner.nodes
            if left is not None and left <= cap:  # the caller's limit comes first
                v = owner._ask(solver, self.position, t - 1, t, None, self.node_limit)
            else:
                try:
                    v = owner._ask(solver, self.position, t - 1, t, None, owner.nodes + cap)
                except SearchOverBudget:  # not cheap here: the points search instead
                    owner.nodes += solver.nodes
                    owner.nil_stops += 1
                    return None
            if v >= t:
                self.f[0] = max(self.f[0], v)
            else:
                self.f[1] = min(self.f[1], v)
        if self.f[0] >= f_hi[i]:  # yes: and as far up as the proved bound reaches
            self.owner.nil_answers += 1
            j = i
            while j < self.hi and f_hi[j + 1] <= self.f[0]:
                j += 1
            return self.values[j]
        if self.f[1] < f_lo[i]:  # no: and as far down as the proved bound reaches
            self.owner.nil_answers += 1
            j = i
            while j - 1 > self.lo and f_lo[j - 1] > self.f[1]:
                j -= 1
            return self.values[j - 1]
        return None
