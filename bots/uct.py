"""Determinized UCT for the playing phase (the BIS paper, appendix F.3, Algorithm 2).

Each iteration:

1. deals the unseen cards uniformly among the deals consistent with what the
   seat knows for certain (hand counts, voids shown, cards it passed in a
   blind nil exchange: :mod:`bots.sampling`), or with ``sampling="bids"``
   weighted by the bid-informed card-location table (:mod:`bots.bidinfo`),
   under the same constraints;
2. picks the card to play at the root by UCB1, ``mean + C * sqrt(ln n / n_i)``
   (rewards are points gaps divided by ``reward_scale``; a card not yet tried
   is tried first); cards that are equivalent whatever the unseen deal (no
   unplayed card between them) are one choice. With ``root="paired"`` every
   choice is played on each sampled deal instead (see :data:`ROOTS`);
3. plays the sampled deal on with a default policy (SRP by default, as the
   paper's implementation; ``policy="fast"`` is a cheap rule of thumb) until
   every hand holds at most ``solver_k`` cards, then solves the rest exactly
   (:mod:`bots.solver`, points-gap objective, both sides seeing the sampled
   deal);
4. scores the outcome by the points gap at the end of the round: our
   partnership's round points minus theirs (:func:`game.engine.scoring.score_round`).

It stops on a time budget (seconds) or an iteration budget, whichever comes
first, and returns the card with the best mean with its statistics.

The players ``UCT3``, ``UCT5`` ... ``UCT13`` play SRP until the last 3, 5 ...
13 tricks, then search (``UCT3b`` ... ``UCT13b``: with bid-informed sampling;
``UCT3p`` ... ``UCT13p``: paired root; the windows are
:data:`bots.registry.SEARCH_WINDOWS`). Their budget is
:data:`DEFAULT_BUDGET` seconds per move unless given to the constructor (or
:data:`DEFAULT_ITERATIONS` iterations). At a live table
:meth:`UCT.play_within` gets the table's budget (``game.driver.bot_turns``).

Measured (CPU time of the process on a shared, loaded machine; 9-10
positions each, BIS+SRP bidding and play up to the position): with 3 tricks
left about 9,800 iterations per CPU second, with 5 left about 690, with 7 left
about 220 (SRP playouts for the first two tricks; 270 with ``policy="fast"``).
An SRP card in a playout costs about 0.05 ms, so the solver dominated and SRP
stays the default policy. The solves now run compiled
(:mod:`bots.solver_compiled`, ``solver="reference"`` for the pure-Python one:
the same values, so the same search): 12x the iterations with 5 tricks left,
2.3x with 13 left, where SRP's playouts then took most of the time. So
SRP's playout cards and the deal samplers run compiled too
(:mod:`bots.srp_compiled`, :mod:`bots.sampling_compiled`; ``playout="reference"``
keeps the Python ones): both draw from one SplitMix64 stream seeded by the
search's rng, so either makes the same search (docs/bots.md, "Compiled search").
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from game.engine.cards import SIDE_SUIT_MASK, SUIT_MASKS, Card, Hand
from game.engine.scoring import score_round
from game.engine.state import Phase, RoundState
from game.engine.tricks import BELOW, beats, winning_card
from game.engine.view import SeatView, view_for

from . import bidinfo, srp_compiled, uct_compiled
from .base import Player
from .knowledge import Knowledge, lowest
from .sampling import ImpossibleDeal, Sampler, WeightedSampler
from .sampling_compiled import CompiledSampler, SplitMixRandom
from .solver import PointsObjective, Position, Solver
from .solver_compiled import CompiledSolver
from .srp import SRP

# The registered UCT players' budget per move: seconds, and optionally a number
# of iterations instead (reproducible by seed). Set them here at run time, or
# with SPADES_UCT_BUDGET / SPADES_UCT_ITERATIONS in the environment (e.g. for
# ``manage.py tournament``).
DEFAULT_BUDGET = float(os.environ.get("SPADES_UCT_BUDGET", "1.0"))
DEFAULT_ITERATIONS: int | None = (
    int(os.environ["SPADES_UCT_ITERATIONS"]) if os.environ.get("SPADES_UCT_ITERATIONS") else None
)
DEFAULT_C = 0.4  # UCB1 exploration constant, in units of reward_scale points
DEFAULT_REWARD_SCALE = 100.0  # a reward is (points gap) / reward_scale
# The compiled loop of remembered deals (bots.uct_compiled) looks at the clock
# this often: a few hundred microseconds of iterations.
CLOCK_EVERY = 256
DEFAULT_SOLVER_K = 5  # solve exactly once every hand holds at most this many cards
# How the unseen cards are dealt: "uniform" among the consistent deals, or
# "bids": weighted by the bid-informed card-location table (bots.bidinfo).
SAMPLINGS = ("uniform", "bids")
# How the root's cards share the iterations: "ucb" (the paper's Algorithm 2: one
# card per sampled deal, chosen by UCB1) or "paired": every card on each sampled
# deal, so two cards are compared on the same deals. Early in a round a deal's
# luck swings the points gap far more than the card does; on the same deals the
# two best cards' difference has half the standard error (median 1.99 over 20
# positions with 7-13 tricks left: manage.py search_regret, docs/bots.md).
ROOTS = ("ucb", "paired")
# Which exact solver ends a playout: the compiled one (bots/solver_compiled.py) or
# the pure-Python reference (bots/solver.py). Both give the same values, so a
# search with a fixed iteration count and seed makes the same choice with either.
SOLVERS = ("compiled", "reference")
# How a playout plays SRP's cards and how the deals are drawn: compiled kernels
# (bots/srp_compiled.py, bots/sampling_compiled.py) or the Python references
# (bots/srp.py, bots/sampling.py). Both draw from one SplitMix64 stream seeded
# from the search's rng, so a search with a fixed iteration count and seed makes
# the same choice with either.
PLAYOUTS = ("compiled", "reference")


@dataclass
class SearchResult:
    card: Card
    iterations: int
    samples: int  # deals sampled (one per iteration)
    visits: dict[Card, int]  # per root choice (the lowest card of its equivalent run)
    means: dict[Card, float]  # mean points gap per root choice
    solver_calls: int
    elapsed: float  # seconds
    equivalents: dict[Card, list[Card]] = field(default_factory=dict)


def root_choices(view: SeatView, k: Knowledge, legal: Hand) -> dict[Card, list[Card]]:
    """The legal cards grouped by equivalence: no unplayed card (held by anyone
    or on the current trick) lies between them. Keyed by the lowest of each run."""
    live = k.hand | k.unseen
    for c in view.trick:
        live |= 1 << c
    groups: dict[Card, list[Card]] = {}
    head = -1
    m = legal
    while m:
        low = m & -m
        m ^= low
        c = low.bit_length() - 1
        below = live & BELOW[c]
        if head >= 0 and below and legal >> (below.bit_length() - 1) & 1:
            groups[head].append(c)
            continue
        head = c
        groups[c] = [c]
    return groups


def _state_from_view(view: SeatView, hands: list[Hand]) -> RoundState:
    """A full :class:`RoundState` for one sampled deal, at the view's position."""
    return RoundState.in_play(
        view.rules,
        view.dealer,
        hands,
        round_number=view.round_number,
        scores_before=view.scores,
        bags_before=view.bags,
        blind_nil_eligible=view.blind_nil_eligible,
        bids=view.bids,
        blind=view.blind,
        bid_order=view.bid_order,
        tricks=view.tricks,
        trick=view.trick,
        leader=view.leader,
        to_act=view.to_act,
        tricks_won=view.tricks_won,
        spades_broken=view.spades_broken,
    )


def fast_policy(r: RoundState) -> Card:
    """A cheap default policy: cover partner's winning card low, else win as
    cheaply as possible, else play low; lead the highest card of the longest suit."""
    legal = r.legal_play_mask()
    if not legal & (legal - 1):
        return lowest(legal)
    seat = r.to_act
    trick = r.trick
    if not trick:
        best_suit = max(range(4), key=lambda s: ((legal & SUIT_MASKS[s]).bit_count(), -s))
        return (legal & SUIT_MASKS[best_suit]).bit_length() - 1
    best, winner = winning_card(r.leader, trick)
    if (winner ^ seat) & 1:
        m = legal
        while m:
            low = m & -m
            c = low.bit_length() - 1
            if beats(c, best):
                return c
            m ^= low
    # Cannot win or partner is winning: lowest, side suits before spades.
    side = legal & SIDE_SUIT_MASK
    pool = side or legal
    return min((c for c in range(52) if pool >> c & 1), key=lambda c: c % 13)


class UCTSearch:
    """One decision's search: build it from a view, then :meth:`run`."""

    def __init__(
        self,
        view: SeatView,
        c: float = DEFAULT_C,
        reward_scale: float = DEFAULT_REWARD_SCALE,
        solver_k: int = DEFAULT_SOLVER_K,
        policy: str = "srp",
        sampling: str = "uniform",
        root: str = "ucb",
        solver: str = "compiled",
        playout: str = "compiled",
    ) -> None:
        if view.seat is None or view.phase is not Phase.PLAYING or view.to_act != view.seat:
            raise ValueError("UCT searches for the seat to play")
        if solver not in SOLVERS:
            raise ValueError(f"solver is one of {', '.join(SOLVERS)}")
        self.solver_class = CompiledSolver if solver == "compiled" else Solver
        if policy not in ("srp", "fast"):
            raise ValueError("policy is 'srp' or 'fast'")
        if sampling not in SAMPLINGS:
            raise ValueError(f"sampling is one of {', '.join(SAMPLINGS)}")
        if root not in ROOTS:
            raise ValueError(f"root is one of {', '.join(ROOTS)}")
        if playout not in PLAYOUTS:
            raise ValueError(f"playout is one of {', '.join(PLAYOUTS)}")
        self.root = root
        self.view = view
        self.seat = view.seat
        self.c = c
        self.reward_scale = reward_scale
        self.solver_k = solver_k
        self.policy = policy
        self.knowledge = Knowledge(view)
        self.sampling = sampling
        self.sampler: Sampler | WeightedSampler
        if sampling == "bids":
            table = bidinfo.load()
            self.sampler = WeightedSampler.from_view(view, table.weights_for(view), self.knowledge)
        else:
            self.sampler = Sampler.from_view(view, self.knowledge)
        legal = 0
        for a in view.legal_actions:
            card = getattr(a, "card", None)
            if card is not None:
                legal |= 1 << card
        self.legal = legal
        self.groups = root_choices(view, self.knowledge, legal)
        self.srp = SRP(cover_deals=0)  # the playout policy: as the compiled SRP plays
        self.solver_calls = 0
        self.clock: Callable[[], float] = time.perf_counter
        bids = [b if b is not None else 0 for b in view.bids]
        self.bids = bids
        # One solver per tricks-won split at the solve: its table then carries
        # over between deals (positions with as many tricks left).
        self.solvers: dict[tuple[int, ...], Solver | CompiledSolver] = {}
        # When every hand already fits the solver, an iteration is a pure function
        # of (deal, root card): the deal space is small (3 tricks left: at most
        # 1,680 deals) and repeats, so remember each value instead of re-solving.
        self.memo: dict[tuple[Card, int, int, int, int], float] | None = (
            {} if max(view.hand_counts) <= solver_k else None
        )
        # The compiled playout plays SRP only (policy "fast" stays in Python) and
        # always ends in a solve (solver_k >= 1).
        self.compiled = playout == "compiled" and policy == "srp" and solver_k >= 1
        if self.compiled:
            self.kernel_sampler = CompiledSampler(self.sampler)
            self.template = srp_compiled.state_of_view(view)
            self.sure_table = srp_compiled.sure_table()
            self.rows = np.zeros((len(self.groups), srp_compiled.STATE_SIZE), dtype=np.int64)
            self.hands = np.zeros(4, dtype=np.int64)
            self.stream = np.zeros(1, dtype=np.uint64)
        self.remembered: uct_compiled.Remembered | None = None

    def run(
        self,
        rng: random.Random,
        budget: float | None = DEFAULT_BUDGET,
        iterations: int | None = None,
        clock: Callable[[], float] | None = None,
    ) -> SearchResult:
        """Search until the budget (seconds of ``clock``, by default the wall
        clock; calibrate_uct may pass the process's CPU time) or the iterations
        are spent."""
        if budget is None and iterations is None:
            raise ValueError("give a time budget or an iteration budget")
        self.clock = clock = clock or time.perf_counter
        start = clock()
        deadline = start + budget if budget is not None else math.inf
        choices = list(self.groups)
        visits = dict.fromkeys(choices, 0)
        totals = dict.fromkeys(choices, 0.0)
        n = samples = 0
        # One SplitMix64 stream draws the deals, compiled or in Python alike.
        seed = rng.getrandbits(64)
        if self.compiled:
            self.stream[0] = seed
        rng = SplitMixRandom(seed)
        if len(choices) > 1 and self.root == "paired":
            n, samples = self._run_paired(rng, deadline, iterations, visits, totals)
        elif len(choices) > 1 and self.compiled and self.memo is not None:
            n = samples = self._run_remembered(choices, deadline, iterations, visits, totals)
        elif len(choices) > 1:
            while (iterations is None or n < iterations) and clock() < deadline:
                card = self._select(choices, visits, totals, n)
                if self.compiled:
                    gap = self._simulate_compiled([card])[0]
                else:
                    gap = self._simulate(self.sampler.sample(rng), card, rng)
                visits[card] += 1
                totals[card] += gap
                n += 1
            samples = n
        means = {c: totals[c] / visits[c] for c in choices if visits[c]}
        best = max(means, key=lambda c: (means[c], visits[c], -c)) if means else choices[0]
        return SearchResult(
            card=best,
            iterations=n,
            samples=samples,
            visits=visits,
            means=means,
            solver_calls=self.solver_calls,
            elapsed=clock() - start,
            equivalents=self.groups,
        )

    def _run_paired(
        self,
        rng: random.Random,
        deadline: float,
        iterations: int | None,
        visits: dict[Card, int],
        totals: dict[Card, float],
    ) -> tuple[int, int]:
        """Every root card on each sampled deal, while the budget lasts; return
        (playouts, deals). An iteration budget counts playouts, so a paired and
        a UCB search of the same budget do the same work; it is spent in whole
        deals (at least one). A deal the deadline cuts short is left out, so
        every card's mean stands on the same deals."""
        choices = list(visits)
        n = deals = 0
        while iterations is None or n + len(choices) <= iterations or not deals:
            if self.compiled:
                gaps = self._simulate_compiled(choices, deadline)
                if gaps is None:
                    return n, deals
            else:
                gaps = []
                hands = self.sampler.sample(rng)
                for card in choices:
                    if self.clock() >= deadline:
                        return n, deals
                    gaps.append(self._simulate(hands, card, rng))
            for card, gap in zip(choices, gaps, strict=True):
                visits[card] += 1
                totals[card] += gap
            n += len(choices)
            deals += 1
        return n, deals

    @property
    def remembered_count(self) -> int:
        """How many (root card, deal) values the search has solved and kept: in the
        compiled loop's table, or the memo."""
        if self.remembered is not None:
            return int(self.remembered.used[0])
        return len(self.memo or ())

    def _run_remembered(
        self,
        choices: list[Card],
        deadline: float,
        iterations: int | None,
        visits: dict[Card, int],
        totals: dict[Card, float],
    ) -> int:
        """The UCB loop when every deal's value is remembered, compiled
        (:mod:`bots.uct_compiled`): the same choices, deals and values as the
        loop in :meth:`run`; the clock is read every ``CLOCK_EVERY`` iterations
        and after each solve. Returns the iterations made."""
        cards = np.array(choices, dtype=np.int64)
        seen = np.zeros(len(choices), dtype=np.int64)
        sums = np.zeros(len(choices), dtype=np.float64)
        if self.remembered is None:  # kept between runs, as the memo is
            self.remembered = uct_compiled.Remembered(self.kernel_sampler)
        table = self.remembered
        c, scale = float(self.c), float(self.reward_scale)
        n = 0
        while (iterations is None or n < iterations) and self.clock() < deadline:
            stop = n + CLOCK_EVERY if iterations is None else min(iterations, n + CLOCK_EVERY)
            n, j = table.run(self.stream, cards, seen, sums, n, stop, c, scale, self.hands)
            if j < 0:
                continue
            srp_compiled.play_out_all(
                self.template,
                self.hands,
                cards[j : j + 1],
                self.solver_k,
                self.rows,
                self.sure_table,
            )
            gap = self._solve_row(self.rows[0].tolist())
            table.add(choices[j], self.hands, gap)
            seen[j] += 1
            sums[j] += gap
            n += 1
        for j, card in enumerate(choices):
            visits[card], totals[card] = int(seen[j]), float(sums[j])
        return n

    def _select(
        self, choices: list[Card], visits: dict[Card, int], totals: dict[Card, float], n: int
    ) -> Card:
        for c in choices:
            if not visits[c]:
                return c
        log_n = math.log(n)
        scale = self.reward_scale
        best, best_v = choices[0], -math.inf
        for c in choices:
            v = totals[c] / visits[c] / scale + self.c * math.sqrt(log_n / visits[c])
            if v > best_v:
                best, best_v = c, v
        return best

    def _simulate(self, hands: list[Hand], card: Card, rng: random.Random) -> float:
        """Play ``card`` in the sampled deal, then the default policy, then the
        solver; return our partnership's points gap at the end of the round."""
        memo = self.memo
        if memo is not None:
            key = (card, hands[0], hands[1], hands[2], hands[3])
            gap = memo.get(key)
            if gap is None:
                gap = memo[key] = self._play_out(hands, card, rng)
            return gap
        return self._play_out(hands, card, rng)

    def _simulate_compiled(
        self, cards: list[Card], deadline: float = math.inf
    ) -> list[float] | None:
        """:meth:`_simulate` for each of ``cards`` on one deal drawn by the compiled
        sampler, the playouts compiled; None if the deadline comes before the
        last solve (the deal is then left out, as in the reference)."""
        if self.clock() >= deadline:
            return None
        hands = self.hands
        self.kernel_sampler.sample_into(self.stream, hands)
        memo = self.memo
        key_hands = tuple(hands.tolist()) if memo is not None else ()
        todo = []
        gaps: list[float] = [0.0] * len(cards)
        for i, card in enumerate(cards):
            if memo is not None:
                gap = memo.get((card, *key_hands))
                if gap is not None:
                    gaps[i] = gap
                    continue
            todo.append(i)
        if todo:
            picked = np.array([cards[i] for i in todo], dtype=np.int64)
            rows = self.rows[: len(todo)]
            srp_compiled.play_out_all(
                self.template, hands, picked, self.solver_k, rows, self.sure_table
            )
            for i, row in zip(todo, rows.tolist(), strict=True):
                if self.clock() >= deadline:
                    return None
                gaps[i] = gap = self._solve_row(row)
                if memo is not None:
                    memo[(cards[i], *key_hands)] = gap
        return gaps

    def _solve_row(self, row: list[int]) -> float:
        """The points gap from a compiled playout's end (a state array's fields)."""
        won = tuple(row[srp_compiled.WON : srp_compiled.WON + 4])
        if row[srp_compiled.DONE] == 13:  # the round ended before a solve
            v = self.view
            ns, ew = score_round(v.rules, self.bids, v.blind, list(won), v.scores, v.bags)
            gap = ns.points - ew.points
            return gap if self.seat % 2 == 0 else -gap
        pos = row[srp_compiled.POS]
        trick = tuple(row[srp_compiled.TRICK : srp_compiled.TRICK + pos])
        return self._solve_at(
            (row[0], row[1], row[2], row[3]),
            row[srp_compiled.LEADER],
            trick,
            bool(row[srp_compiled.BROKEN]),
            won,
        )

    def _play_out(self, hands: list[Hand], card: Card, rng: random.Random) -> float:
        r = _state_from_view(self.view, hands)
        r.play_card(card)
        while r.phase is Phase.PLAYING:
            if max(h.bit_count() for h in r.hands) <= self.solver_k:
                return self._solve(r)
            if self.policy == "srp":
                c = self.srp.play(view_for(r, r.to_act), rng)
            else:
                c = fast_policy(r)
            r.play_card(c)
        assert r.result is not None
        ns, ew = r.result
        gap = ns.points - ew.points
        return gap if self.seat % 2 == 0 else -gap

    def _solve(self, r: RoundState) -> float:
        hands = (r.hands[0], r.hands[1], r.hands[2], r.hands[3])
        return self._solve_at(hands, r.leader, tuple(r.trick), r.spades_broken, tuple(r.tricks_won))

    def _solve_at(
        self,
        hands: tuple[Hand, Hand, Hand, Hand],
        leader: int,
        trick: tuple[Card, ...],
        spades_broken: bool,
        won: tuple[int, ...],
    ) -> float:
        self.solver_calls += 1
        v = self.view
        solver = self.solvers.get(won)
        if solver is None:
            objective = PointsObjective(v.rules, self.bids, v.blind, won, v.scores, v.bags)
            solver = self.solvers[won] = self.solver_class(objective)
        gap = solver.value(Position(hands, leader, trick, spades_broken))
        return gap if self.seat % 2 == 0 else -gap


def uct_search(
    view: SeatView,
    rng: random.Random,
    budget: float | None = DEFAULT_BUDGET,
    iterations: int | None = None,
    c: float = DEFAULT_C,
    solver_k: int = DEFAULT_SOLVER_K,
    policy: str = "srp",
    sampling: str = "uniform",
    root: str = "ucb",
) -> SearchResult:
    """Search the position of ``view`` (the seat to play) and return the statistics."""
    search = UCTSearch(view, c=c, solver_k=solver_k, policy=policy, sampling=sampling, root=root)
    return search.run(rng, budget, iterations)


def time_left(budget: float | None, started: float) -> float | None:
    """What is left of ``budget`` seconds counted from ``started`` (perf_counter);
    None stays None (no time budget)."""
    return None if budget is None else max(0.0, budget - (time.perf_counter() - started))


class UCT(Player):
    """SRP until the last ``tricks`` tricks of the round, then determinized UCT.

    ``sampling="bids"`` deals the unseen cards by the bid-informed table
    (registry names ``UCT3b``, ``UCT5b`` ... ``UCT13b``); ``root="paired"``
    plays every root card on each sampled deal (``UCT3p`` ... ``UCT13p``)."""

    def __init__(
        self,
        tricks: int = 5,
        budget: float | None = None,
        iterations: int | None = None,
        c: float = DEFAULT_C,
        solver_k: int = DEFAULT_SOLVER_K,
        policy: str = "srp",
        sampling: str = "uniform",
        root: str = "ucb",
    ) -> None:
        if sampling not in SAMPLINGS:
            raise ValueError(f"sampling is one of {', '.join(SAMPLINGS)}")
        if root not in ROOTS:
            raise ValueError(f"root is one of {', '.join(ROOTS)}")
        self.tricks = tricks
        self.budget = budget
        self.iterations = iterations
        self.c = c
        self.solver_k = solver_k
        self.policy = policy
        self.sampling = sampling
        self.root = root
        self.name = (
            f"UCT{tricks}" + ("p" if root == "paired" else "") + ("b" if sampling == "bids" else "")
        )
        self.srp = SRP()
        self.last: SearchResult | None = None  # the last search's statistics

    def in_search_phase(self, view: SeatView) -> bool:
        """Is the round in its last ``tricks`` tricks (where this player searches)?"""
        return view.phase is Phase.PLAYING and 13 - len(view.tricks) <= self.tricks

    def needs_search(self, view: SeatView) -> bool:
        """Would :meth:`play` search here: the search phase, with more than one
        choice that matters? (Otherwise the move is immediate.)"""
        if not self.in_search_phase(view) or view.seat is None or view.to_act != view.seat:
            return False
        legal = 0
        for a in view.legal_actions:
            card = getattr(a, "card", None)
            if card is not None:
                legal |= 1 << card
        if legal & (legal - 1) == 0:
            return False
        return len(root_choices(view, Knowledge(view), legal)) > 1

    def play(self, view: SeatView, rng: random.Random) -> int:
        return self.play_within(view, rng, None)

    def settled_card(self, view: SeatView, rng: random.Random) -> int | None:
        """The card when there is nothing to search: SRP's outside the search
        phase, the only legal card; else None."""
        if not self.in_search_phase(view):
            return self.srp.play(view, rng)
        legal = [a.card for a in view.legal_actions if hasattr(a, "card")]
        if not legal:
            raise ValueError(f"{type(self).__name__} was asked to play with no legal card")
        return legal[0] if len(legal) == 1 else None

    def time_budget(self, budget: float | None, count: int | None) -> float | None:
        """The move's time budget: ``budget`` if given, else the player's own;
        None when only a fixed ``count`` (iterations, samples) bounds the search."""
        if budget is not None:
            return budget
        if self.budget is not None:
            return self.budget
        return None if count is not None else DEFAULT_BUDGET

    def play_within(self, view: SeatView, rng: random.Random, budget: float | None) -> int:
        """:meth:`play` with the time budget of this move in seconds (None: the
        player's own budget). A live table passes what is left of its bot time
        budget; if it ends before the search has a card, SRP plays. The budget
        counts from this call: setting the search up is part of it."""
        started = time.perf_counter()
        settled = self.settled_card(view, rng)
        if settled is not None:
            return settled
        count = self.search_count()
        budget = self.time_budget(budget, count)
        try:
            search = self.new_search(view)
        except ImpossibleDeal:  # cannot happen from a real view; never fail a move for it
            return self.srp.play(view, rng)
        if len(search.groups) == 1:
            return next(iter(search.groups))
        card = self.searched_card(search, rng, time_left(budget, started), count)
        return card if card is not None else self.srp.play(view, rng)

    def search_count(self) -> int | None:
        """The iterations a search may make (None: the clock alone bounds it)."""
        return self.iterations if self.iterations is not None else DEFAULT_ITERATIONS

    def new_search(self, view: SeatView) -> Any:
        """The search of this move (it may raise :class:`ImpossibleDeal`)."""
        return UCTSearch(
            view,
            c=self.c,
            solver_k=self.solver_k,
            policy=self.policy,
            sampling=self.sampling,
            root=self.root,
        )

    def searched_card(
        self, search: Any, rng: random.Random, budget: float | None, count: int | None
    ) -> int | None:
        """The search's card, or None when the budget ran out before every
        choice was tried once (a live table's time nearly spent): then SRP's
        card, not an untried one."""
        result = self.last = search.run(rng, budget, count)
        return result.card if all(result.visits.values()) else None
