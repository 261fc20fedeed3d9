"""WRP never plays an illegal card and keeps the plain habits it is described by."""

from __future__ import annotations

import random
import time

import pytest

from bots.registry import make_bot
from bots.wrp import WRP, choose_card
from game.engine.actions import Bid, Play
from game.engine.cards import format_card, parse_card, parse_hand
from game.engine.deal import deal_hands
from game.engine.match import Match
from game.engine.rules import Rules
from game.engine.state import RoundState
from game.engine.view import view_for
from tests.support.engine_steps import deal

RULES = Rules(blind_nil=False)


# N leads (dealer West). W holds one heart and twelve spades.
HANDS = deal(
    n="KC 5C 4C 3H 4H 5H 6H 7H 2D 3D 4D 5D 6D",
    e="AC 2C 3C 8H 9H TH JH 7D 8D 9D TD JD QD",
    s="QC JC TC 9C 8C 7C 6C QH KH AH KD AD AS",
)


def new_round(bids=(3, 3, 3, 3), hands=HANDS) -> RoundState:
    r = RoundState(RULES, dealer=3, hands=hands)
    for n in bids:
        r.apply(Bid(r.to_act, n))
    return r


def wrp_card(r: RoundState) -> str:
    return format_card(WRP().play(view_for(r, r.to_act), random.Random(0)))


def play(r: RoundState, *cards: str) -> None:
    for text in cards:
        r.apply(Play(r.to_act, parse_card(text)))


# ----- habits -------------------------------------------------------------------------


def test_lead_highest_of_the_longest_side_suit() -> None:
    r = new_round()
    # North: hearts and diamonds both five long; hearts has the higher top card.
    assert wrp_card(r) == "7H"
    hand = parse_hand("AS 2S KH 3H 2H 9C 8C 7C 6C 5C QD 4D 3D")
    assert format_card(choose_card(hand, hand & ~parse_hand("AS 2S"), (), 0, 0, False)) == "9C"


def test_lead_highest_spade_when_only_spades() -> None:
    hand = parse_hand("AS 2S 5S")
    assert format_card(choose_card(hand, hand, (), 0, 0, False)) == "AS"


def test_win_with_the_highest_when_you_can() -> None:
    r = new_round()
    play(r, "5C")
    assert wrp_card(r) == "AC"  # East can win


def test_follow_lowest_when_you_cannot_win() -> None:
    r = new_round()
    play(r, "5C", "AC")
    assert wrp_card(r) == "6C"  # South cannot beat the ace


def test_follow_lowest_when_partner_is_winning() -> None:
    r = new_round()
    play(r, "5C", "3C")
    assert wrp_card(r) == "6C"  # not the queen over partner's card


def test_trump_when_void_and_partner_not_winning() -> None:
    r = new_round()
    play(r, "5C", "3C", "6C")
    assert wrp_card(r) == "2S"  # West is void: lowest winning spade


def test_discard_lowest_side_card_when_partner_is_winning() -> None:
    r = new_round()
    play(r, "5C", "AC", "6C")
    assert wrp_card(r) == "2H"  # partner East wins: no trump, the heart goes


def test_overtrump_with_the_lowest_winning_spade() -> None:
    hand = parse_hand("3S 9S KS 2H")
    legal = parse_hand("3S 9S KS 2H")  # void in clubs
    trick = (parse_card("5C"), parse_card("8S"))  # leader seat 0, seat 1 trumped
    # Seat 2 (partner of the leader) is not winning: overtrump with 9S.
    assert format_card(choose_card(hand, legal, trick, 0, 2, False)) == "9S"
    # Nothing beats the trump: discard the lowest side card.
    hand = parse_hand("3S 2H 7H")
    assert format_card(choose_card(hand, hand, trick, 0, 2, False)) == "2H"


def test_nil_bidder_plays_highest_card_under_the_winner() -> None:
    hand = parse_hand("KC 9C 4C 2S")
    legal = parse_hand("KC 9C 4C")
    assert format_card(choose_card(hand, legal, (parse_card("TC"),), 1, 2, True)) == "9C"
    # Every card would win: the highest goes.
    assert format_card(choose_card(hand, legal, (parse_card("3C"),), 1, 2, True)) == "KC"
    # Void under a trump: the side ace goes rather than a low spade.
    hand = parse_hand("AC 2S 3H")
    trick = (parse_card("5D"), parse_card("9S"))
    assert format_card(choose_card(hand, hand, trick, 0, 2, True)) == "AC"


def test_nil_bidder_in_a_round() -> None:
    r = new_round(bids=(3, 3, 0, 3))  # South bids nil
    play(r, "5C", "3C")
    assert wrp_card(r) == "QC"  # every club beats partner's 5C: the highest goes
    r = new_round(bids=(3, 3, 0, 3))
    play(r, "5C", "AC")
    assert wrp_card(r) == "QC"  # highest club under the ace


# ----- legality and speed ---------------------------------------------------------------


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(first_lead="two_of_clubs"), Rules(blind_nil_pass=2, nil=True)],
    ids=["default", "two-of-clubs", "blind-nil-pass"],
)
@pytest.mark.parametrize("bidder", ["RB", "Random"])
def test_never_plays_an_illegal_card(rules: Rules, bidder: str) -> None:
    bot = make_bot(f"{bidder}+WRP")
    rng = random.Random(3)
    for i in range(60):
        r = RoundState(
            rules, dealer=i & 3, hands=deal_hands(f"wrp-legal/{i}"),
            scores_before=(0, -150) if i % 3 == 0 else (0, 0),
        )  # fmt: skip
        while not r.is_over:
            view = view_for(r, r.to_act)
            action = bot.act(view, rng)
            if isinstance(action, Play):
                assert action in view.legal_actions
            r.apply(action)  # raises IllegalAction on anything illegal


def test_full_matches_end() -> None:
    bot = make_bot("RB+WRP")
    rng = random.Random(1)
    for i in range(5):
        m = Match(Rules(winning_goal=200, losing_goal=-100), seed=f"wrp-match/{i}")
        while not m.is_over:
            m.apply(bot.act(view_for(m, m.round.to_act), rng))
        assert m.winner in (0, 1)


def test_fast() -> None:
    wrp = WRP()
    rng = random.Random(0)
    views = []
    for i in range(40):
        r = new_round() if i == 0 else RoundState(RULES, i & 3, deal_hands(f"wrp-fast/{i}"))
        if i:
            for _ in range(4):
                r.apply(Bid(r.to_act, 3))
        while not r.is_over:
            view = view_for(r, r.to_act)
            views.append(view)
            r.apply(Play(r.to_act, wrp.play(view, rng)))
    t0 = time.perf_counter()
    for view in views:
        wrp.play(view, rng)
    per_play = (time.perf_counter() - t0) / len(views)
    assert per_play < 1e-3, per_play
