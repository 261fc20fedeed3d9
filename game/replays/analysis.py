"""Double-dummy analysis of a finished round's card play (pure: no Django).

Every position of the play, from the first lead to the last card, is solved
with the exact solver (:mod:`bots.solver_compiled`) twice: under the round's
points objective (the points gap North/South minus East/West at the round's
end, with the bids, nils, blind nils and bags as the round is scored, from
the tricks already taken on) and under the plain trick count. A card's loss
for its side is the side's best value from the position before it minus the
value after it; a best card loses 0, never less (the solver's value before
is the best over every legal card: a negative loss is raised as a bug).

The first lead under the two-of-clubs rule is forced, and the solver knows
nothing of that rule: it is given the position after the two of clubs, so
the forced card loses nothing.

The points search is bounded first by the trick count's value (the score is a
step function of the tricks, :mod:`bots.points_steps`): only the questions
it leaves open (a nil's, a bag's) are the points search's. A round has a
budget of CPU time (:data:`BUDGET_SECONDS`, the searches' thread's): a round
whose searches pass it is not analysed, and says so (an :class:`AnalysisError`,
which the stored analysis keeps as its error), rather than holding a core for
minutes (some nil rounds' first positions).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bots.points_steps import SteppedPoints
from bots.solver import PointsObjective, Position, TricksObjective
from bots.solver_compiled import CompiledSolver, SearchOverBudget
from game.engine.actions import Play
from game.engine.cards import SUIT_MASKS, cards_of, format_card
from game.engine.record import replay
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.tricks import trick_winner
from game.research.tally_keys import seat_sums

FORMAT = 1  # the stored analysis's format; a new one is analysed again
# A card's mark by the points it gives away: 0 none; a bag or two, a point or
# a few (SMALL_FROM up to LARGE_FROM - 1) small; a trick of a contract, a nil
# or a bag penalty (LARGE_FROM and more) large. The page states them.
SMALL_FROM = 1
LARGE_FROM = 10
SEATS = "NESW"
# A round's budget of CPU seconds for its play's searches: past it the round is
# marked "not analysed within the budget" (docs/bots.md has the counts).
BUDGET_SECONDS = 20.0
# The second pass's (every legal card at every card: several times the play's
# searches): past it the round keeps no alternatives, and says so.
ALTERNATIVES_BUDGET_SECONDS = 60.0
NODES_A_SECOND = 5_000_000  # a first guess at the search's speed, then measured


def mark_of(points_lost: int) -> str:
    if points_lost >= LARGE_FROM:
        return "large"
    return "small" if points_lost >= SMALL_FROM else "none"


class AnalysisError(ValueError):
    """A round that cannot be analysed (not finished, or its record does not replay)."""


class OverBudget(AnalysisError):
    """A round whose searches passed its budget: "not analysed within the budget"."""


@dataclass(frozen=True)
class Spot:
    """One position of the play: before the card played there."""

    index: int  # 0..51, the card's place in the round's play
    seat: int
    card: int  # the card played there
    hands: tuple[int, int, int, int]
    leader: int
    trick: tuple[int, ...]
    spades_broken: bool
    tricks_won: tuple[int, int, int, int]
    legal: int  # the legal cards as a mask
    forced_first: bool  # the two of clubs led under that rule

    @property
    def position(self) -> Position:
        return Position(self.hands, self.leader, self.trick, self.spades_broken)


def playing_start(doc: dict[str, Any]) -> tuple[RoundState, list[Play]]:
    """The round at its first lead (bids and passes applied) and its plays in order."""
    try:
        done = replay(doc)
    except ValueError as e:
        raise AnalysisError(f"the round's record does not replay: {e}") from None
    r = RoundState(
        done.rules,
        dealer=done.dealer,
        hands=list(done.hands_dealt),
        scores_before=done.scores_before,
        bags_before=done.bags_before,
        round_number=done.round_number,
    )
    plays = [a for a in done.actions if isinstance(a, Play)]
    for a in done.actions:
        if not isinstance(a, Play):
            r.apply(a)
    if r.phase is not Phase.PLAYING or len(plays) != 52:
        raise AnalysisError("the round is not a finished round of 13 tricks")
    return r, plays


def spots_of(doc: dict[str, Any]) -> tuple[RoundState, list[Spot]]:
    """The round at its first lead and every position of its play."""
    r, plays = playing_start(doc)
    start = r.copy()
    spots = []
    for i, play in enumerate(plays):
        spots.append(
            Spot(
                index=i,
                seat=r.to_act,
                card=play.card,
                hands=(r.hands[0], r.hands[1], r.hands[2], r.hands[3]),
                leader=r.leader,
                trick=tuple(r.trick),
                spades_broken=r.spades_broken,
                tricks_won=(r.tricks_won[0], r.tricks_won[1], r.tricks_won[2], r.tricks_won[3]),
                legal=r.legal_play_mask(),
                forced_first=r.two_of_clubs_lead(),
            )
        )
        r.apply(play)
    return start, spots


class Values:
    """The solver's values of positions of one round, one solver per objective
    (the points' trick questions asked of the trick count's); with ``budget``,
    CPU seconds from now for all of them."""

    def __init__(self, r: RoundState, budget: float | None = None) -> None:
        self.rules: Rules = r.rules
        self.bids = tuple(b if b is not None else 0 for b in r.bids)
        self.blind = tuple(r.blind)
        self.scores = r.scores_before
        self.bags = r.bags_before
        self.start_won = tuple(r.tricks_won)
        # One points solver for the whole round, its objective from the first
        # lead: each position is searched with the tricks taken since, so the
        # entries of every position (solved from the last card back) serve the
        # earlier ones. (Seed 1's slowest rounds: see docs/replays.md.)
        self._points = CompiledSolver(self._objective(self.start_won))
        self._tricks = CompiledSolver(TricksObjective())
        self._stepped = SteppedPoints(self._points, self._tricks)
        self.solves = 0
        self.budget = budget
        self._deadline = None if budget is None else time.thread_time() + budget
        self._nodes, self._seconds = 0, 0.0  # the searches' speed so far
        self.stops = 0  # searches stopped at their node limit and asked again

    def _objective(self, won: tuple[int, ...]) -> PointsObjective:
        return PointsObjective(self.rules, self.bids, self.blind, won, self.scores, self.bags)

    def after(self, spot: Spot, card: int) -> tuple[int, int]:
        """(North/South's points gap, North/South's tricks in the round) once
        ``card`` is played at ``spot`` and both sides play best from there."""
        hands = list(spot.hands)
        hands[spot.seat] &= ~(1 << card)
        trick = (*spot.trick, card)
        won = list(spot.tricks_won)
        leader, broken = spot.leader, spot.spades_broken or card >= 39
        if len(trick) == 4:
            leader = trick_winner(spot.leader, trick)
            won[leader] += 1
            trick = ()
        return self.at(tuple(hands), leader, trick, broken, tuple(won))

    def at(
        self,
        hands: tuple[int, int, int, int],
        leader: int,
        trick: tuple[int, ...],
        broken: bool,
        won: tuple[int, ...],
        known: tuple[int, int] | None = None,
    ) -> tuple[int, int]:
        """The values (as :meth:`after`) at a position; ``known``: the values the
        card played there left, which the best card's are at least as good as."""
        ns_won = won[0] + won[2]
        if not any(hands) and not trick:  # the round is over: its own score
            objective = self._objective(won)
            objective._remaining_total = 0
            return objective.value(0, [0] * len(objective.tracked)), ns_won
        position = Position(hands, leader, trick, broken)
        ns_to_act = position.to_act % 2 == 0
        self.solves += 2
        taken = tuple(w - s for w, s in zip(won, self.start_won, strict=True))
        gap = self._within_budget(self._stepped, position, ns_to_act, known and known[0], taken)
        tricks = self._within_budget(self._tricks, position, ns_to_act, known and known[1] - ns_won)
        return gap, ns_won + tricks

    def _within_budget(self, solver: Any, *args: Any) -> int:
        """:func:`_value` with a node limit of what the budget has left at the
        speed measured so far; a search stopped there is asked again (its table
        entries kept) while time is left."""
        if self._deadline is None:
            return _value(solver, *args)
        while True:
            now = time.thread_time()
            if now >= self._deadline:
                raise OverBudget(f"not analysed within the budget ({self.budget:g} s of CPU)")
            rate = self._nodes / self._seconds if self._seconds > 0.5 else NODES_A_SECOND
            limit = max(100_000, int((self._deadline - now) * rate))
            try:
                return _value(solver, *args, node_limit=limit)
            except SearchOverBudget:
                self.stops += 1
            finally:
                self._seconds += time.thread_time() - now
                self._nodes = self._stepped.total_nodes  # the nil objective's too

    def before(self, spot: Spot, after: tuple[int, int] | None = None) -> tuple[int, int]:
        """The values at ``spot`` under best play (the forced first lead: after it);
        ``after``, when given, those the card played there left."""
        if spot.forced_first:
            return after or self.after(spot, spot.card)
        hands, trick, broken = spot.hands, spot.trick, spot.spades_broken
        return self.at(hands, spot.leader, trick, broken, spot.tricks_won, after)


def _value(
    solver: CompiledSolver | SteppedPoints,
    position: Position,
    ns_to_act: bool,
    known: int | None,
    taken: tuple[int, ...] | None = None,
    node_limit: int | None = None,
) -> int:
    """The position's value for North/South (``taken``, ``node_limit``: as
    :meth:`CompiledSolver.value`). With ``known``, a value one of its cards
    leads to, one null-window search first asks whether the best is no better
    (most cards are the best or as good): then it is ``known``."""
    if known is None:
        return solver.value(position, taken=taken, node_limit=node_limit)
    proved: dict[str, int] = {}  # the null window's fail-soft bound beyond known
    if ns_to_act:  # the value is at least known: is it more?
        v = solver.value(position, known, known + 1, taken, node_limit)
        if v <= known:
            return known
        proved["floor"] = v
    else:
        v = solver.value(position, known - 1, known, taken, node_limit)
        if v >= known:
            return known
        proved["ceiling"] = v
    if node_limit is not None:  # one limit for both searches
        node_limit = max(1, node_limit - solver.nodes)
    if not isinstance(solver, CompiledSolver):  # the stepped points take the bound
        return solver.value(position, taken=taken, node_limit=node_limit, **proved)
    # (A search by null windows over the values beyond the bound this one gave
    # was no faster: seed 1's rounds 5, 12 and 20, 7.8 / 2.2 / 21.6 s CPU against
    # 7.6 / 2.3 / 21.3 s.)
    return solver.value(position, taken=taken, node_limit=node_limit)


def losses(spot: Spot, before: tuple[int, int], after: tuple[int, int]) -> tuple[int, int]:
    """(points, tricks) the card's side gives away: its best minus what is left."""
    sign = 1 if spot.seat % 2 == 0 else -1
    points = sign * (before[0] - after[0])
    tricks = sign * (before[1] - after[1])
    if points < 0 or tricks < 0:
        raise AssertionError(f"card {spot.index}: a loss below 0 ({points}, {tricks})")
    return points, tricks


def analyse_play(
    doc: dict[str, Any],
    first_trick: int = 1,
    progress: Callable[[int], None] | None = None,
    budget: float | None = BUDGET_SECONDS,
) -> dict[str, Any]:
    """Every card's losses from trick ``first_trick`` (1..13) on, and the round's
    value card by card. JSON-ready; ``values[i]`` and ``tricks[i]`` are North/South's
    points gap and tricks under best play before card ``i`` (``values[52]``: the
    round's points as played). Past ``budget`` CPU seconds (None: no limit), an
    :class:`AnalysisError`."""
    start, spots = spots_of(doc)
    solver = Values(start, budget)
    chosen = [s for s in spots if s.index >= 4 * (first_trick - 1)]
    values: list[int | None] = [None] * 53
    tricks: list[int | None] = [None] * 53
    cards = []
    last = spots[-1]
    values[52], tricks[52] = solver.after(last, last.card)
    after = None
    for spot in reversed(chosen):
        after = (values[spot.index + 1], tricks[spot.index + 1])
        before = solver.before(spot, after)
        values[spot.index], tricks[spot.index] = before
        if progress:
            progress(spot.index)
        points, lost = losses(spot, before, after)
        cards.append(
            {
                "seat": SEATS[spot.seat],
                "card": format_card(spot.card),
                "points_lost": points,
                "tricks_lost": lost,
                "mark": mark_of(points),
                "choices": spot.legal.bit_count(),
            }
        )
    cards.reverse()
    return {
        "format": FORMAT,
        "first_trick": first_trick,
        "cards": cards,
        "values": values,
        "tricks": tricks,
        "solves": solver.solves,
    }


def distinct_choices(spot: Spot) -> list[list[int]]:
    """The legal cards grouped by equal value: cards of one suit in one hand with
    no card between them still in another hand or on the current trick win and
    lose the same tricks (the lowest of each group is solved)."""
    live = 0
    for h in spot.hands:
        live |= h
    for c in spot.trick:
        live |= 1 << c
    others = live & ~spot.hands[spot.seat]
    groups: list[list[int]] = []
    for suit_mask in SUIT_MASKS:
        run: list[int] = []
        for c in cards_of(spot.legal & suit_mask):
            if run and others & ((1 << c) - (1 << (run[-1] + 1))):
                groups.append(run)
                run = []
            run.append(c)
        if run:
            groups.append(run)
    return groups


def alternatives(doc: dict[str, Any], index: int) -> list[dict[str, Any]]:
    """Each legal card at play ``index`` (0..51) with the values it leaves under
    best play: North/South's points gap and tricks, and what the acting side
    gives away with it. Highest value for the side first."""
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < 52:
        raise AnalysisError("a card's index is 0..51")
    start, spots = spots_of(doc)
    return alternatives_at(Values(start), spots[index])


def alternatives_at(solver: Values, spot: Spot) -> list[dict[str, Any]]:
    """:func:`alternatives` at one position, with the caller's solvers."""
    before = solver.before(spot)
    out = []
    for group in distinct_choices(spot):
        after = solver.after(spot, group[0])
        points, lost = losses(spot, before, after)
        for c in group:
            out.append(
                {
                    "card": format_card(c),
                    "value": after[0],
                    "tricks": after[1],
                    "points_lost": points,
                    "tricks_lost": lost,
                    "played": c == spot.card,
                }
            )
    out.sort(key=lambda a: (a["points_lost"], a["tricks_lost"], a["card"]))
    return out


def seat_losses(result: dict[str, Any]) -> dict[str, list[int]]:
    """:func:`seat_sums` with the cards each seat played: what ``RoundAnalysis.losses``
    keeps for the dashboard's tallies (``game.research.tally_keys.quality_cells``)."""
    cards = [0, 0, 0, 0]
    for c in result["cards"]:
        cards[SEATS.index(c["seat"])] += 1
    return {"cards": cards, **seat_sums(result)}
