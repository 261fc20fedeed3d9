"""The rule set a match is played under: every option real apps disagree on.

Defaults are partnership Spades as most players know it (see RULES.md).

>>> Rules().winning_goal, Rules(winning_goal=200, losing_goal=-100).losing_goal
(500, -100)
>>> Rules.from_dict(Rules(blind_nil=False).to_dict()) == Rules(blind_nil=False)
True
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

FirstLead = Literal["left_of_dealer", "two_of_clubs"]
FIRST_LEAD_CHOICES: tuple[str, ...] = ("left_of_dealer", "two_of_clubs")


class RulesError(ValueError):
    """A rule set that is not valid, with the reason."""


@dataclass(frozen=True, slots=True)
class Rules:
    winning_goal: int = 500
    losing_goal: int = -200
    # A bid of 0 is nil. Off: every bid is at least 1.
    nil: bool = True
    nil_points: int = 100
    blind_nil: bool = True
    blind_nil_min_deficit: int = 100
    # Cards exchanged between a blind nil bidder and partner (0 or 2).
    blind_nil_pass: int = 0
    team_bid_cap_13: bool = False
    min_team_bid: int = 0
    first_lead: FirstLead = "left_of_dealer"
    nil_tricks_count_for_team: bool = True
    bag_limit: int = 10
    bag_penalty: int = 100
    # On: the bag points themselves are taken back too (-110 per ten bags).
    bag_penalty_removes_bag_points: bool = False
    # A study's "rounds = N" (docs/studies.md): the match also ends after this
    # many rounds, won by the higher score (a tie plays on). 0: no limit.
    round_limit: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            # Annotations are strings here (postponed evaluation).
            if f.type == "int" and (isinstance(value, bool) or not isinstance(value, int)):
                raise RulesError(f"{f.name} must be a whole number, not {value!r}")
            if f.type == "bool" and not isinstance(value, bool):
                raise RulesError(f"{f.name} must be true or false, not {value!r}")
        if self.losing_goal >= self.winning_goal:
            raise RulesError("the losing goal must be below the winning goal")
        if not 1 <= self.winning_goal <= 10_000:
            raise RulesError("the winning goal must be between 1 and 10000")
        if not -10_000 <= self.losing_goal <= 0:
            raise RulesError("the losing goal must be between -10000 and 0")
        if self.blind_nil and not self.nil:
            raise RulesError("blind nil needs nil bids to be allowed")
        if self.blind_nil_pass not in (0, 2):
            raise RulesError("blind_nil_pass must be 0 or 2 cards")
        if not 0 <= self.blind_nil_min_deficit <= 10_000:
            raise RulesError("blind_nil_min_deficit must be between 0 and 10000")
        if not 0 <= self.min_team_bid <= 13:
            raise RulesError("min_team_bid must be between 0 and 13")
        if self.first_lead not in FIRST_LEAD_CHOICES:
            raise RulesError(f"first_lead must be one of {', '.join(FIRST_LEAD_CHOICES)}")
        if not 1 <= self.bag_limit <= 100:
            raise RulesError("bag_limit must be between 1 and 100")
        if not 0 <= self.bag_penalty <= 1000:
            raise RulesError("bag_penalty must be between 0 and 1000")
        if not 0 <= self.nil_points <= 1000:
            raise RulesError("nil_points must be between 0 and 1000")
        if not 0 <= self.round_limit <= 100:
            raise RulesError("round_limit must be between 0 (no limit) and 100")

    @property
    def bag_penalty_total(self) -> int:
        """Points lost each time a partnership reaches the bag limit."""
        return self.bag_penalty + (self.bag_limit if self.bag_penalty_removes_bag_points else 0)

    def to_dict(self) -> dict[str, Any]:
        # Every field is a plain value, so no deep copy (``asdict``) is needed:
        # the server builds this dict once per move, for the state frames.
        out = {name: getattr(self, name) for name in _FIELD_NAMES}
        if not self.round_limit:
            # Only where set: a stored rule set, and so its key
            # (round_columns.rules_key), stays as it was before the option.
            del out["round_limit"]
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Build from a dict; unknown keys are an error, missing keys take defaults."""
        if not isinstance(data, dict):
            raise RulesError("rules must be an object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RulesError(f"unknown rule option(s): {', '.join(map(str, unknown))}")
        return cls(**data)


DEFAULT_RULES = Rules()
# The BIS paper's experiments: goal 200, losing goal -100.
PAPER_RULES = Rules(winning_goal=200, losing_goal=-100)


_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Rules))
