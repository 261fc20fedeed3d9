"""Actions: the compact text form and the JSON form (untrusted client data)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.engine.actions import (
    ActionError,
    Bid,
    PassCards,
    Play,
    SeeCards,
    action_from_dict,
    action_to_dict,
    format_action,
    parse_action,
)
from game.engine.cards import parse_hand

seat = st.integers(0, 3)
actions = st.one_of(
    st.builds(Bid, seat, st.integers(1, 13)),
    st.builds(Bid, seat, st.just(0), st.booleans()),
    st.builds(SeeCards, seat),
    st.builds(
        PassCards,
        seat,
        st.lists(st.integers(0, 51), min_size=2, max_size=2, unique=True).map(
            lambda cs: (1 << cs[0]) | (1 << cs[1])
        ),
    ),
    st.builds(Play, seat, st.integers(0, 51)),
)


@given(actions)
def test_text_and_dict_round_trips(action):
    assert parse_action(format_action(action)) == action
    assert action_from_dict(action_to_dict(action)) == action


@pytest.mark.parametrize(
    "action, text",
    [
        (Bid(0, 4), "N:4"),
        (Bid(1, 0), "E:nil"),
        (Bid(2, 0, blind=True), "S:bnil"),
        (SeeCards(3), "W:see"),
        (PassCards(0, parse_hand("3C 2C")), "N>2C3C"),
        (Play(1, 51), "E:AS"),
        (Bid(3, 13), "W:13"),
    ],
)
def test_text_forms(action, text):
    assert format_action(action) == text
    assert parse_action(text) == action


def test_parse_is_lenient_about_case_and_names():
    assert parse_action("north:NIL") == Bid(0, 0)
    assert parse_action("w:10h") == Play(3, 34)


@pytest.mark.parametrize("text", ["", "N", "X:4", "N:xx", "N>2C2C", "N>2", "N:see:x", "4:N"])
def test_bad_action_text(text):
    with pytest.raises(ActionError, match="is not an action"):
        parse_action(text)


def test_dict_seat_override_acts_only_for_the_sender():
    data = {"type": "play", "seat": 3, "card": "AS"}
    assert action_from_dict(data, seat=1) == Play(1, 51)
    assert action_from_dict({"type": "bid", "tricks": 3}, seat=2) == Bid(2, 3)


@pytest.mark.parametrize(
    "data, message",
    [
        ([], "an action must be an object"),
        ({"type": "bid", "tricks": 3}, "'seat' must be a whole number from 0 to 3"),
        ({"type": "bid", "seat": 4, "tricks": 3}, "'seat'"),
        ({"type": "bid", "seat": True, "tricks": 3}, "'seat'"),
        ({"type": "bid", "seat": 0, "tricks": 14}, "'tricks' must be a whole number from 0 to 13"),
        ({"type": "bid", "seat": 0, "tricks": "3"}, "'tricks'"),
        ({"type": "bid", "seat": 0, "tricks": 0, "blind": "yes"}, "'blind' must be true or false"),
        ({"type": "pass_cards", "seat": 0, "cards": "2C 3C"}, "'cards' must be a list"),
        ({"type": "pass_cards", "seat": 0, "cards": [1, 2]}, "'cards' must be a list"),
        ({"type": "pass_cards", "seat": 0, "cards": ["2C"] * 14}, "too many cards"),
        ({"type": "pass_cards", "seat": 0, "cards": ["2C", "2C"]}, "appears twice"),
        ({"type": "play", "seat": 0, "card": 51}, "'card' must be a card"),
        ({"type": "play", "seat": 0, "card": "ZZ"}, "is not a card"),
        ({"type": "dance", "seat": 0}, "'type' must be one of"),
        ({"seat": 0}, "'type' must be one of"),
    ],
)
def test_bad_action_dicts(data, message):
    with pytest.raises(ActionError, match=message):
        action_from_dict(data)


def test_action_error_is_a_value_error():
    assert issubclass(ActionError, ValueError)
