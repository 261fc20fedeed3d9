"""A match: who wins, dealer rotation, carried scores and bags, blind nil eligibility."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.engine.actions import Bid
from game.engine.deal import deal_hands, first_dealer, round_seed
from game.engine.match import Match, match_winner
from game.engine.rules import PAPER_RULES, Rules, RulesError
from game.engine.state import IllegalAction, Phase
from game.engine.view import view_for

DEFAULT = Rules()


@pytest.mark.parametrize(
    "scores, winner",
    [
        # One partnership at or above the goal wins.
        ((500, 0), 0),
        ((0, 500), 1),
        ((610, 450), 0),
        ((499, 499), None),
        ((499, 0), None),
        # Both above: the higher wins; an exact tie plays on.
        ((520, 510), 0),
        ((510, 520), 1),
        ((500, 500), None),
        ((530, 530), None),
        # One above the goal, the other below the losing goal: the goal wins.
        ((500, -300), 0),
        ((-300, 500), 1),
        # At or below the losing goal loses.
        ((-200, 0), 1),
        ((0, -200), 0),
        ((-250, 450), 1),
        ((-199, 0), None),
        ((0, -199), None),
        # Both at or below: the higher wins; a tie plays on.
        ((-250, -300), 0),
        ((-300, -200), 1),
        ((-200, -200), None),
        ((-250, -250), None),
        # Nothing decided.
        ((0, 0), None),
        ((250, -150), None),
    ],
)
def test_match_winner_default_goals(scores, winner):
    assert match_winner(DEFAULT, scores) == winner


@pytest.mark.parametrize(
    "scores, winner",
    [
        ((200, 0), 0),
        ((199, 0), None),
        ((0, -100), 0),
        ((-99, 0), None),
        ((-100, -120), 0),
        ((-100, -100), None),
        ((250, 250), None),
        ((250, 260), 1),
    ],
)
def test_match_winner_paper_goals(scores, winner):
    assert match_winner(PAPER_RULES, scores) == winner


def reference_winner(rules, a, b):
    """RULES.md "End of the match", read again."""
    if a >= rules.winning_goal or b >= rules.winning_goal:
        if a >= rules.winning_goal and b >= rules.winning_goal:
            return None if a == b else int(b > a)
        return 0 if a >= rules.winning_goal else 1
    if a <= rules.losing_goal and b <= rules.losing_goal:
        return None if a == b else int(b > a)
    if a <= rules.losing_goal:
        return 1
    if b <= rules.losing_goal:
        return 0
    return None


@given(
    st.integers(1, 1000), st.integers(-1000, 0), st.integers(-2000, 2000), st.integers(-2000, 2000)
)
def test_match_winner_matches_the_rules_text(goal, losing, a, b):
    rules = Rules(winning_goal=goal, losing_goal=losing)
    assert match_winner(rules, (a, b)) == reference_winner(rules, a, b)
    # Symmetric in the two partnerships.
    w = match_winner(rules, (a, b))
    assert match_winner(rules, (b, a)) == (None if w is None else 1 - w)


# ----- playing a match --------------------------------------------------------------------


def sane_step(m: Match, rng: random.Random, blind_bias: float = 0.5) -> None:
    """One random legal action, with bids near what a hand can take (so that
    matches last several rounds) and blind nil taken when offered."""
    r = m.round
    actions = r.legal_actions()
    if r.phase is Phase.BIDDING:
        bids = [a for a in actions if isinstance(a, Bid)]
        blind = [a for a in bids if a.blind]
        if blind and rng.random() < blind_bias:
            m.apply(blind[0])
            return
        nil = [a for a in bids if a.tricks == 0 and not a.blind]
        if nil and rng.random() < 0.03:
            m.apply(nil[0])
            return
        plain = [a for a in bids if 1 <= a.tricks <= 3]
        if plain and rng.random() < 0.95:
            m.apply(rng.choice(plain))
            return
    m.apply(rng.choice(actions))


def play_match(
    rules: Rules, seed, rng_seed: int = 0, max_rounds: int = 200, blind_bias: float = 0.5
) -> Match:
    m = Match(rules, seed)
    rng = random.Random(rng_seed)
    applied = 0
    while not m.is_over:
        assert len(m.rounds) <= max_rounds
        sane_step(m, rng, blind_bias)
        applied += 1
    assert m.version == applied
    return m


@pytest.mark.parametrize("seed", ["match-a", "match-b", 12345])
def test_a_seeded_random_match_reaches_a_winner(seed):
    m = play_match(DEFAULT, seed, rng_seed=hash(str(seed)) % 1000)
    assert m.is_over
    assert m.winner == match_winner(DEFAULT, m.scores) is not None
    last = m.round
    assert last.phase is Phase.DONE
    assert m.scores == (last.result[0].score_after, last.result[1].score_after)
    # Every earlier round left the match undecided.
    for r in m.rounds[:-1]:
        assert match_winner(DEFAULT, (r.result[0].score_after, r.result[1].score_after)) is None


def test_rounds_rotate_dealer_and_carry_scores_and_bags():
    m = play_match(DEFAULT, "carry-0", rng_seed=0, blind_bias=0.0)
    assert len(m.rounds) >= 10
    assert m.first_dealer == first_dealer("carry-0")
    scores, bags = (0, 0), (0, 0)
    for n, r in enumerate(m.rounds, start=1):
        assert r.round_number == n
        assert r.dealer == (m.first_dealer + n - 1) % 4
        assert r.hands_dealt == deal_hands(round_seed("carry-0", n))
        assert r.scores_before == scores
        assert r.bags_before == bags
        ns, ew = r.result
        assert (ns.score_before, ew.score_before) == scores
        assert (ns.bags_before, ew.bags_before) == bags
        scores = (ns.score_after, ew.score_after)
        bags = (ns.bags_after, ew.bags_after)
    assert m.scores == scores and m.bags == bags
    assert any(r.result[p].bag_penalties for r in m.rounds for p in (0, 1))  # bags did reset


def test_same_seed_same_match():
    a = play_match(PAPER_RULES, "same", rng_seed=9)
    b = play_match(PAPER_RULES, "same", rng_seed=9)
    assert [r.hands_dealt for r in a.rounds] == [r.hands_dealt for r in b.rounds]
    assert [r.actions for r in a.rounds] == [r.actions for r in b.rounds]
    assert (a.scores, a.winner) == (b.scores, b.winner)


def test_blind_nil_eligibility_appears_only_when_100_behind():
    seen_eligible = 0
    for k in range(6):
        m = play_match(DEFAULT, f"blind-{k}", rng_seed=k)
        for r in m.rounds:
            ns, ew = r.scores_before
            expect = (ew - ns >= 100, ns - ew >= 100, ew - ns >= 100, ns - ew >= 100)
            assert r.blind_nil_eligible == expect
            seen_eligible += any(expect)
            for seat in range(4):
                assert not r.blind[seat] or expect[seat]
        assert m.rounds[0].blind_nil_eligible == (False,) * 4
    assert seen_eligible > 0  # the check above was exercised


def test_match_is_over_refuses_everything():
    m = play_match(PAPER_RULES, "over", rng_seed=3)
    version, scores, rounds = m.version, m.scores, len(m.rounds)
    with pytest.raises(IllegalAction, match="^the match is over$"):
        m.apply(Bid(m.round.to_act, 3))
    assert (m.version, m.scores, len(m.rounds)) == (version, scores, rounds)


def test_an_illegal_action_in_a_match_changes_nothing():
    m = Match(DEFAULT, "illegal")
    seat = m.round.to_act
    with pytest.raises(IllegalAction, match="turn"):
        m.apply(Bid((seat + 1) % 4, 3))
    assert m.version == 0 and m.round.bids == [None] * 4
    m.apply(Bid(seat, 3))
    assert m.version == 1


def test_paper_goals_end_the_match_at_200_or_minus_100():
    for k in range(4):
        m = play_match(PAPER_RULES, f"paper-{k}", rng_seed=k)
        a, b = m.scores
        assert max(a, b) >= 200 or min(a, b) <= -100
        assert m.winner == match_winner(PAPER_RULES, m.scores)
        assert m.winner is not None
        for r in m.rounds[1:]:
            # Play went on only while nobody had reached a goal.
            x, y = r.scores_before
            assert (-100 < x < 200 and -100 < y < 200) or x == y  # a tie plays on


def test_dealer_can_be_chosen():
    m = Match(DEFAULT, "seed", dealer=2)
    assert m.first_dealer == 2 and m.round.dealer == 2 and m.round.to_act == 3


def test_a_new_round_is_dealt_when_one_ends():
    m = Match(DEFAULT, "next")
    r1 = m.round
    rng = random.Random(1)
    while not r1.is_over:
        sane_step(m, rng)
    assert not m.is_over
    assert len(m.rounds) == 2 and m.round.round_number == 2
    assert m.round.phase is Phase.BIDDING
    assert m.round.dealer == (r1.dealer + 1) % 4
    view = view_for(m, 0)
    assert len(view.history) == 1 and view.history[0].round_number == 1
    assert view.history[0].result == r1.result
    assert view.match_winner is None


def test_view_of_a_finished_match():
    m = play_match(PAPER_RULES, "done", rng_seed=2)
    v = view_for(m, None)
    assert v.match_winner == m.winner
    assert v.result == m.round.result
    assert len(v.history) == len(m.rounds) - 1
    assert v.to_dict()["match_winner"] == m.winner


def test_match_copy_is_independent():
    m = Match(DEFAULT, "copy")
    rng = random.Random(4)
    while len(m.rounds) < 2:
        sane_step(m, rng)
    sane_step(m, rng)
    c = m.copy()
    assert c.rounds[0] is m.rounds[0]  # finished rounds are shared
    assert c.round is not m.round
    version, actions = m.version, list(m.round.actions)
    while c.round is c.rounds[1] and not c.is_over:
        sane_step(c, rng)
    assert m.version == version and m.round.actions == actions and len(m.rounds) == 2
    assert c.version > version


@pytest.mark.parametrize(
    "scores, rounds, winner",
    [
        ((120, 80), 2, None),  # fewer rounds than the limit: play on
        ((120, 80), 3, 0),  # the limit reached: the higher score wins
        ((-40, 30), 3, 1),
        ((70, 70), 3, None),  # a tie plays on, as at the goals
        ((70, 60), 4, 0),  # a round played on after a tie: decided now
        ((500, 600), 1, 1),  # a goal still ends the match before the limit
    ],
)
def test_a_round_limit_ends_the_match_on_the_higher_score(scores, rounds, winner):
    assert match_winner(Rules(round_limit=3), scores, rounds) == winner


@pytest.mark.parametrize("seed", ["limit-a", "limit-b", 7])
def test_a_match_with_a_round_limit_stops_after_that_many_rounds(seed):
    rules = Rules(round_limit=2)
    m = play_match(rules, seed, rng_seed=11)
    first = m.rounds[0].result
    assert match_winner(rules, (first[0].score_after, first[1].score_after), 1) is None
    tied = [r for r in m.rounds[1:-1] if r.result[0].score_after == r.result[1].score_after]
    assert len(m.rounds) == 2 + len(tied)  # past two rounds only while tied
    assert m.winner == (0 if m.scores[0] > m.scores[1] else 1)


def test_the_round_limit_is_kept_in_a_rule_set_only_where_set():
    assert "round_limit" not in Rules().to_dict()  # old rule sets keep their keys
    assert Rules(round_limit=5).to_dict()["round_limit"] == 5
    assert Rules.from_dict(Rules(round_limit=5).to_dict()) == Rules(round_limit=5)
    assert Rules.from_dict(Rules().to_dict()) == Rules()
    with pytest.raises(RulesError):
        Rules(round_limit=101)
    with pytest.raises(RulesError):
        Rules(round_limit=-1)
