"""The SRP round types (one seat's view) and nil positions (one partnership's view)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.engine.round_types import NilPosition, RoundType, nil_position, round_type

T = RoundType


@pytest.mark.parametrize(
    "bids, expected",
    [
        ((1, 1, 1, 1), T.STRONG_UNDER),
        ((2, 2, 2, 2), T.STRONG_UNDER),  # 8
        ((3, 2, 2, 2), T.UNDER),  # 9
        ((3, 3, 2, 2), T.UNDER),  # 10
        ((3, 3, 3, 2), T.OVER),  # 11
        ((4, 3, 3, 2), T.OVER),  # 12
        ((4, 4, 3, 2), T.OVER),  # 13
        ((4, 4, 3, 3), T.FOURTEEN),  # 14
        ((4, 4, 4, 3), T.STRONG_OVER),  # 15
        ((13, 13, 13, 13), T.STRONG_OVER),
    ],
)
def test_no_nil_types_by_sum_of_bids(bids, expected):
    for seat in range(4):
        assert round_type(bids, seat) is expected


@pytest.mark.parametrize(
    "bids, seat, expected",
    [
        ((0, 3, 4, 3), 0, T.WE_NIL),
        ((3, 3, 0, 3), 2, T.WE_NIL),
        ((3, 3, 0, 3), 0, T.PARTNER_NIL),
        ((0, 3, 4, 3), 2, T.PARTNER_NIL),
        ((0, 3, 4, 3), 1, T.OPPONENTS_NIL),
        ((0, 3, 4, 3), 3, T.OPPONENTS_NIL),
        ((3, 0, 4, 3), 0, T.OPPONENTS_NIL),
        ((3, 3, 4, 0), 2, T.OPPONENTS_NIL),
        ((0, 0, 4, 3), 0, T.NIL_VS_NIL),
        ((0, 0, 4, 3), 1, T.NIL_VS_NIL),
        ((3, 0, 0, 3), 0, T.NIL_VS_NIL),  # partner nil vs one opponent nil
        ((3, 0, 0, 3), 3, T.NIL_VS_NIL),
        ((3, 0, 4, 0), 0, T.DOUBLE_NIL),
        ((3, 0, 4, 0), 2, T.DOUBLE_NIL),
    ],
)
def test_the_five_nil_types(bids, seat, expected):
    assert round_type(bids, seat) is expected


def test_precedence_nil_vs_nil_before_double_nil():
    # We bid nil and both opponents did too: a nil on each side comes first.
    assert round_type((0, 0, 3, 0), 0) is T.NIL_VS_NIL
    assert round_type((0, 0, 3, 0), 2) is T.NIL_VS_NIL
    assert round_type((0, 0, 0, 0), 1) is T.NIL_VS_NIL


def test_precedence_double_nil_and_opponents_nil_before_our_sum():
    # Their nils decide even if the bid sum would say something else.
    assert round_type((13, 0, 13, 0), 0) is T.DOUBLE_NIL
    assert round_type((1, 0, 1, 1), 2) is T.OPPONENTS_NIL


def test_precedence_we_nil_before_partner_nil():
    # Both partners nil, nobody else: each of them is "we nil", the others "double nil".
    assert round_type((0, 3, 0, 4), 0) is T.WE_NIL
    assert round_type((0, 3, 0, 4), 2) is T.WE_NIL
    assert round_type((0, 3, 0, 4), 1) is T.DOUBLE_NIL
    assert round_type((0, 3, 0, 4), 3) is T.DOUBLE_NIL


def test_without_nil_a_zero_is_just_a_low_bid():
    assert round_type((0, 3, 4, 3), 0, nil_allowed=False) is T.UNDER
    assert nil_position((0, 3, 4, 3), 0, nil_allowed=False) is NilPosition.NO_NIL


def test_labels_and_numbers():
    assert [t.value for t in RoundType] == list(range(1, 11))
    assert [t.label for t in RoundType] == [
        "strong under", "under", "over", "fourteen", "strong over",
        "we nil", "partner nil", "opponents nil", "nil vs nil", "double nil",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "bids, partnership, expected",
    [
        ((3, 3, 4, 3), 0, NilPosition.NO_NIL),
        ((3, 3, 4, 3), 1, NilPosition.NO_NIL),
        ((0, 3, 4, 3), 0, NilPosition.WE_NIL),
        ((3, 3, 0, 3), 0, NilPosition.WE_NIL),
        ((0, 3, 4, 3), 1, NilPosition.THEY_NIL),
        ((3, 0, 4, 3), 1, NilPosition.WE_NIL),
        ((3, 3, 4, 0), 0, NilPosition.THEY_NIL),
        ((0, 3, 0, 3), 0, NilPosition.WE_DOUBLE_NIL),
        ((0, 3, 0, 3), 1, NilPosition.THEY_DOUBLE_NIL),
        ((3, 0, 4, 0), 1, NilPosition.WE_DOUBLE_NIL),
        ((3, 0, 4, 0), 0, NilPosition.THEY_DOUBLE_NIL),
        ((0, 0, 4, 3), 0, NilPosition.NIL_VS_NIL),
        ((0, 0, 4, 3), 1, NilPosition.NIL_VS_NIL),
        ((0, 0, 0, 0), 0, NilPosition.NIL_VS_NIL),
        ((0, 0, 0, 3), 1, NilPosition.NIL_VS_NIL),
    ],
)
def test_the_six_nil_positions(bids, partnership, expected):
    assert nil_position(bids, partnership) is expected


def test_nil_position_values_are_the_analysis_labels():
    assert {p.value for p in NilPosition} == {
        "no nil", "we nil", "we double nil", "they nil", "they double nil", "nil vs nil",
    }  # fmt: skip


def reference_type(bids, seat):
    """RULES.md's list, with round_types.py's documented precedence."""
    nil = [b == 0 for b in bids]
    ours = nil[seat] + nil[(seat + 2) % 4]
    theirs = nil[(seat + 1) % 4] + nil[(seat + 3) % 4]
    if ours and theirs:
        return T.NIL_VS_NIL
    if theirs == 2:
        return T.DOUBLE_NIL
    if theirs == 1:
        return T.OPPONENTS_NIL
    if nil[seat]:
        return T.WE_NIL
    if ours:
        return T.PARTNER_NIL
    total = sum(bids)
    if total <= 8:
        return T.STRONG_UNDER
    if total in (9, 10):
        return T.UNDER
    if 11 <= total <= 13:
        return T.OVER
    if total == 14:
        return T.FOURTEEN
    return T.STRONG_OVER


bids_st = st.lists(st.integers(0, 13), min_size=4, max_size=4)


@given(bids_st, st.integers(0, 3))
def test_round_type_matches_the_reference(bids, seat):
    assert round_type(bids, seat) is reference_type(bids, seat)


@given(bids_st, st.integers(0, 3))
def test_round_type_and_nil_position_agree(bids, seat):
    t = round_type(bids, seat)
    p = nil_position(bids, seat % 2)
    expected_positions = {
        T.NIL_VS_NIL: {NilPosition.NIL_VS_NIL},
        T.DOUBLE_NIL: {NilPosition.THEY_DOUBLE_NIL},
        T.OPPONENTS_NIL: {NilPosition.THEY_NIL},
        T.WE_NIL: {NilPosition.WE_NIL, NilPosition.WE_DOUBLE_NIL},
        T.PARTNER_NIL: {NilPosition.WE_NIL},
    }.get(t, {NilPosition.NO_NIL})
    assert p in expected_positions
    # The two partnerships see the same round from opposite sides.
    other = nil_position(bids, 1 - seat % 2)
    mirror = {
        NilPosition.NO_NIL: NilPosition.NO_NIL,
        NilPosition.NIL_VS_NIL: NilPosition.NIL_VS_NIL,
        NilPosition.WE_NIL: NilPosition.THEY_NIL,
        NilPosition.THEY_NIL: NilPosition.WE_NIL,
        NilPosition.WE_DOUBLE_NIL: NilPosition.THEY_DOUBLE_NIL,
        NilPosition.THEY_DOUBLE_NIL: NilPosition.WE_DOUBLE_NIL,
    }
    assert other is mirror[p]
