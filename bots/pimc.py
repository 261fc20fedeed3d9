"""Perfect-information Monte Carlo play (GIB's method): sample, solve each deal, average.

For the seat to play, each sample deals the unseen cards consistently with
what the seat knows (hand counts, voids shown, cards passed; with
``sampling="bids"``, the default, weighted by the bid-informed table of
:mod:`bots.bidinfo`), then for every choice at the root (equivalent cards
are one choice, as in UCT) solves the deal exactly after that card with the
points objective (:class:`bots.solver.PointsObjective`: the round's points
gap, given the bids, tricks taken, scores and bags), with the compiled solver
(:mod:`bots.solver_compiled`) asked the trick count first
(:class:`bots.points_steps.SteppedPoints`: the same values, most of them from a
trick count search). The card with the best mean gap over the samples is
played; every choice is solved on the same deals.

It stops on a time budget or a sample count, whichever comes first; a deal
the deadline cuts short is left out (under a budget a solve also stops at a
node limit from the time left, ``NODES_PER_SECOND``, since compiled code does
not see the clock). A player searches from the round's
first trick (``BIS+PIMC``); at a live table it gets the table's budget on
the ``search`` queue (``game.driver.bot_turns``), with SRP's card as the fallback;
tournaments give it a fixed sample count (``SPADES_PIMC_SAMPLES``).

Known limits of the method (Frank and Basin's strategy fusion and
non-locality): each deal is solved as if every hand were seen, so the search
cannot value keeping options open or concealing a holding.
"""

from __future__ import annotations

import math
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any

from game.engine.cards import Card, Hand
from game.engine.state import Phase
from game.engine.tricks import winning_card
from game.engine.view import SeatView

from . import bidinfo
from .knowledge import Knowledge
from .points_steps import SteppedPoints
from .sampling import Sampler, WeightedSampler
from .solver import PointsObjective, Position, TricksObjective
from .solver_compiled import CompiledSolver, SearchOverBudget
from .uct import DEFAULT_BUDGET, SAMPLINGS, UCT, root_choices

# Under a time budget each solve gets a node limit from the time left: compiled
# code cannot see the clock, and one deal of a nil round can take minutes to
# solve. The points objective ran a median 4.8M nodes a second at the first
# trick here (11 deals, 2.4-5.8M, two cores, November 2026); a little under it,
# so that a solve stops near the deadline rather than past it.
NODES_PER_SECOND = 4_000_000

# Tournaments: a fixed sample count (reproducible by seed), else the time budget.
DEFAULT_SAMPLES: int | None = (
    int(os.environ["SPADES_PIMC_SAMPLES"]) if os.environ.get("SPADES_PIMC_SAMPLES") else None
)


@dataclass
class PIMCResult:
    card: Card
    samples: int  # deals solved for every choice
    means: dict[Card, float]  # mean points gap (our side's) per root choice
    solver_calls: int
    elapsed: float  # seconds
    equivalents: dict[Card, list[Card]] = field(default_factory=dict)


class PIMCSearch:
    """One decision: build it from the view of the seat to play, then :meth:`run`."""

    def __init__(self, view: SeatView, sampling: str = "bids") -> None:
        if view.seat is None or view.phase is not Phase.PLAYING or view.to_act != view.seat:
            raise ValueError("PIMC searches for the seat to play")
        if sampling not in SAMPLINGS:
            raise ValueError(f"sampling is one of {', '.join(SAMPLINGS)}")
        self.view = view
        self.seat = view.seat
        self.knowledge = Knowledge(view)
        self.sampler: Sampler | WeightedSampler
        if sampling == "bids":
            weights = bidinfo.load().weights_for(view)
            self.sampler = WeightedSampler.from_view(view, weights, self.knowledge)
        else:
            self.sampler = Sampler.from_view(view, self.knowledge)
        legal = 0
        for a in view.legal_actions:
            card = getattr(a, "card", None)
            if card is not None:
                legal |= 1 << card
        self.groups = root_choices(view, self.knowledge, legal)
        self.bids = [b if b is not None else 0 for b in view.bids]
        # One points solver per tricks-won split after the root card (it
        # completes a trick or not): its tables carry over between the deals.
        # Each asks the trick count first (the score is a step function of the
        # tricks), of one trick count solver that every split shares.
        self.tricks = CompiledSolver(TricksObjective())
        self.solvers: dict[tuple[int, ...], SteppedPoints] = {}
        self.solver_calls = 0

    def gap_after(self, hands: list[Hand], card: Card, node_limit: int | None = None) -> int:
        """Our side's points gap at the round's end when ``card`` is played in the
        deal ``hands`` and both sides then play perfectly, seeing every hand
        (raises :class:`SearchOverBudget` past ``node_limit`` nodes)."""
        v = self.view
        after = list(hands)
        after[self.seat] ^= 1 << card
        trick = [*v.trick, card]
        leader = v.leader
        won = list(v.tricks_won)
        if len(trick) == 4:
            _, leader = winning_card(leader, trick)
            won[leader] += 1
            trick = []
        key = tuple(won)
        solver = self.solvers.get(key)
        if solver is None:
            objective = PointsObjective(v.rules, self.bids, v.blind, won, v.scores, v.bags)
            solver = self.solvers[key] = SteppedPoints(CompiledSolver(objective), self.tricks)
        position = Position(
            (after[0], after[1], after[2], after[3]),
            leader,
            tuple(trick),
            v.spades_broken or card >= 39,
        )
        self.solver_calls += 1
        gap = solver.value(position, node_limit=node_limit)
        return gap if self.seat % 2 == 0 else -gap

    def run(
        self, rng: random.Random, budget: float | None = DEFAULT_BUDGET, samples: int | None = None
    ) -> PIMCResult:
        if budget is None and samples is None:
            raise ValueError("give a time budget or a sample count")
        start = time.perf_counter()
        deadline = start + budget if budget is not None else math.inf
        choices = list(self.groups)
        totals = dict.fromkeys(choices, 0.0)
        n = 0
        while len(choices) > 1 and (samples is None or n < samples):
            hands = self.sampler.sample(rng)
            gaps = []
            for card in choices:
                left = deadline - time.perf_counter()
                if left <= 0:
                    break
                limit = None if math.isinf(left) else max(1, int(left * NODES_PER_SECOND))
                try:
                    gaps.append(self.gap_after(hands, card, limit))
                except SearchOverBudget:
                    break
            if len(gaps) < len(choices):
                break  # the deadline cut this deal short: left out
            for card, gap in zip(choices, gaps, strict=True):
                totals[card] += gap
            n += 1
        means = {c: totals[c] / n for c in choices} if n else {}
        best = max(means, key=lambda c: (means[c], -c)) if means else choices[0]
        return PIMCResult(
            card=best,
            samples=n,
            means=means,
            solver_calls=self.solver_calls,
            elapsed=time.perf_counter() - start,
            equivalents=self.groups,
        )


class PIMC(UCT):
    """Perfect-information Monte Carlo from the round's first trick.

    It keeps UCT's interface (``needs_search``, ``play_within``: the bot
    driver sends UCT players' searches to the ``search`` queue) and its SRP
    fallback; only the search differs."""

    def __init__(
        self, budget: float | None = None, samples: int | None = None, sampling: str = "bids"
    ) -> None:
        super().__init__(tricks=13, budget=budget, sampling=sampling)
        self.samples = samples
        self.name = "PIMC" + ("u" if sampling == "uniform" else "")
        self.last_pimc: PIMCResult | None = None

    def search_count(self) -> int | None:
        """The deals a search solves (None: the clock alone bounds it)."""
        return self.samples if self.samples is not None else DEFAULT_SAMPLES

    def new_search(self, view: SeatView) -> PIMCSearch:
        return PIMCSearch(view, sampling=self.sampling)

    def searched_card(
        self, search: Any, rng: random.Random, budget: float | None, count: int | None
    ) -> int | None:
        """The best card on average over the sampled deals; None (SRP's card)
        when not even one deal was solved for every choice."""
        result = self.last_pimc = search.run(rng, budget, count)
        return result.card if result.samples else None
