"""The two classifications of a round by its bids (RULES.md, "Round types").

``round_type`` is one seat's view, the SRP playing module's ten types.
``nil_position`` is one partnership's view, for the human-vs-bot analyses.

Where a round fits two descriptions we take, in order: a nil on each side is
*nil vs nil*; otherwise both opponents nil is *double nil*; otherwise one
opponent nil is *opponents nil*; then *we nil*, *partner nil*, and the
no-nil types by the sum of the four bids.

>>> round_type((3, 4, 2, 3), seat=0).name, round_type((0, 4, 2, 3), seat=2).name
('OVER', 'PARTNER_NIL')
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum, StrEnum

from .cards import Seat


class RoundType(IntEnum):
    STRONG_UNDER = 1  # no nil, sum of bids <= 8
    UNDER = 2  # no nil, 9-10
    OVER = 3  # no nil, 11-13
    FOURTEEN = 4  # no nil, exactly 14
    STRONG_OVER = 5  # no nil, >= 15
    WE_NIL = 6  # this seat bid nil
    PARTNER_NIL = 7
    OPPONENTS_NIL = 8  # exactly one opponent nil, no nil on our side
    NIL_VS_NIL = 9  # a nil on each side
    DOUBLE_NIL = 10  # both opponents nil

    @property
    def label(self) -> str:
        return self.name.replace("_", " ").lower()


class NilPosition(StrEnum):
    """Where the nils are, seen from one partnership."""

    NO_NIL = "no nil"
    WE_NIL = "we nil"  # exactly one of us, none of them
    WE_DOUBLE_NIL = "we double nil"  # both of us, none of them
    THEY_NIL = "they nil"
    THEY_DOUBLE_NIL = "they double nil"
    NIL_VS_NIL = "nil vs nil"


def no_nil_type(bid_sum: int) -> RoundType:
    if bid_sum <= 8:
        return RoundType.STRONG_UNDER
    if bid_sum <= 10:
        return RoundType.UNDER
    if bid_sum <= 13:
        return RoundType.OVER
    if bid_sum == 14:
        return RoundType.FOURTEEN
    return RoundType.STRONG_OVER


def round_type(bids: Sequence[int], seat: Seat, nil_allowed: bool = True) -> RoundType:
    """The SRP round type for ``seat`` given the four bids (0 is nil)."""
    nil = [nil_allowed and b == 0 for b in bids]
    ours = nil[seat] + nil[(seat + 2) & 3]
    theirs = nil[(seat + 1) & 3] + nil[(seat + 3) & 3]
    if ours and theirs:
        return RoundType.NIL_VS_NIL
    if theirs == 2:
        return RoundType.DOUBLE_NIL
    if theirs == 1:
        return RoundType.OPPONENTS_NIL
    if nil[seat]:
        return RoundType.WE_NIL
    if ours:
        return RoundType.PARTNER_NIL
    return no_nil_type(sum(bids))


def nil_position(bids: Sequence[int], partnership: int, nil_allowed: bool = True) -> NilPosition:
    """Where the nils are from ``partnership``'s side (0 North/South, 1 East/West)."""
    nil = [nil_allowed and b == 0 for b in bids]
    ours = nil[partnership] + nil[partnership + 2]
    theirs = nil[1 - partnership] + nil[3 - partnership]
    if ours and theirs:
        return NilPosition.NIL_VS_NIL
    if ours:
        return NilPosition.WE_DOUBLE_NIL if ours == 2 else NilPosition.WE_NIL
    if theirs:
        return NilPosition.THEY_DOUBLE_NIL if theirs == 2 else NilPosition.THEY_NIL
    return NilPosition.NO_NIL
