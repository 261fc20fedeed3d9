"""Scoring: the worked examples of RULES.md, nils, bags, and the options."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.engine.rules import Rules
from game.engine.scoring import score_partnership, score_round

NO_BLIND = (False, False, False, False)
DEFAULT = Rules()


def pair(rules, bids, tricks, before=0, bags=0, blind=(False, False)):
    return score_partnership(rules, bids, blind, tricks, before, bags)


# ----- the worked examples of RULES.md ------------------------------------------


def test_example_4_plus_2_with_9_tricks_is_plus_63():
    s = pair(DEFAULT, (4, 2), (5, 4))
    assert (s.contract, s.tricks, s.made) == (6, 9, True)
    assert (s.contract_points, s.bags, s.nil_points, s.bag_penalty_points) == (60, 3, 0, 0)
    assert s.points == 63
    assert s.bags_after == 3


def test_example_with_8_bags_before_reaches_11_bags():
    s = pair(DEFAULT, (4, 2), (5, 4), before=288, bags=8)
    assert s.points == 63 - 100 == -37
    assert s.bag_penalties == 1
    assert s.bag_penalty_points == -100
    assert s.score_after == 251
    assert s.bags_after == 1


def test_example_with_bag_penalty_removing_bag_points_is_the_paper_figure():
    rules = Rules(bag_penalty_removes_bag_points=True)
    s = pair(rules, (4, 2), (5, 4), before=288, bags=8)
    assert s.bag_penalty_points == -110
    assert s.score_after == 241
    assert s.bags_after == 1


def test_example_n4_e5_s5_w_nil():
    ns, ew = score_round(
        DEFAULT, bids=(4, 5, 5, 0), blind=NO_BLIND, tricks=(5, 3, 5, 0),
        scores_before=(0, 0), bags_before=(0, 0),
    )  # fmt: skip
    assert (ns.contract, ns.tricks, ns.made, ns.bags) == (9, 10, True, 1)
    assert ns.points == 91
    assert (ew.contract, ew.tricks, ew.made) == (5, 3, False)
    assert ew.contract_points == -50
    assert ew.nil_points == 100
    assert ew.bags == 0
    assert ew.points == 50


def test_example_bid_13_set_plus_failed_partner_nil_is_minus_230():
    ns, ew = score_round(
        DEFAULT, bids=(13, 0, 0, 0), blind=NO_BLIND, tricks=(11, 0, 1, 1),
        scores_before=(0, 0), bags_before=(0, 0),
    )  # fmt: skip
    assert ns.made is False
    assert ns.contract_points == -130
    assert ns.nil_points == -100
    assert ns.points == -230
    # East and West both bid nil: one made, one failed.
    assert ew.nil_points == 100 - 100


def test_doctest_example_scores_both_partnerships():
    ns, ew = score_round(
        DEFAULT, bids=(4, 3, 2, 3), blind=NO_BLIND, tricks=(6, 1, 3, 3),
        scores_before=(288, 0), bags_before=(8, 0),
    )  # fmt: skip
    assert (ns.points, ns.score_after, ns.bags_after) == (-37, 251, 1)
    assert (ew.points, ew.score_after, ew.bags_after, ew.made) == (-60, -60, 0, False)


# ----- nil ----------------------------------------------------------------------


@pytest.mark.parametrize("took, expected", [(0, 200), (1, -200), (4, -200)])
def test_blind_nil_is_worth_double(took, expected):
    s = pair(DEFAULT, (0, 3), (took, 3), blind=(True, False))
    assert s.nil_points == expected


@pytest.mark.parametrize("took, expected", [(0, 100), (1, -100), (5, -100)])
def test_nil_is_100_either_way(took, expected):
    s = pair(DEFAULT, (0, 3), (took, 3))
    assert s.nil_points == expected


def test_nil_points_option_scales_nil_and_blind_nil():
    rules = Rules(nil_points=50)
    assert pair(rules, (0, 3), (0, 3)).nil_points == 50
    assert pair(rules, (0, 3), (1, 3)).nil_points == -50
    assert pair(rules, (0, 3), (0, 3), blind=(True, False)).nil_points == 100
    assert pair(rules, (0, 3), (2, 3), blind=(True, False)).nil_points == -100


def test_two_nils_in_one_partnership_score_separately():
    both_made = pair(DEFAULT, (0, 0), (0, 0))
    assert both_made.nil_points == 200
    assert both_made.points == 200
    one_failed = pair(DEFAULT, (0, 0), (0, 2))
    assert one_failed.nil_points == 0
    # Their two tricks count for the (zero) contract: two bags.
    assert one_failed.bags == 2
    assert one_failed.points == 2
    both_failed = pair(DEFAULT, (0, 0), (3, 2))
    assert both_failed.nil_points == -200
    blind_and_plain = pair(DEFAULT, (0, 0), (0, 1), blind=(True, False))
    assert blind_and_plain.nil_points == 200 - 100


def test_nil_tricks_count_for_team_by_default():
    # N bid 4 and took 3, S bid nil and took 2: 5 tricks toward 4.
    s = pair(DEFAULT, (4, 0), (3, 2))
    assert (s.tricks, s.made, s.contract_points, s.bags, s.nil_points) == (5, True, 40, 1, -100)
    assert s.points == -59


def test_nil_tricks_only_bags_when_option_off():
    rules = Rules(nil_tricks_count_for_team=False)
    s = pair(rules, (4, 0), (3, 2))
    assert s.tricks == 3
    assert s.made is False
    assert s.contract_points == -40
    assert s.bags == 2  # the nil bidder's tricks are bags even though the side was set
    assert s.nil_points == -100
    assert s.points == -138


def test_nil_tricks_only_bags_when_made_too():
    rules = Rules(nil_tricks_count_for_team=False)
    s = pair(rules, (4, 0), (6, 1))
    assert (s.tricks, s.made, s.contract_points, s.bags) == (6, True, 40, 3)
    assert s.points == 40 + 3 - 100


# ----- contracts and bags ----------------------------------------------------------


def test_exact_contract_has_no_bags():
    s = pair(DEFAULT, (3, 4), (2, 5))
    assert (s.made, s.points, s.bags) == (True, 70, 0)


def test_set_contract_scores_minus_ten_per_trick_bid_and_no_bags():
    s = pair(DEFAULT, (6, 4), (6, 3), bags=9)
    assert (s.made, s.contract_points, s.bags, s.bags_after) == (False, -100, 0, 9)
    assert s.points == -100


def test_exactly_reaching_the_bag_limit_costs_the_penalty_and_resets():
    s = pair(DEFAULT, (3, 3), (5, 3), before=100, bags=8)
    assert s.bags == 2
    assert s.bag_penalties == 1
    assert s.bags_after == 0
    assert s.score_after == 100 + 62 - 100


def test_bag_penalty_reached_twice_in_one_round():
    s = pair(DEFAULT, (1, 1), (7, 6), before=0, bags=9)
    assert s.bags == 11
    assert s.bag_penalties == 2
    assert s.bag_penalty_points == -200
    assert s.bags_after == 0
    assert s.points == 20 + 11 - 200
    removing = pair(Rules(bag_penalty_removes_bag_points=True), (1, 1), (7, 6), bags=9)
    assert removing.bag_penalty_points == -220
    assert removing.bags_after == 0


def test_custom_bag_limit_and_penalty():
    rules = Rules(bag_limit=5, bag_penalty=50)
    s = pair(rules, (2, 3), (4, 4), before=10, bags=4)
    assert s.bags == 3
    assert s.bag_penalties == 1
    assert s.bags_after == 2
    assert s.points == 50 + 3 - 50
    assert s.score_after == 10 + 3
    assert rules.bag_penalty_total == 50
    assert (
        Rules(bag_limit=5, bag_penalty=50, bag_penalty_removes_bag_points=True).bag_penalty_total
        == 55
    )


def test_zero_bag_penalty_still_resets_bags():
    s = pair(Rules(bag_penalty=0), (1, 1), (6, 6), bags=5)
    assert s.bags == 10
    assert s.bag_penalty_points == 0
    assert s.bags_after == 5


def test_to_dict_carries_the_breakdown_and_totals():
    d = pair(DEFAULT, (4, 2), (5, 4), before=288, bags=8).to_dict()
    assert d["points"] == -37
    assert d["score_after"] == 251
    assert d["bags_after"] == 1
    assert d["contract"] == 6


# ----- against an independent reading of RULES.md ------------------------------------


def reference(rules, bids, blind, tricks, before, bags_before):
    """RULES.md "Scoring a round", written out again from the text."""
    contract = sum(b for b in bids if b != 0)
    nil_pts = 0
    team_tricks = 0
    extra_bags = 0
    for b, bl, t in zip(bids, blind, tricks, strict=True):
        if b == 0:
            v = rules.nil_points * (2 if bl else 1)
            nil_pts += v if t == 0 else -v
            if rules.nil_tricks_count_for_team:
                team_tricks += t
            else:
                extra_bags += t
        else:
            team_tricks += t
    if team_tricks >= contract:
        pts = 10 * contract + (team_tricks - contract)
        bags = team_tricks - contract
    else:
        pts = -10 * contract
        bags = 0
    pts += extra_bags
    bags += extra_bags
    total = bags_before + bags
    while total >= rules.bag_limit:
        total -= rules.bag_limit
        pts -= rules.bag_penalty + (rules.bag_limit if rules.bag_penalty_removes_bag_points else 0)
    return before + pts + nil_pts, total


@st.composite
def partnership_rounds(draw):
    rules = Rules(
        nil_tricks_count_for_team=draw(st.booleans()),
        bag_penalty_removes_bag_points=draw(st.booleans()),
        bag_limit=draw(st.integers(1, 15)),
        bag_penalty=draw(st.integers(0, 200)),
        nil_points=draw(st.sampled_from([50, 100])),
    )
    t0 = draw(st.integers(0, 13))
    t1 = draw(st.integers(0, 13 - t0))
    bids = (draw(st.integers(0, 13)), draw(st.integers(0, 13)))
    blind = (draw(st.booleans()) and bids[0] == 0, draw(st.booleans()) and bids[1] == 0)
    before = draw(st.integers(-1000, 1000))
    bags = draw(st.integers(0, rules.bag_limit - 1))
    return rules, bids, blind, (t0, t1), before, bags


@given(partnership_rounds())
def test_scoring_matches_an_independent_reading_of_the_rules(case):
    rules, bids, blind, tricks, before, bags = case
    s = score_partnership(rules, bids, blind, tricks, before, bags)
    assert (s.score_after, s.bags_after) == reference(rules, bids, blind, tricks, before, bags)
    assert s.points == s.contract_points + s.bags + s.nil_points + s.bag_penalty_points
    assert s.bags_before + s.bags == s.bags_after + s.bag_penalties * rules.bag_limit
    assert 0 <= s.bags_after < rules.bag_limit
    assert s.contract == sum(b for b in bids if b)


@given(st.lists(st.integers(0, 13), min_size=4, max_size=4), st.randoms())
def test_score_round_pairs_north_south_and_east_west(bids, rnd):
    tricks = [0, 0, 0, 0]
    for _ in range(13):
        tricks[rnd.randrange(4)] += 1
    ns, ew = score_round(DEFAULT, bids, NO_BLIND, tricks, (10, 20), (1, 2))
    assert ns == score_partnership(DEFAULT, (bids[0], bids[2]), (False, False),
                                   (tricks[0], tricks[2]), 10, 1)  # fmt: skip
    assert ew == score_partnership(DEFAULT, (bids[1], bids[3]), (False, False),
                                   (tricks[1], tricks[3]), 20, 2)  # fmt: skip


def test_to_dict_is_asdict_with_the_totals_and_plain_values() -> None:
    ns, _ = score_round(
        Rules(), bids=(4, 3, 2, 3), blind=(False,) * 4, tricks=(6, 1, 3, 3),
        scores_before=(288, 0), bags_before=(8, 0),
    )  # fmt: skip
    assert ns.to_dict() == {**asdict(ns), "points": -37, "score_after": 251}
    assert all(isinstance(v, int | bool) for v in ns.to_dict().values())
