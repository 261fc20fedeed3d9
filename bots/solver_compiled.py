"""The exact solver compiled (numba): the same values as :mod:`bots.solver`, faster.

:mod:`bots.solver` stays the readable reference; this module computes the
same minimax value for the same objectives (``tests/bots/test_solver_compiled.py``
compares the two on thousands of random positions). What differs is how:

* the outcome so far is an index into tables made once per objective and
  number of tricks left: ``idx = w0 + 14 w1 + 196 w2 + 2744 w3`` for the
  tricks each seat took since the position. The objective's leaf value, the
  least and greatest value any split of the remaining tricks can still give
  (a cut at each trick's start, for every objective), the part of the outcome
  the transposition table keys on and the offset its values are stored
  relative to are all looked up by ``idx``;
* the transposition table keys a trick's start on *relative ranks*: which
  seat holds the 1st, 2nd, ... live card of each suit. Cards already played
  do not matter, so positions that differ only in them share an entry (the
  idea of partition search and of DDS's table, in its simplest form). It is
  a fixed-size array in the process, shared by every solver; each solver has
  its own generation in the key, so it sees only its own entries;
* a full-window call searches by null windows (as DDS does): a binary search
  over the objective's possible values, each step asking only "at least
  this?" (the trick count always; the other objectives from
  :data:`BISECT_FROM` tricks left);
* for the trick count, quick tricks (the leader's top cards it can cash) and
  the top spades each side holds bound the value at each trick's start;
* leads are ordered (a side suit an opponent can ruff last, the suit's top
  card first, low toward partner's top card), the table's best lead first;
  follows too: a card with which the side surely wins the trick (no opponent
  still to play can beat it) first, cheapest first, then one that leaves the
  side winning for now, then losers low first;
* the search keeps its own stack (``frames``): numba's cache cannot hold a
  recursive function (numba issue 6061).

The first call compiles the kernels (about 4 s); ``cache=True`` keeps the
machine code in ``__pycache__``, and later processes load it in under a
second (:func:`warm_up`). Measured against DDS: ``manage.py bench_solver``
(docs/bots.md, "Compiled search").
"""

from __future__ import annotations

import bisect
import itertools
import logging
import os
import random
import threading
import time

import numpy as np
from numba import njit

from game.engine.cards import SUIT_MASKS
from game.engine.tricks import BEATERS, BELOW, winning_card

from .bits import high_bit, low_bit, popcount
from .solver import NilObjective, Objective, PointsObjective, Position

STRIDE = (1, 14, 196, 2744)  # idx step when each seat takes a trick
IDX_SIZE = 14**4
TT_BITS = 20  # entries in the shared transposition table: 2**TT_BITS
INF = 1_000_000_000
# Tricks left from which a full-window call searches by null windows for every
# objective (the trick count always): at 10 cards a hand a points search takes
# 35 ms median instead of 49; below 8 one wide window costs about the same.
BISECT_FROM = 8


# ----- constant tables --------------------------------------------------------------

_SUIT = np.array(SUIT_MASKS, dtype=np.int64)
_BELOW = np.array(BELOW, dtype=np.int64)
_BEATERS = np.array(BEATERS, dtype=np.int64)
# Lead order: spades high to low, then side-suit cards high to low (as the reference).
_LEAD_KEY = np.array([-(c % 13) - (20 if c >= 39 else 0) for c in range(52)], dtype=np.int64)


# ----- the search --------------------------------------------------------------------


@njit(cache=True)
def _tt_key(h, leader, broken, part, gen):
    """The table key of a trick's start: which seat holds each live card (in card
    order, 2 bits a card: at most 104 bits over ``k1`` and ``k2``'s low 40), the
    live cards per suit, the leader, spades broken, the objective's ``part`` of
    the outcome (under 24 bits) and the solver's generation (43 bits, split
    over ``k2``'s and ``k3``'s high bits)."""
    h0, h1, h2 = h[0], h[1], h[2]
    live = h0 | h1 | h2 | h[3]
    k1 = 0
    k2 = 0
    i = 0
    m = live
    while m:
        low = m & -m
        m ^= low
        own = 0 if h0 & low else (1 if h1 & low else (2 if h2 & low else 3))
        if i < 32:
            k1 |= own << (2 * i)
        else:
            k2 |= own << (2 * (i - 32))
        i += 1
    counts = 0
    for s in range(4):
        counts |= popcount(live & _SUIT[s]) << (4 * s)
    k2 |= (gen >> 20) << 40
    k3 = counts | (leader << 16) | (np.int64(broken) << 18) | (part << 19) | ((gen & 0xFFFFF) << 43)
    return k1, k2, k3


@njit(cache=True)
def _quick_tricks(h, leader, broken):
    """Tricks the leader takes for sure by cashing its own top cards: in each suit
    the run of the highest live cards it holds, in a side suit no longer than
    the shortest holding of an opponent who could ruff (holds a spade). It
    keeps the lead throughout, so the suits add up (a lower bound for its side)."""
    hand = h[leader]
    o1 = h[(leader + 1) & 3]
    o2 = h[(leader + 3) & 3]
    live = h[0] | h[1] | h[2] | h[3]
    q = 0
    for s in range(4):
        if s == 3 and not broken and hand & ~_SUIT[3]:
            continue  # spades may not be led yet
        m = live & _SUIT[s]
        if not hand & m:
            continue
        run = 0
        while m:
            top = high_bit(m)
            if not (hand >> top) & 1:
                break
            run += 1
            m ^= np.int64(1) << top
        if s != 3:
            if o1 & _SUIT[3]:
                run = min(run, popcount(o1 & _SUIT[s]))
            if o2 & _SUIT[3]:
                run = min(run, popcount(o2 & _SUIT[s]))
        q += run
    return q


@njit(cache=True)
def _top_spades(h, side):
    """Tricks ``side`` (0 North/South, 1 East/West) takes for sure with spades: the
    run of the highest live spades held by its seat that holds the top one (the
    top live spade wins whenever it is played, and the seat plays one a trick)."""
    spades = (h[0] | h[1] | h[2] | h[3]) & _SUIT[3]
    if not spades:
        return 0
    top = high_bit(spades)
    seat = 0
    for i in range(4):
        if (h[i] >> top) & 1:
            seat = i
    if (seat & 1) != side:
        return 0
    run = 0
    hand = h[seat]
    m = spades
    while m:
        top = high_bit(m)
        if not (hand >> top) & 1:
            break
        run += 1
        m ^= np.int64(1) << top
    return run


@njit(cache=True)
def _sort_by_key(mv, d, n):
    """Insertion sort of frame ``d``'s cards by their keys (row 64 + d), stable."""
    for i in range(1, n):
        c = mv[d, i]
        kc = mv[64 + d, i]
        j = i - 1
        while j >= 0 and mv[64 + d, j] > kc:
            mv[d, j + 1] = mv[d, j]
            mv[64 + d, j + 1] = mv[64 + d, j]
            j -= 1
        mv[d, j + 1] = c
        mv[64 + d, j + 1] = kc


@njit(cache=True)
def _can_beat(hand, lead_suit, w):
    """Can a seat still to play, holding ``hand``, beat the card ``w``?"""
    follow = hand & _SUIT[lead_suit]
    if follow:
        return w // 13 == lead_suit and (follow & _BEATERS[w]) != 0
    return (hand & _BEATERS[w] & _SUIT[3]) != 0


@njit(cache=True)
def _follow_key(h, seat, pos, leader, lead_suit, best, winner, c):
    """Follow order, lowest key first: a card with which the side wins the trick
    for sure (no opponent still to play can beat the winning card), the
    cheapest first; then one that leaves the side winning for now; then
    losers, low first."""
    if (_BEATERS[best] >> c) & 1:
        w = c
        ws = seat
    else:
        w = best
        ws = winner
    sure = True
    for p in range(pos + 1, 4):
        other = (leader + p) & 3
        if (other ^ ws) & 1 and _can_beat(h[other], lead_suit, w):
            sure = False
    rank = c % 13 + (13 if c >= 39 and lead_suit != 3 else 0)  # a ruff costs a spade
    if (ws ^ seat) & 1:
        return 64 + rank
    return rank if sure else 32 + rank


@njit(cache=True)
def _lead_key(h, leader, c, live):
    """Lead order, lowest key first: a side suit an opponent can ruff last; the
    suit's top live card (a winner) first; low toward partner's top card next;
    then spades high to low and side cards high to low, as the reference."""
    s = c // 13
    suit = _SUIT[s]
    o1 = h[(leader + 1) & 3]
    o2 = h[(leader + 3) & 3]
    score = 0
    if s != 3 and ((not o1 & suit and o1 & _SUIT[3]) or (not o2 & suit and o2 & _SUIT[3])):
        score -= 4
    top = high_bit(live & suit)
    if c == top:
        score += 2
    elif (h[(leader + 2) & 3] >> top) & 1:
        score += 1
    return -score * 64 + _LEAD_KEY[c]


@njit(cache=True)
def _slot(k1, k2, k3):
    x = k1 * 0x9E3779B97F4A7C15 ^ k2 * 0xC2B2AE3D27D4EB4F ^ k3 * 0x165667B19E3779F9
    x ^= x >> 29
    return (x >> 11) & ((1 << TT_BITS) - 2)  # the even slot of a pair


STRIDE_A = np.array(STRIDE, dtype=np.int64)

# A frame's fields (one row of ``frames`` per depth: numba's cache cannot hold
# a recursive function, numba issue 6061, so the search keeps its own stack).
LEADER, POS, LEAD_SUIT, BEST, WINNER, BROKEN, IDX, LIVE = range(8)
ALPHA, BETA, VALUE, SEAT, HAND, COUNT, NEXT = range(8, 15)
TRICK_START, SLOT, K1, K2, K3, OFFSET, ALPHA0, BETA0, LOWER, UPPER, BEST_CARD = range(15, 26)


@njit(cache=True)
def _solve(
    h, leader, pos, lead_suit, best, winner, broken, live, alpha, beta, quick, t, tt, tv, f, mv
):
    """Fail-soft alpha-beta from the position; returns its value for North/South.

    ``h``: the four hands (changed during the search, restored at its end);
    ``pos`` cards already on the trick (``lead_suit``, the ``best`` card so far
    and its seat ``winner``; ``live``: the cards in the hands and on the
    trick). ``quick``: the objective is the trick count (quick tricks bound it).
    ``t``: the objective's tables by ``idx`` (rows: leaf value, least
    and greatest value still reachable, the key part, the offset);
    ``tt``/``tv``: the table's keys and (lower, upper) bounds; ``f``: the
    frames, with the node count at [63, 0] and the generation at [63, 1];
    ``mv``: the candidate cards of each frame.
    """
    d = 0
    idx = 0
    while True:
        # ---- enter a node at depth d (its parameters in the locals) ----
        ready = False  # its value is known without a search: r
        r = 0
        trick_start = 0
        s = k1 = k2 = k3 = off = lo = hi = 0
        hint = -1  # the table's best lead here: suit * 16 + live cards above it
        if pos == 0:
            n = popcount(h[leader])
            if n == 0:
                r = t[0, idx]
                ready = True
            elif n == 1:  # the last trick plays itself
                w = leader
                b = high_bit(h[leader])
                for i in range(1, 4):
                    seat = (leader + i) & 3
                    c = high_bit(h[seat])
                    if (_BEATERS[b] >> c) & 1:
                        b = c
                        w = seat
                r = t[0, idx + STRIDE_A[w]]
                ready = True
            else:
                # Whatever is still reachable may already decide the window.
                lo = t[1, idx]
                hi = t[2, idx]
                if quick:
                    q = max(_quick_tricks(h, leader, broken), _top_spades(h, leader & 1))
                    q = min(q, n)
                    them = min(_top_spades(h, 1 - (leader & 1)), n - q)
                    if leader & 1:
                        hi = min(hi, t[4, idx] + n - q)
                        lo = max(lo, t[4, idx] + them)
                    else:
                        lo = max(lo, t[4, idx] + q)
                        hi = min(hi, t[4, idx] + n - them)
                if hi <= alpha or lo == hi:
                    r = hi
                    ready = True
                elif lo >= beta:
                    r = lo
                    ready = True
                else:
                    off = t[4, idx]
                    k1, k2, k3 = _tt_key(h, leader, broken, t[3, idx], f[63, 1])
                    # Two slots a key: a position with more cards left (dearer to
                    # search again) keeps its slot against one with fewer.
                    s = _slot(k1, k2, k3)
                    if not (tt[s, 0] == k1 and tt[s, 1] == k2 and tt[s, 2] == k3):
                        if tt[s + 1, 0] == k1 and tt[s + 1, 1] == k2 and tt[s + 1, 2] == k3:
                            s += 1
                        elif tv[s, 3] > tv[s + 1, 3]:
                            s += 1  # a miss: the slot a store would take
                    if tt[s, 0] == k1 and tt[s, 1] == k2 and tt[s, 2] == k3:
                        hint = tv[s, 2]
                        lo = max(lo, tv[s, 0] + off)
                        hi = min(hi, tv[s, 1] + off)
                        if lo == hi or lo >= beta:
                            r = lo
                            ready = True
                        elif hi <= alpha:
                            r = hi
                            ready = True
                        else:
                            alpha = max(alpha, lo)
                            beta = min(beta, hi)
                    trick_start = 1
                    live = h[0] | h[1] | h[2] | h[3]
        if ready:
            if d == 0:
                return r
            d -= 1
        else:
            f[63, 0] += 1
            seat = (leader + pos) & 3
            hand = h[seat]
            if pos:
                legal = hand & _SUIT[lead_suit]
                if legal == 0:
                    legal = hand
            elif broken:
                legal = hand
            else:
                legal = hand & ~_SUIT[3]
                if legal == 0:
                    legal = hand
            # Equivalent cards: keep the lowest of each run (no live card between).
            n = 0
            m = legal
            while m:
                c = low_bit(m)
                m &= m - 1
                below = live & _BELOW[c]
                if below and (legal >> high_bit(below)) & 1:
                    continue
                mv[d, n] = c
                n += 1
            # Move ordering.
            if pos == 0:
                for i in range(n):
                    mv[64 + d, i] = _lead_key(h, leader, mv[d, i], live)
                for i in range(1, n):  # insertion sort by the lead key
                    c = mv[d, i]
                    kc = mv[64 + d, i]
                    j = i - 1
                    while j >= 0 and mv[64 + d, j] > kc:
                        mv[d, j + 1] = mv[d, j]
                        mv[64 + d, j + 1] = mv[64 + d, j]
                        j -= 1
                    mv[d, j + 1] = c
                    mv[64 + d, j + 1] = kc
                if hint >= 0:  # the best lead found before, first
                    above = hint & 15
                    m = live & _SUIT[hint >> 4]
                    for _ in range(above):
                        m ^= np.int64(1) << high_bit(m)
                    if m:
                        c = high_bit(m)
                        for i in range(n):
                            if mv[d, i] == c:
                                for j in range(i, 0, -1):
                                    mv[d, j] = mv[d, j - 1]
                                mv[d, 0] = c
                                break
            else:
                for i in range(n):
                    mv[64 + d, i] = _follow_key(
                        h, seat, pos, leader, lead_suit, best, winner, mv[d, i]
                    )
                _sort_by_key(mv, d, n)
            f[d, LEADER] = leader
            f[d, POS] = pos
            f[d, LEAD_SUIT] = lead_suit
            f[d, BEST] = best
            f[d, WINNER] = winner
            f[d, BROKEN] = broken
            f[d, IDX] = idx
            f[d, LIVE] = live
            f[d, ALPHA] = alpha
            f[d, BETA] = beta
            f[d, VALUE] = INF if seat & 1 else -INF
            f[d, SEAT] = seat
            f[d, HAND] = hand
            f[d, COUNT] = n
            f[d, NEXT] = 0
            f[d, TRICK_START] = trick_start
            f[d, BEST_CARD] = mv[d, 0]
            if trick_start:
                f[d, SLOT] = s
                f[d, K1] = k1
                f[d, K2] = k2
                f[d, K3] = k3
                f[d, OFFSET] = off
                f[d, ALPHA0] = alpha
                f[d, BETA0] = beta
                f[d, LOWER] = lo
                f[d, UPPER] = hi
        # ---- frame d: take the child's value r (unless just entered), then the next card ----
        fresh = not ready
        while True:
            if not fresh:
                if f[d, SEAT] & 1:
                    if r < f[d, VALUE]:
                        f[d, VALUE] = r
                        f[d, BEST_CARD] = mv[d, f[d, NEXT] - 1]
                        if r < f[d, BETA]:
                            f[d, BETA] = r
                elif r > f[d, VALUE]:
                    f[d, VALUE] = r
                    f[d, BEST_CARD] = mv[d, f[d, NEXT] - 1]
                    if r > f[d, ALPHA]:
                        f[d, ALPHA] = r
            fresh = False
            if f[d, NEXT] < f[d, COUNT] and f[d, ALPHA] < f[d, BETA]:
                c = mv[d, f[d, NEXT]]
                f[d, NEXT] += 1
                seat = f[d, SEAT]
                h[seat] = f[d, HAND] ^ (np.int64(1) << c)
                p = f[d, POS]
                alpha = f[d, ALPHA]
                beta = f[d, BETA]
                broken = f[d, BROKEN] | (c >= 39)
                if p == 0:
                    best = c
                    winner = seat
                    lead_suit = c // 13
                else:
                    lead_suit = f[d, LEAD_SUIT]
                    if (_BEATERS[f[d, BEST]] >> c) & 1:
                        best = c
                        winner = seat
                    else:
                        best = f[d, BEST]
                        winner = f[d, WINNER]
                if p == 3:  # the trick is complete: its winner leads the next
                    leader = winner
                    pos = 0
                    idx = f[d, IDX] + STRIDE_A[winner]
                else:
                    leader = f[d, LEADER]
                    pos = p + 1
                    idx = f[d, IDX]
                    live = f[d, LIVE]
                d += 1
                break
            # Every card tried (or a cut): the frame's value.
            h[f[d, SEAT]] = f[d, HAND]
            r = f[d, VALUE]
            if f[d, TRICK_START]:
                lo = f[d, LOWER]
                hi = f[d, UPPER]
                if r <= f[d, ALPHA0]:
                    hi = min(hi, r)
                elif r >= f[d, BETA0]:
                    lo = max(lo, r)
                else:
                    lo = hi = r
                s = f[d, SLOT]
                tt[s, 0] = f[d, K1]
                tt[s, 1] = f[d, K2]
                tt[s, 2] = f[d, K3]
                tv[s, 0] = lo - f[d, OFFSET]
                tv[s, 1] = hi - f[d, OFFSET]
                c = f[d, BEST_CARD]
                tv[s, 2] = (c // 13) << 4 | popcount(f[d, LIVE] & _SUIT[c // 13] & ~((2 << c) - 1))
                tv[s, 3] = popcount(f[d, LIVE])
            if d == 0:
                return r
            d -= 1


# ----- the objective's tables -----------------------------------------------------------


def _splits(total: int):
    """Every (w0, w1, w2, w3) of tricks taken per seat with a sum of at most ``total``,
    by sum, greatest sum first."""
    for n in range(total, -1, -1):
        for w0 in range(n + 1):
            for w1 in range(n - w0 + 1):
                for w2 in range(n - w0 - w1 + 1):
                    yield n, (w0, w1, w2, n - w0 - w1 - w2)


def objective_tables(objective: Objective, tricks_left: int) -> np.ndarray:
    """The rows the kernel reads by ``idx`` for ``tricks_left`` tricks from the
    position: the leaf value (when every trick is taken), the least and the
    greatest value still reachable, the table's key part and the offset."""
    t = np.zeros((5, IDX_SIZE), dtype=np.int64)
    if isinstance(objective, PointsObjective):
        objective._remaining_total = tricks_left
    tracked = objective.tracked
    for n, w in _splits(tricks_left):
        idx = w[0] + 14 * w[1] + 196 * w[2] + 2744 * w[3]
        ns = w[0] + w[2]
        if n == tricks_left:
            marks = [w[s] if objective.count_tracked else int(w[s] > 0) for s in tracked]
            v = objective.value(ns, marks)
            t[0, idx] = t[1, idx] = t[2, idx] = v
        else:
            nxt = [idx + STRIDE[s] for s in range(4)]
            t[1, idx] = min(t[1, j] for j in nxt)
            t[2, idx] = max(t[2, j] for j in nxt)
        if objective.separable:
            t[3, idx] = sum(int(w[s] > 0) << j for j, s in enumerate(tracked))
            t[4, idx] = ns
        else:
            t[3, idx] = ns | sum(w[s] << (4 + 4 * j) for j, s in enumerate(tracked))
    return t


_TABLES: dict[tuple, np.ndarray] = {}
MAX_TABLES = 2048  # objectives' tables kept in the process (about 1.5 MB each)


def _objective_key(objective: Objective) -> tuple | None:
    """What an objective's tables depend on, or None for an unknown kind."""
    from .solver import TricksObjective

    kind = type(objective)
    if kind is TricksObjective:
        return ("tricks",)
    if kind is NilObjective:
        return ("nil", objective.tracked)
    if kind is PointsObjective:
        o = objective
        return ("points", o.rules, o.bids, o.blind, o.tricks_won, o.scores, o.bags)
    return None


def shared_tables(objective: Objective, tricks_left: int) -> np.ndarray:
    """:func:`objective_tables`, made once per process for equal objectives (the
    bench's and UCT's many solvers of one objective share them)."""
    key = _objective_key(objective)
    if key is None:
        return objective_tables(objective, tricks_left)
    key = (*key, tricks_left)
    t = _TABLES.get(key)
    if t is None:
        if len(_TABLES) >= MAX_TABLES:
            _TABLES.clear()
        t = _TABLES[key] = objective_tables(objective, tricks_left)
    return t


# ----- the shared transposition table and the solver ----------------------------------

_table: tuple[np.ndarray, np.ndarray] | None = None
_generation = itertools.count(1)
MAX_GENERATION = 1 << 43  # fits the key; the table is wiped if it ever wraps


def _shared_table() -> tuple[np.ndarray, np.ndarray]:
    global _table
    if _table is None:
        _table = (
            np.full((1 << TT_BITS, 3), -1, dtype=np.int64),
            np.zeros((1 << TT_BITS, 4), dtype=np.int64),
        )
    return _table


def _new_generation() -> int:
    global _generation
    g = next(_generation)
    if g >= MAX_GENERATION:
        tt, _ = _shared_table()
        tt.fill(-1)
        _generation = itertools.count(2)
        g = 1
    return g


class CompiledSolver:
    """The drop-in for :class:`bots.solver.Solver`: the same objectives and values.

    Like the reference it keeps its table entries between calls (positions of
    one sampled deal share many); with the points objective only between
    positions with as many tricks left. :meth:`clear` forgets them.
    """

    def __init__(self, objective: Objective | None = None) -> None:
        from .solver import TricksObjective

        self.objective = objective or TricksObjective()
        self.bisect = type(self.objective) is TricksObjective
        self._tables: dict[int, np.ndarray] = {}
        self._values: dict[int, list[int]] = {}
        self._frames = np.zeros((64, 32), dtype=np.int64)
        self._moves = np.zeros((128, 16), dtype=np.int64)  # cards by depth, then lead keys
        self._frames[63, 1] = _new_generation()
        self._tricks_left: int | None = None
        self.nodes = 0

    def clear(self) -> None:
        self._frames[63, 1] = _new_generation()
        self._tricks_left = None

    def outcome_values(self, tricks_left: int) -> list[int]:
        """The objective's distinct values over every split of ``tricks_left`` tricks."""
        values = self._values.get(tricks_left)
        if values is None:
            t = self.tables(tricks_left)
            idx = [
                w[0] + 14 * w[1] + 196 * w[2] + 2744 * w[3]
                for n, w in _splits(tricks_left)
                if n == tricks_left
            ]
            values = self._values[tricks_left] = sorted({int(x) for x in t[0, idx]})
        return values

    def tables(self, tricks_left: int) -> np.ndarray:
        t = self._tables.get(tricks_left)
        if t is None:
            t = self._tables[tricks_left] = shared_tables(self.objective, tricks_left)
        return t

    def value(self, position: Position, alpha: int = -(10**9), beta: int = 10**9) -> int:
        """The minimax value (for North/South) of the objective from ``position``."""
        left = position.hands[position.leader].bit_count() + (1 if position.trick else 0)
        if left != self._tricks_left:
            if not self.objective.separable:  # keys count the outcome since the position
                self.clear()
            self._tricks_left = left
        t = self.tables(left)
        tt, tv = _shared_table()
        frames, moves = self._frames, self._moves
        frames[63, 0] = 0
        h = np.array(position.hands, dtype=np.int64)
        trick = position.trick
        alpha = max(alpha, -INF + 1)
        beta = min(beta, INF - 1)
        broken = int(position.spades_broken)
        if trick:
            best, winner = winning_card(position.leader, trick)
            live = int(h[0] | h[1] | h[2] | h[3])
            for c in trick:
                live |= 1 << c
            node = (position.leader, len(trick), trick[0] // 13, best, winner, broken, live)
        else:
            node = (position.leader, 0, 0, -1, position.leader, broken, 0)
        quick = int(self.bisect)
        if (self.bisect or left >= BISECT_FROM) and alpha <= t[1, 0] and beta > t[2, 0]:
            # Null windows: each search only asks "at least this value?", and the
            # value is one of the outcomes' values: a binary search over them.
            values = self.outcome_values(left)
            lo, hi = 0, len(values) - 1
            while lo < hi:
                m = values[(lo + hi + 1) // 2]
                v = _solve(h, *node, m - 1, m, quick, t, tt, tv, frames, moves)
                if v >= m:
                    lo = bisect.bisect_left(values, v)
                else:
                    hi = bisect.bisect_right(values, v) - 1
            v = values[lo]
        else:
            v = _solve(h, *node, alpha, beta, quick, t, tt, tv, frames, moves)
        self.nodes = int(frames[63, 0])
        return int(v)


def warm_up() -> None:
    """Compile the kernels, or load them from numba's cache, and allocate the shared
    table (about 0.8 s from the cache): a process that searches under a time
    budget calls it once at its start, so its first move does not pay for it."""
    from .solver import random_position

    started = time.perf_counter()
    CompiledSolver().value(random_position(random.Random(0), 3))
    # UCT's playout, deal and remembered-deal kernels (SRP's sampled cover uses
    # the first two)
    from . import sampling_compiled, srp_compiled, uct_compiled

    srp_compiled.warm_up()
    sampling_compiled.warm_up()
    uct_compiled.warm_up()
    _warmed.set()
    logging.getLogger(__name__).info("%s in %.1f s", KERNELS_READY, time.perf_counter() - started)


KERNELS_READY = "compiled search kernels ready"  # the log line a deployment can wait for


_warmed = threading.Event()
_warming_in: int | None = None  # the process whose thread is warming up
_warming_lock = threading.Lock()


def ready() -> bool:
    """Whether this process's kernels are compiled (or loaded) and searches may
    count on their speed."""
    return _warmed.is_set()


def warm_up_in_background() -> None:
    """:func:`warm_up` on a thread of its own, once per process (a forked child
    inherits no thread, so it starts its own)."""
    global _warming_in
    with _warming_lock:
        if _warmed.is_set() or _warming_in == os.getpid():
            return
        _warming_in = os.getpid()
    threading.Thread(target=warm_up, name="solver-warm-up", daemon=True).start()


def max_tricks(position: Position, partnership: int) -> int:
    """:func:`bots.solver.max_tricks`, compiled."""
    ns = CompiledSolver().value(position)
    left = position.hands[position.leader].bit_count() + (1 if position.trick else 0)
    return ns if partnership == 0 else left - ns


__all__ = [
    "CompiledSolver",
    "NilObjective",
    "PointsObjective",
    "max_tricks",
    "objective_tables",
    "ready",
    "warm_up",
    "warm_up_in_background",
]
