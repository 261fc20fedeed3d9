"""The Rules value: defaults, validation, and its dict form."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, asdict, fields

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.engine.rules import DEFAULT_RULES, PAPER_RULES, Rules, RulesError


def test_defaults_are_the_rules_md_defaults():
    r = Rules()
    assert (r.winning_goal, r.losing_goal) == (500, -200)
    assert r.nil is True and r.nil_points == 100
    assert r.blind_nil is True and r.blind_nil_min_deficit == 100 and r.blind_nil_pass == 0
    assert r.team_bid_cap_13 is False and r.min_team_bid == 0
    assert r.first_lead == "left_of_dealer"
    assert r.nil_tricks_count_for_team is True
    assert (r.bag_limit, r.bag_penalty, r.bag_penalty_removes_bag_points) == (10, 100, False)
    assert r.bag_penalty_total == 100
    assert Rules(bag_penalty_removes_bag_points=True).bag_penalty_total == 110
    assert r == DEFAULT_RULES


def test_paper_rules_goals():
    assert (PAPER_RULES.winning_goal, PAPER_RULES.losing_goal) == (200, -100)


def test_rules_are_frozen_and_hashable():
    with pytest.raises(FrozenInstanceError):
        Rules().winning_goal = 100  # type: ignore[misc]
    assert hash(Rules()) == hash(Rules())
    assert len({Rules(), Rules(), Rules(nil_points=50)}) == 2


INT_FIELDS = [f.name for f in fields(Rules) if f.type == "int"]
BOOL_FIELDS = [f.name for f in fields(Rules) if f.type == "bool"]


def test_field_type_lists_are_complete():
    # Guards the parametrized tests below against an empty parameter list.
    assert {"winning_goal", "losing_goal", "blind_nil_pass", "bag_limit"} <= set(INT_FIELDS)
    assert {"nil", "blind_nil", "team_bid_cap_13", "nil_tricks_count_for_team"} <= set(BOOL_FIELDS)


@pytest.mark.parametrize("name", INT_FIELDS)
@pytest.mark.parametrize("bad", ["5", 5.0, None, True, False])
def test_int_options_reject_other_types(name, bad):
    with pytest.raises(RulesError, match=f"{name} must be a whole number"):
        Rules(**{name: bad})


@pytest.mark.parametrize("name", BOOL_FIELDS)
@pytest.mark.parametrize("bad", [1, 0, "true", None])
def test_bool_options_reject_other_types(name, bad):
    with pytest.raises(RulesError, match=f"{name} must be true or false"):
        Rules(**{name: bad})


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(winning_goal=-50, losing_goal=-50), "losing goal must be below the winning goal"),
        (dict(losing_goal=500), "losing goal must be below the winning goal"),
        (dict(losing_goal=600), "losing goal must be below the winning goal"),
        (dict(winning_goal=0, losing_goal=-10), "winning goal must be between 1 and 10000"),
        (dict(winning_goal=10_001), "winning goal must be between 1 and 10000"),
        (dict(winning_goal=100, losing_goal=50), "losing goal must be between -10000 and 0"),
        (dict(losing_goal=-10_001), "losing goal must be between -10000 and 0"),
        (dict(nil=False), "blind nil needs nil bids to be allowed"),
        (dict(blind_nil_pass=1), "blind_nil_pass must be 0 or 2 cards"),
        (dict(blind_nil_pass=3), "blind_nil_pass must be 0 or 2 cards"),
        (dict(blind_nil_pass=-2), "blind_nil_pass must be 0 or 2 cards"),
        (dict(blind_nil_min_deficit=-1), "blind_nil_min_deficit must be between"),
        (dict(min_team_bid=14), "min_team_bid must be between 0 and 13"),
        (dict(min_team_bid=-1), "min_team_bid must be between 0 and 13"),
        (dict(first_lead="dealer"), "first_lead must be one of left_of_dealer, two_of_clubs"),
        (dict(first_lead=None), "first_lead must be one of"),
        (dict(bag_limit=0), "bag_limit must be between 1 and 100"),
        (dict(bag_penalty=-1), "bag_penalty must be between 0 and 1000"),
        (dict(nil_points=1001), "nil_points must be between 0 and 1000"),
    ],
)
def test_invalid_rules_say_why(kwargs, message):
    with pytest.raises(RulesError, match=message):
        Rules(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(winning_goal=1, losing_goal=0),
        dict(winning_goal=10_000, losing_goal=-10_000),
        dict(nil=False, blind_nil=False),
        dict(blind_nil_pass=2),
        dict(min_team_bid=13),
        dict(first_lead="two_of_clubs"),
        dict(bag_limit=1, bag_penalty=0),
        dict(blind_nil_min_deficit=0),
    ],
)
def test_boundary_values_are_accepted(kwargs):
    r = Rules(**kwargs)
    for k, v in kwargs.items():
        assert getattr(r, k) == v


def test_rules_error_is_a_value_error():
    assert issubclass(RulesError, ValueError)


def test_from_dict_rejects_unknown_keys_by_name():
    with pytest.raises(RulesError, match="unknown rule option.*bogus.*zzz"):
        Rules.from_dict({"zzz": 1, "bogus": True, "nil": True})


@pytest.mark.parametrize("bad", [None, [], "rules", 3])
def test_from_dict_needs_an_object(bad):
    with pytest.raises(RulesError, match="rules must be an object"):
        Rules.from_dict(bad)


def test_from_dict_missing_keys_take_defaults_and_bad_values_are_errors():
    assert Rules.from_dict({}) == Rules()
    assert Rules.from_dict({"winning_goal": 250}) == Rules(winning_goal=250)
    with pytest.raises(RulesError, match="winning_goal must be a whole number"):
        Rules.from_dict({"winning_goal": "250"})


def test_to_dict_has_every_option_and_is_json():
    d = Rules().to_dict()
    # Every option but the round limit, which is written only where set.
    assert set(d) == {f.name for f in fields(Rules)} - {"round_limit"}
    assert json.loads(json.dumps(d)) == d
    limited = Rules(round_limit=4).to_dict()
    assert set(limited) == {f.name for f in fields(Rules)}
    assert json.loads(json.dumps(limited)) == limited


rules_strategy = st.builds(
    Rules,
    winning_goal=st.integers(1, 10_000),
    losing_goal=st.integers(-10_000, 0),
    nil=st.just(True),
    nil_points=st.integers(0, 1000),
    blind_nil=st.booleans(),
    blind_nil_min_deficit=st.integers(0, 10_000),
    blind_nil_pass=st.sampled_from([0, 2]),
    team_bid_cap_13=st.booleans(),
    min_team_bid=st.integers(0, 13),
    first_lead=st.sampled_from(["left_of_dealer", "two_of_clubs"]),
    nil_tricks_count_for_team=st.booleans(),
    bag_limit=st.integers(1, 100),
    bag_penalty=st.integers(0, 1000),
    bag_penalty_removes_bag_points=st.booleans(),
    round_limit=st.integers(0, 100),
)


@given(rules_strategy)
def test_to_dict_is_dataclasses_asdict_without_the_deep_copy(rules):
    # to_dict copies field values as they are: right only while none is a container.
    expected = asdict(rules)
    if not rules.round_limit:
        del expected["round_limit"]  # written only where set
    assert rules.to_dict() == expected
    assert all(isinstance(v, (bool, int, str)) for v in rules.to_dict().values())


@given(rules_strategy)
def test_to_dict_from_dict_round_trip(rules):
    assert Rules.from_dict(rules.to_dict()) == rules
    assert Rules.from_dict(json.loads(json.dumps(rules.to_dict()))) == rules
