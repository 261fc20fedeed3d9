"""A match: rounds dealt from one seed until a partnership reaches a goal.

>>> m = Match(Rules(winning_goal=200, losing_goal=-100), seed="doc")
>>> m.round.round_number, m.round.dealer == m.first_dealer
(1, True)
"""

from __future__ import annotations

from .actions import Action
from .cards import Seat
from .deal import deal_hands, first_dealer, round_seed
from .rules import Rules
from .state import IllegalAction, Phase, RoundState


def match_winner(rules: Rules, scores: tuple[int, int], rounds: int = 0) -> int | None:
    """The winning partnership after ``rounds`` rounds, or None when play goes on.

    At or above the winning goal wins (the higher score if both are; an exact
    tie plays on). Otherwise at or below the losing goal loses, unless both
    are, when the higher score wins (a tie plays on). With a round limit, the
    higher score wins once that many rounds are played (a tie plays on).
    """
    a, b = scores
    a_up, b_up = a >= rules.winning_goal, b >= rules.winning_goal
    if a_up or b_up:
        if a_up and b_up:
            return None if a == b else (0 if a > b else 1)
        return 0 if a_up else 1
    a_down, b_down = a <= rules.losing_goal, b <= rules.losing_goal
    if a_down and b_down:
        return None if a == b else (0 if a > b else 1)
    if a_down:
        return 1
    if b_down:
        return 0
    if rules.round_limit and rounds >= rules.round_limit and a != b:
        return 0 if a > b else 1
    return None


class Match:
    """Rounds until a winner. ``apply`` deals the next round as one ends."""

    def __init__(self, rules: Rules, seed: int | str, dealer: Seat | None = None) -> None:
        self.rules = rules
        self.seed = seed  # never sent to a client
        self.first_dealer: Seat = first_dealer(seed) if dealer is None else dealer
        self.scores: tuple[int, int] = (0, 0)
        self.bags: tuple[int, int] = (0, 0)
        self.rounds: list[RoundState] = []
        self.winner: int | None = None
        self.version = 0  # actions applied so far
        self._deal_round()

    @property
    def round(self) -> RoundState:
        """The round being played (the last one, once the match is over)."""
        return self.rounds[-1]

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    def _deal_round(self) -> None:
        n = len(self.rounds) + 1
        self.rounds.append(
            RoundState(
                self.rules,
                dealer=(self.first_dealer + n - 1) & 3,
                hands=deal_hands(round_seed(self.seed, n)),
                scores_before=self.scores,
                bags_before=self.bags,
                round_number=n,
            )
        )

    def copy(self) -> Match:
        """An independent copy: finished rounds are shared (they never change)."""
        new = Match.__new__(Match)
        new.__dict__.update(self.__dict__)
        new.rounds = [*self.rounds[:-1], self.rounds[-1].copy()]
        return new

    def apply(self, action: Action) -> None:
        """Apply an action to the current round (raises IllegalAction)."""
        if self.winner is not None:
            raise IllegalAction("the match is over")
        r = self.round
        r.apply(action)
        self.version += 1
        if r.phase is Phase.DONE:
            self._end_round(r)

    def _end_round(self, r: RoundState) -> None:
        assert r.result is not None
        ns, ew = r.result
        self.scores = (ns.score_after, ew.score_after)
        self.bags = (ns.bags_after, ew.bags_after)
        self.winner = match_winner(self.rules, self.scores, len(self.rounds))
        if self.winner is None:
            self._deal_round()
