"""An exact endgame solver for Spades: full information, best play by both sides.

A :class:`Position` is four known hands (``k`` cards each at a trick's start,
or fewer for the seats that already played to the current trick), the
current trick's cards, its leader and whether spades are broken. The solver
is a two-team zero-sum minimax (North/South maximise, East/West minimise) over
the value of the final outcome, with

* alpha-beta pruning and a cheap move ordering (a follower not covered by its
  partner tries its cheapest winning card first, then its lowest losers; a
  leader tries its spades high to low, then its other cards high to low);
* a transposition table at each trick's start, keyed by the four hands, the
  leader, the spades-broken flag and whatever part of the outcome so far the
  objective still depends on, storing lower/upper bounds;
* for the points objective, a cut at each trick's start when the least or
  greatest value any split of the remaining tricks could give already
  decides the window (a third fewer nodes on UCT's 5-card deals);
* equivalent cards merged: two cards of one hand in one suit with no card
  between them left in any hand or on the current trick win and lose the same
  tricks, so only the lowest of each such run is searched.

Objectives (each a value of the final outcome; ``ns`` below is the number of
tricks North/South take from the position on):

* :class:`TricksObjective` -- ``ns``: the plain double-dummy trick count
  (:func:`max_tricks` gives it for either partnership);
* :class:`NilObjective` -- lexicographic and zero-sum: a side with a live nil
  first keeps its nil bidder from taking any trick, then maximises its
  tricks; the other side first sets that nil, then maximises its own tricks.
  As one number: ``ns + 14 * (NS nils kept - EW nils kept)``
  (:func:`solve_nil` decodes it);
* :class:`PointsObjective` -- the round's points gap (NS round points minus
  EW's, from :func:`game.engine.scoring.score_round`), given the bids, the
  tricks already taken, the scores and the bags: what UCT scores a sampled
  deal by.

This is the readable reference: :mod:`bots.solver_compiled` computes the same
values compiled (tested equal on thousands of positions), tens of times faster,
and answers whole 13-card deals; UCT and PIMC use it.

The k limit. Measured with ``python -m bots.solver --bench --samples 200
--seed 1`` on two shared cores under a load of about 12 (CPU time of the
process; the wall clock was 1-3x that): median / p99 per position 1.1 / 6.5 ms
for the last 5 tricks, 4.0 / 52 ms for the last 6, 18 / 313 ms for the last 7
(wall-clock medians 1.3, 10.6 and 50 ms). :data:`K_LIMIT`
= 7 is the largest hand the solver is meant for within a per-call budget of
about half a second; UCT calls it with at most 5 cards per hand (a few
milliseconds with the points-gap objective).

>>> from game.engine.cards import parse_hand
>>> p = Position((parse_hand("AS 2H"), parse_hand("KS 3H"), parse_hand("QS 4H"),
...               parse_hand("JS 5H")), leader=0, trick=(), spades_broken=True)
>>> max_tricks(p, 0), max_tricks(p, 1)
(1, 1)
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence
from typing import NamedTuple

from game.engine.cards import SIDE_SUIT_MASK, SUIT_MASKS, Card, Hand, Seat
from game.engine.rules import Rules
from game.engine.scoring import score_round
from game.engine.tricks import BELOW, winning_card

K_LIMIT = 7  # the most cards per hand the solver is meant for (see the module docstring)
NIL_WEIGHT = 14  # a kept nil outweighs any number of tricks (at most 13)

_SIDE = SIDE_SUIT_MASK


class Position(NamedTuple):
    """A full-information position: every hand known."""

    hands: tuple[Hand, Hand, Hand, Hand]
    leader: Seat  # the seat that led (or leads) the current trick
    trick: tuple[Card, ...]  # cards already played to the current trick, leader's first
    spades_broken: bool

    @property
    def to_act(self) -> Seat:
        return (self.leader + len(self.trick)) & 3

    def check(self) -> None:
        """Raise ValueError unless the hand sizes fit the trick in progress."""
        h = self.hands
        if any(h[i] & h[j] for i in range(4) for j in range(i + 1, 4)):
            raise ValueError("a card is in two hands")
        if len(self.trick) > 3:
            raise ValueError("a trick in progress has at most 3 cards")
        n = h[self.leader].bit_count()
        for i in range(4):
            seat = (self.leader + i) & 3
            want = n + (1 if self.trick and i >= len(self.trick) else 0)
            if h[seat].bit_count() != want:
                raise ValueError("the hands do not match the trick in progress")


# ----- objectives -----------------------------------------------------------------
#
# The search carries ``acc``, a small int describing the outcome so far: bits
# 0-3 count North/South's tricks since the position, and above them each
# tracked seat has either a flag (took a trick) or a 4-bit trick count.


class Objective:
    """The value (for North/South) of the final outcome, as a function of ``acc``."""

    tracked: tuple[Seat, ...] = ()
    count_tracked = False  # 4-bit counts for tracked seats (else a took-a-trick flag)
    separable = True  # value = f(acc >> 4) + (acc & 15): the TT keys on acc >> 4 only

    def __init__(self) -> None:
        self._leaf: dict[int, int] = {}

    def increments(self) -> tuple[list[int], list[int]]:
        """Per winning seat: what to add to ``acc`` and what to OR into it."""
        inc = [1 if seat % 2 == 0 else 0 for seat in range(4)]
        flag = [0, 0, 0, 0]
        for j, seat in enumerate(self.tracked):
            if self.count_tracked:
                inc[seat] += 1 << (4 + 4 * j)
            else:
                flag[seat] = 1 << (4 + j)
        return inc, flag

    def tracked_tricks(self, acc: int) -> list[int]:
        """Tricks (or flags) each tracked seat took since the position."""
        width = 4 if self.count_tracked else 1
        return [(acc >> (4 + width * j)) & ((1 << width) - 1) for j in range(len(self.tracked))]

    def leaf(self, acc: int) -> int:
        v = self._leaf.get(acc)
        if v is None:
            v = self._leaf[acc] = self.value(acc & 15, self.tracked_tricks(acc))
        return v

    def value(self, ns_tricks: int, tracked: list[int]) -> int:
        raise NotImplementedError


class TricksObjective(Objective):
    """North/South's tricks from the position on."""

    def value(self, ns_tricks: int, tracked: list[int]) -> int:
        return ns_tricks


class NilObjective(Objective):
    """Nils first (each side keeps its own, sets the other's), then tricks."""

    def __init__(self, nil_seats: Sequence[Seat]) -> None:
        super().__init__()
        self.tracked = tuple(sorted(set(nil_seats)))

    def value(self, ns_tricks: int, tracked: list[int]) -> int:
        v = ns_tricks
        for seat, took in zip(self.tracked, tracked, strict=True):
            if not took:
                v += NIL_WEIGHT if seat % 2 == 0 else -NIL_WEIGHT
        return v


class PointsObjective(Objective):
    """North/South's round points minus East/West's at the end of the round.

    ``tricks_won`` are the tricks each seat took before the position; a nil
    bidder's tricks are counted one by one (they may be bags of their own).
    """

    count_tracked = True
    separable = False

    def __init__(
        self,
        rules: Rules,
        bids: Sequence[int],
        blind: Sequence[bool],
        tricks_won: Sequence[int],
        scores: tuple[int, int] = (0, 0),
        bags: tuple[int, int] = (0, 0),
    ) -> None:
        super().__init__()
        self.rules = rules
        self.bids = tuple(bids)
        self.blind = tuple(blind)
        self.tricks_won = tuple(tricks_won)
        self.scores = scores
        self.bags = bags
        self.tracked = tuple(s for s in range(4) if rules.nil and bids[s] == 0)

    def value(self, ns_tricks: int, tracked: list[int]) -> int:
        took = list(self.tricks_won)
        extra = dict(zip(self.tracked, tracked, strict=True))
        side_total = self._remaining_total
        for p, gained in ((0, ns_tricks), (1, side_total - ns_tricks)):
            seats = (p, p + 2)
            rest = gained
            for s in seats:
                if s in extra:
                    took[s] += extra[s]
                    rest -= extra[s]
            free = [s for s in seats if s not in extra]
            if free:
                took[free[0]] += rest
        ns, ew = score_round(self.rules, self.bids, self.blind, took, self.scores, self.bags)
        return ns.points - ew.points

    _remaining_total = 0  # set by the solver: tricks left from the position


# ----- the search -------------------------------------------------------------------


class Solver:
    """Alpha-beta with a transposition table; one instance per objective.

    The table is kept between calls on the same objective (positions of one
    sampled deal share much of it); :meth:`clear` empties it. With the points
    objective its entries key on the outcome since the position searched, so
    they carry over only between positions with as many tricks left (UCT's
    deals of one decision); a call from any other position starts afresh.
    """

    MAX_TABLE = 400_000  # entries kept before the table starts afresh (memory)

    def __init__(self, objective: Objective | None = None) -> None:
        self.objective = objective or TricksObjective()
        self.inc, self.flag = self.objective.increments()
        self.tt: dict[tuple, tuple[int, int]] = {}
        # (acc, tricks left) -> the least and greatest value still reachable.
        self.ranges: dict[tuple[int, int], tuple[int, int]] = {}
        self.nodes = 0
        self._tricks_left: int | None = None  # of the last points search

    def clear(self) -> None:
        self.tt.clear()
        self.ranges.clear()
        self._tricks_left = None

    def value(self, position: Position, alpha: int = -(10**9), beta: int = 10**9) -> int:
        """The minimax value (for North/South) of the objective from ``position``."""
        hands = list(position.hands)
        obj = self.objective
        if len(self.tt) > self.MAX_TABLE:
            self.clear()
        if isinstance(obj, PointsObjective):
            left = hands[position.leader].bit_count() + (1 if position.trick else 0)
            if left != self._tricks_left:
                obj._remaining_total = left
                obj._leaf.clear()
                self.clear()  # its tables key on the outcome since the position
                self._tricks_left = left
        trick = list(position.trick)
        broken = position.spades_broken
        if not trick:
            return self._trick(hands, position.leader, broken, 0, alpha, beta)
        best, winner = winning_card(position.leader, trick)
        live = hands[0] | hands[1] | hands[2] | hands[3]
        for c in trick:
            live |= 1 << c
        return self._node(hands, position.leader, broken, 0, trick, best, winner, alpha, beta, live)

    def _range(self, acc: int, n: int) -> tuple[int, int]:
        """The least and greatest leaf value over every split of ``n`` more
        tricks among the seats, after the outcome ``acc``."""
        key = (acc, n)
        found = self.ranges.get(key)
        if found is None:
            inc, flag, leaf = self.inc, self.flag, self.objective.leaf
            values = set()
            for w0 in range(n + 1):
                for w1 in range(n - w0 + 1):
                    for w2 in range(n - w0 - w1 + 1):
                        a = acc
                        for seat, won in enumerate((w0, w1, w2, n - w0 - w1 - w2)):
                            if won:
                                a = (a + won * inc[seat]) | flag[seat]
                        values.add(leaf(a))
            found = self.ranges[key] = (min(values), max(values))
        return found

    # A trick's start: the transposition table lives here.
    def _trick(
        self, h: list[int], leader: int, broken: bool, acc: int, alpha: int, beta: int
    ) -> int:
        n = h[leader].bit_count()
        obj = self.objective
        if n == 0:
            return obj.leaf(acc)
        if n == 1:  # the last trick plays itself
            w = leader
            best = h[leader].bit_length() - 1
            suit = best // 13
            for i in (1, 2, 3):
                seat = (leader + i) & 3
                c = h[seat].bit_length() - 1
                if c > best and (c >= 39 or c // 13 == suit):
                    best, w = c, seat
            return obj.leaf((acc + self.inc[w]) | self.flag[w])
        if obj.separable:
            offset = acc & 15
            key = (h[0], h[1], h[2], h[3], leader, broken, acc >> 4)
            if not obj.tracked:  # plain tricks: the value lies in [offset, offset + n]
                if offset + n <= alpha:
                    return offset + n
                if offset >= beta:
                    return offset
        else:
            # Whatever is still reachable may already decide the window.
            lo, hi = self._range(acc, n)
            if hi <= alpha or lo == hi:
                return hi
            if lo >= beta:
                return lo
            offset = 0
            key = (h[0], h[1], h[2], h[3], leader, broken, acc)
        entry = self.tt.get(key)
        if entry is not None:
            lo, hi = entry[0] + offset, entry[1] + offset
            if lo == hi or lo >= beta:
                return lo
            if hi <= alpha:
                return hi
            if lo > alpha:
                alpha = lo
            if hi < beta:
                beta = hi
        a0, b0 = alpha, beta
        live = h[0] | h[1] | h[2] | h[3]
        v = self._node(h, leader, broken, acc, [], -1, leader, alpha, beta, live)
        lo, hi = (entry[0], entry[1]) if entry is not None else (-(10**9), 10**9)
        r = v - offset
        if v <= a0:
            hi = min(hi, r)
        elif v >= b0:
            lo = max(lo, r)
        else:
            lo = hi = r
        self.tt[key] = (lo, hi)
        return v

    def _node(
        self,
        h: list[int],
        leader: int,
        broken: bool,
        acc: int,
        trick: list[int],
        best: int,
        winner: int,
        alpha: int,
        beta: int,
        live: int,
    ) -> int:
        """``live``: the cards in the hands and on the trick (the same all trick long)."""
        self.nodes += 1
        pos = len(trick)
        seat = (leader + pos) & 3
        hand = h[seat]
        if pos:
            legal = hand & SUIT_MASKS[trick[0] // 13] or hand
        elif broken:
            legal = hand
        else:
            legal = (hand & _SIDE) or hand
        # Equivalent cards: keep the lowest of each run (no live card between).
        reps = []
        m = legal
        while m:
            low = m & -m
            m ^= low
            c = low.bit_length() - 1
            below = live & BELOW[c]
            if below and legal >> (below.bit_length() - 1) & 1:
                continue
            reps.append(c)
        # Move ordering.
        if pos == 0:
            reps.sort(key=_LEAD_ORDER.__getitem__)
        elif (winner ^ seat) & 1:  # an opponent is winning: cheapest winner first
            win = []
            lose = []
            bs = best // 13
            for c in reps:
                if (c > best and (c // 13 == bs or c >= 39)) or (c >= 39 and best < 39):
                    win.append(c)
                else:
                    lose.append(c)
            reps = win + lose
        maximize = not seat & 1
        v = -(10**9) if maximize else 10**9
        for c in reps:
            h[seat] = hand ^ (1 << c)
            if (
                pos == 0
                or (c > best and (c // 13 == best // 13 or c >= 39))
                or (c >= 39 and best < 39)
            ):
                nb, nw = c, seat
            else:
                nb, nw = best, winner
            nbroken = broken or c >= 39
            if pos == 3:
                nacc = (acc + self.inc[nw]) | self.flag[nw]
                r = self._trick(h, nw, nbroken, nacc, alpha, beta)
            else:
                trick.append(c)
                r = self._node(h, leader, nbroken, acc, trick, nb, nw, alpha, beta, live)
                trick.pop()
            if maximize:
                if r > v:
                    v = r
                    if v > alpha:
                        alpha = v
            elif r < v:
                v = r
                if v < beta:
                    beta = v
            if alpha >= beta:
                break
        h[seat] = hand
        return v


def _rank_desc(card: int) -> int:
    """Lead order: spades high to low, then side-suit cards high to low
    (about 8% fewer nodes than rank alone on the last 6 tricks)."""
    return -(card % 13) - (20 if card >= 39 else 0)


_LEAD_ORDER: tuple[int, ...] = tuple(_rank_desc(c) for c in range(52))


# ----- the public functions ------------------------------------------------------------


def max_tricks(position: Position, partnership: int) -> int:
    """Tricks ``partnership`` (0 North/South, 1 East/West) takes from ``position``
    (the current trick included) when both sides play for tricks."""
    ns = Solver(TricksObjective()).value(position)
    if partnership == 0:
        return ns
    return _tricks_left(position) - ns


class NilResult(NamedTuple):
    ns_tricks: int  # North/South's tricks from the position under this play
    nil_balance: int  # NS nils kept minus EW nils kept (a single live nil: +1/-1 or 0)
    value: int  # ns_tricks + 14 * nil_balance


def solve_nil(position: Position, nil_seats: Sequence[Seat]) -> NilResult:
    """The nil-aware solution: each side first keeps its own live nils and sets
    the other side's (the ``nil_seats`` are the nil bidders not yet set), then
    maximises its tricks."""
    v = Solver(NilObjective(nil_seats)).value(position)
    balance, ns = divmod(v, NIL_WEIGHT)
    if ns > _tricks_left(position):  # e.g. v = -1: balance -1, ns 13 -> fix the carry
        balance, ns = balance + 1, ns - NIL_WEIGHT
    return NilResult(ns, balance, v)


def points_gap(position: Position, objective: PointsObjective, partnership: int = 0) -> int:
    """The best points gap ``partnership`` can force (its round points minus theirs)."""
    v = Solver(objective).value(position)
    return v if partnership == 0 else -v


def _tricks_left(position: Position) -> int:
    return position.hands[position.leader].bit_count() + (1 if position.trick else 0)


# ----- positions for tests and the benchmark ---------------------------------------------


def random_position(
    rng: random.Random,
    k: int,
    mid_trick: bool = False,
    spades_first: bool = False,
    trick_cards: int | None = None,
) -> Position:
    """A position from a random deal played out by random legal cards until each
    hand holds ``k`` cards, then ``trick_cards`` more (with ``mid_trick``, 1-3 at
    random). With ``spades_first`` nobody leads a spade while it has another suit."""
    deck = list(range(52))
    rng.shuffle(deck)
    hands = [0, 0, 0, 0]
    for i, c in enumerate(deck):
        hands[i & 3] |= 1 << c
    leader = rng.randrange(4)
    broken = False
    if trick_cards is None:
        trick_cards = rng.randint(1, 3) if mid_trick else 0
    target_plays = (13 - k) * 4 + trick_cards
    trick: list[int] = []
    plays = 0
    while plays < target_plays:
        seat = (leader + len(trick)) & 3
        hand = hands[seat]
        if trick:
            legal = hand & SUIT_MASKS[trick[0] // 13] or hand
        elif broken:
            legal = hand
        else:
            legal = (hand & _SIDE) or hand
        options = [c for c in range(52) if legal >> c & 1]
        if spades_first and not trick:  # keep spades unbroken as long as possible
            options = [c for c in options if c < 39] or options
        c = rng.choice(options)
        hands[seat] ^= 1 << c
        broken = broken or c >= 39
        trick.append(c)
        plays += 1
        if len(trick) == 4:
            _, leader = winning_card(leader, trick)
            trick = []
    return Position((hands[0], hands[1], hands[2], hands[3]), leader, tuple(trick), broken)


def bench(ks: Sequence[int] = (2, 3, 4, 5, 6, 7), samples: int = 200, seed: int = 1) -> list[dict]:
    """Time :func:`max_tricks` (a fresh table per position) on random positions at
    a trick's start, for the side to lead. Returns one row per k."""
    rows = []
    for k in ks:
        rng = random.Random(f"solver-bench/{seed}/{k}")
        times = []
        cpu = []
        nodes = []
        for _ in range(samples):
            p = random_position(rng, k)
            s = Solver(TricksObjective())
            c0 = time.process_time()
            t0 = time.perf_counter()
            s.value(p)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            nodes.append(s.nodes)
        times.sort()
        cpu.sort()
        rows.append(
            {
                "k": k,
                "samples": samples,
                "seed": seed,
                "median_ms": statistics.median(times) * 1000,
                "p99_ms": times[min(len(times) - 1, int(0.99 * len(times)))] * 1000,
                "max_ms": times[-1] * 1000,
                "median_cpu_ms": statistics.median(cpu) * 1000,
                "p99_cpu_ms": cpu[min(len(cpu) - 1, int(0.99 * len(cpu)))] * 1000,
                "median_nodes": statistics.median(nodes),
            }
        )
    return rows


def format_bench(rows: list[dict]) -> str:
    lines = [
        "exact endgame solver (tricks objective, fresh table per position)",
        "wall-clock ms, and CPU ms of this process (the same on an idle machine)",
        f"{'k':>2} {'samples':>7} {'median':>8} {'p99':>8} {'max':>8}"
        f" {'cpu med':>8} {'cpu p99':>8} {'nodes':>7}",
    ]
    for r in rows:
        lines.append(
            f"{r['k']:>2} {r['samples']:>7} {r['median_ms']:>8.2f} {r['p99_ms']:>8.2f}"
            f" {r['max_ms']:>8.2f} {r['median_cpu_ms']:>8.2f} {r['p99_cpu_ms']:>8.2f}"
            f" {r['median_nodes']:>7.0f}"
        )
    lines.append(f"seed {rows[0]['seed'] if rows else '-'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bots.solver", description=__doc__)
    parser.add_argument("--bench", action="store_true", help="time the solver per k")
    parser.add_argument("--samples", type=int, default=200, help="positions per k (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--k", default="2,3,4,5,6,7", help="cards per hand, e.g. 2,3,4,5,6,7")
    opts = parser.parse_args(argv)
    if not opts.bench:
        parser.print_help()
        return 0
    ks = [int(x) for x in opts.k.split(",") if x.strip()]
    print(format_bench(bench(ks, opts.samples, opts.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
