"""Scoring one round for both partnerships, bags carried across rounds.

>>> from .rules import Rules
>>> s = score_round(Rules(), bids=(4, 3, 2, 3), blind=(False,) * 4,
...                 tricks=(6, 1, 3, 3), scores_before=(288, 0), bags_before=(8, 0))
>>> s[0].points, s[0].score_after, s[0].bags_after
(-37, 251, 1)
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from .rules import Rules


@dataclass(frozen=True, slots=True)
class PartnershipScore:
    """One partnership's score for one round, with its breakdown."""

    contract: int  # sum of the partners' non-nil bids
    tricks: int  # tricks that count toward the contract
    made: bool
    contract_points: int  # +10 x contract, or -10 x contract when set
    bags: int  # overtricks this round, 1 point each
    nil_points: int  # sum over the partnership's nil bids
    bag_penalties: int  # how many times the bag limit was reached this round
    bag_penalty_points: int  # minus the penalty for each of those times
    score_before: int
    bags_before: int
    bags_after: int

    @property
    def points(self) -> int:
        return self.contract_points + self.bags + self.nil_points + self.bag_penalty_points

    @property
    def score_after(self) -> int:
        return self.score_before + self.points

    def to_dict(self) -> dict[str, Any]:
        # Plain values only, so no deep copy (``asdict``, 25 us here): every
        # state frame carries each finished round's two scores.
        d = {name: getattr(self, name) for name in _SCORE_FIELDS}
        d.update(points=self.points, score_after=self.score_after)
        return d


_SCORE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(PartnershipScore))


def score_partnership(
    rules: Rules,
    bids: tuple[int, int],
    blind: tuple[bool, bool],
    tricks: tuple[int, int],
    score_before: int,
    bags_before: int,
) -> PartnershipScore:
    """Score one partnership from its two seats' bids, blind flags and tricks."""
    contract = 0
    counted = 0
    nil_bags = 0
    nil_points = 0
    for bid, is_blind, took in zip(bids, blind, tricks, strict=True):
        if bid == 0 and rules.nil:
            value = rules.nil_points * (2 if is_blind else 1)
            nil_points += value if took == 0 else -value
            if rules.nil_tricks_count_for_team:
                counted += took
            else:
                nil_bags += took
        else:
            contract += bid
            counted += took
    made = counted >= contract
    contract_points = 10 * contract if made else -10 * contract
    bags = (counted - contract if made else 0) + nil_bags
    total_bags = bags_before + bags
    penalties = total_bags // rules.bag_limit
    return PartnershipScore(
        contract=contract,
        tricks=counted,
        made=made,
        contract_points=contract_points,
        bags=bags,
        nil_points=nil_points,
        bag_penalties=penalties,
        bag_penalty_points=-penalties * rules.bag_penalty_total,
        score_before=score_before,
        bags_before=bags_before,
        bags_after=total_bags - penalties * rules.bag_limit,
    )


def score_round(
    rules: Rules,
    bids: tuple[int, ...] | list[int],
    blind: tuple[bool, ...] | list[bool],
    tricks: tuple[int, ...] | list[int],
    scores_before: tuple[int, int],
    bags_before: tuple[int, int],
) -> tuple[PartnershipScore, PartnershipScore]:
    """Both partnerships' scores; seats 0 and 2 are North/South, 1 and 3 East/West."""
    return (
        score_partnership(
            rules, (bids[0], bids[2]), (blind[0], blind[2]), (tricks[0], tricks[2]),
            scores_before[0], bags_before[0],
        ),
        score_partnership(
            rules, (bids[1], bids[3]), (blind[1], blind[3]), (tricks[1], tricks[3]),
            scores_before[1], bags_before[1],
        ),
    )  # fmt: skip
