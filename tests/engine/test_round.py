"""One round as a state machine: turn order, every refusal and its reason,
the play rules, the blind nil exchange and the bidding options."""

from __future__ import annotations

import random
import re
from types import SimpleNamespace

import pytest

from game.engine.actions import Bid, PassCards, Play, SeeCards
from game.engine.cards import SEAT_NAMES, SPADE_MASK, cards_of, parse_card, parse_hand
from game.engine.rules import Rules
from game.engine.state import IllegalAction, Phase, RoundState
from game.engine.tricks import Trick, trick_winner
from game.engine.view import view_for
from tests.support.engine_steps import BY_SUIT, ROTATING, bid_all, deal, play, random_step, snapshot

N, E, S, W = 0, 1, 2, 3
C = parse_card
DEFAULT = Rules()


def refused(r: RoundState, action, message: str) -> IllegalAction:
    """``action`` is refused with exactly ``message``, and nothing changes."""
    before = snapshot(r)
    with pytest.raises(IllegalAction) as e:
        r.apply(action)
    assert str(e.value) == message
    assert snapshot(r) == before
    # ``check`` gives the same reason without applying.
    with pytest.raises(IllegalAction, match=re.escape(message)):
        r.check(action)
    assert snapshot(r) == before
    return e.value


def playing_round(rules=DEFAULT, dealer=W, hands=ROTATING, bids=(3, 3, 3, 3), **kw):
    r = RoundState(rules, dealer, hands, **kw)
    bid_all(r, *bids)
    assert r.phase is Phase.PLAYING
    return r


def finished_round(seed=7) -> RoundState:
    r = RoundState(Rules(), W, ROTATING)
    rng = random.Random(seed)
    while not r.is_over:
        random_step(r, rng)
    return r


# ----- construction -------------------------------------------------------------------


def test_illegal_action_is_a_value_error():
    assert issubclass(IllegalAction, ValueError)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(hands=ROTATING[:3]), "four hands of 13"),
        (dict(hands=(ROTATING[0] | 1 << 1, ROTATING[1] ^ 1 << 1) + ROTATING[2:]), "13"),
        (dict(hands=(ROTATING[0],) * 4), "52 cards once each"),
        (dict(dealer=4), "dealer"),
        (dict(bags_before=(10, 0)), "bags carried"),
        (dict(bags_before=(0, -1)), "bags carried"),
    ],
)
def test_a_bad_start_is_refused(kwargs, message):
    args = dict(rules=Rules(), dealer=0, hands=ROTATING) | kwargs
    with pytest.raises(ValueError, match=message):
        RoundState(**args)


def test_start_of_round():
    r = RoundState(Rules(), dealer=S, hands=ROTATING, scores_before=(10, 20),
                   bags_before=(1, 2), round_number=4)  # fmt: skip
    assert r.phase is Phase.BIDDING
    assert r.to_act == W
    assert r.bids == [None] * 4
    assert r.cards_seen == [True] * 4  # nobody is 100 behind
    assert r.hands == list(ROTATING)
    assert (r.scores_before, r.bags_before, r.round_number) == ((10, 20), (1, 2), 4)
    assert not r.is_over and r.result is None


# ----- bidding order -------------------------------------------------------------------


@pytest.mark.parametrize("dealer", range(4))
def test_bidding_starts_left_of_dealer_and_goes_clockwise(dealer):
    r = RoundState(Rules(), dealer, ROTATING)
    order = []
    for n in (1, 2, 3, 4):
        seat = r.to_act
        order.append(seat)
        for other in range(4):
            if other != seat:
                refused(r, Bid(other, 2), f"it is {SEAT_NAMES[seat]}'s turn")
        r.apply(Bid(seat, n))
    assert order == [(dealer + k) % 4 for k in (1, 2, 3, 4)]
    assert r.bid_order == order
    assert r.bids[order[0]] == 1 and r.bids[dealer] == 4
    # Without a blind nil exchange, play starts left of the dealer.
    assert r.phase is Phase.PLAYING
    assert r.leader == r.to_act == (dealer + 1) % 4


def test_a_bid_cannot_be_changed():
    r = RoundState(Rules(), W, ROTATING)
    r.apply(Bid(N, 4))
    refused(r, Bid(N, 5), "it is East's turn")
    bid_all(r, 3, 3, 3)
    refused(r, Bid(N, 5), "the bidding is over")
    assert r.bids == [4, 3, 3, 3]


# ----- every refusal -------------------------------------------------------------------


def test_out_of_turn_in_every_phase():
    r = RoundState(Rules(), W, ROTATING)
    refused(r, Bid(E, 3), "it is North's turn")
    refused(r, Play(S, C("4C")), "it is North's turn")
    refused(r, PassCards(W, parse_hand("5C 9C")), "it is North's turn")
    r = playing_round()
    refused(r, Play(E, C("3C")), "it is North's turn")
    play(r, "2C")
    refused(r, Play(N, C("6C")), "it is East's turn")


@pytest.mark.parametrize("tricks", [14, -1, 100, True, False, "3", 3.0, None])
def test_a_bid_must_be_a_number_of_tricks(tricks):
    r = RoundState(Rules(), W, ROTATING)
    refused(r, Bid(N, tricks), "a bid is a number of tricks from 0 to 13")


def test_the_bidding_is_over():
    r = playing_round()
    refused(r, Bid(N, 3), "the bidding is over")
    refused(r, Bid(N, 0), "the bidding is over")


def test_cards_are_played_after_the_bidding():
    r = RoundState(Rules(), W, ROTATING)
    refused(r, Play(N, C("2C")), "cards are played after the bidding")
    bid_all(r, 3, 3)
    refused(r, Play(S, C("4C")), "cards are played after the bidding")


def test_there_is_no_card_exchange_without_blind_nil():
    r = RoundState(Rules(blind_nil_pass=2), W, ROTATING)
    refused(r, PassCards(N, parse_hand("2C 6C")), "there is no card exchange now")
    bid_all(r, 3, 3, 3, 3)  # no blind nil: straight to play
    assert r.phase is Phase.PLAYING
    refused(r, PassCards(N, parse_hand("2C 6C")), "there is no card exchange now")


def test_the_round_is_over():
    r = finished_round()
    assert r.is_over and r.phase is Phase.DONE
    for action in (Play(r.to_act, 0), Bid(r.to_act, 3), SeeCards(N),
                   PassCards(r.to_act, 3), Play(E, 51)):  # fmt: skip
        refused(r, action, "the round is over")
    assert r.legal_actions() == []


@pytest.mark.parametrize("card", [52, -1, True, "AS", None])
def test_that_is_not_a_card(card):
    r = playing_round()
    refused(r, Play(N, card), "that is not a card")


def test_you_do_not_hold_the_card():
    r = playing_round()
    refused(r, Play(N, C("AS")), "you do not hold the ace of spades")
    refused(r, Play(N, C("3C")), "you do not hold the three of clubs")
    play(r, "2C")
    refused(r, Play(E, C("2C")), "you do not hold the two of clubs")  # already played


def test_you_must_follow_the_led_suit():
    r = playing_round()
    play(r, "2C")
    refused(r, Play(E, C("2D")), "you must follow clubs")
    refused(r, Play(E, C("4S")), "you must follow clubs")  # no trumping while holding clubs
    play(r, "3C", "4C", "5C")  # W wins with the highest club
    assert r.to_act == W
    play(r, "4D")
    refused(r, Play(N, C("6C")), "you must follow diamonds")
    play(r, "5D", "6D", "7D")  # S wins
    play(r, "2H")
    refused(r, Play(W, C("2S")), "you must follow hearts")
    play(r, "3H", "4H", "5H")  # E wins
    assert r.tricks_won == [0, 1, 1, 1]
    assert r.to_act == E
    play(r, "7C")
    assert r.legal_actions() == [Play(S, C("8C")), Play(S, C("QC"))]


def test_spades_are_not_broken_yet():
    r = playing_round()
    assert r.spades_broken is False
    refused(r, Play(N, C("3S")), "spades are not broken yet")
    assert not any(a.card >= 39 for a in r.legal_actions())
    assert r.legal_play_mask() == ROTATING[N] & ~SPADE_MASK


def test_two_of_clubs_leads_the_first_trick():
    rules = Rules(first_lead="two_of_clubs")
    # Dealer North: East would lead by default, but North holds the two of clubs.
    r = playing_round(rules, dealer=N)
    assert r.leader == r.to_act == N
    refused(r, Play(N, C("6C")), "the two of clubs leads the first trick")
    refused(r, Play(N, C("5D")), "the two of clubs leads the first trick")
    refused(r, Play(N, C("3S")), "the two of clubs leads the first trick")
    refused(r, Play(E, C("3C")), "it is North's turn")
    assert r.legal_actions() == [Play(N, C("2C"))]
    play(r, "2C")
    assert r.legal_actions() == [Play(E, C(t)) for t in ("3C", "7C", "JC")]


@pytest.mark.parametrize("dealer", range(4))
def test_two_of_clubs_holder_leads_whoever_dealt(dealer):
    rules = Rules(first_lead="two_of_clubs")
    hands = (ROTATING[1], ROTATING[2], ROTATING[3], ROTATING[0])  # West holds 2C
    r = playing_round(rules, dealer=dealer, hands=hands)
    assert r.leader == r.to_act == W


def test_you_have_already_seen_your_cards():
    r = RoundState(Rules(), W, ROTATING)
    for seat in range(4):
        refused(r, SeeCards(seat), "you have already seen your cards")
    r = playing_round()
    refused(r, SeeCards(E), "you have already seen your cards")


def test_something_that_is_not_an_action():
    r = RoundState(Rules(), W, ROTATING)
    thing = SimpleNamespace(seat=N)
    refused(r, thing, f"{thing!r} is not an action")


# ----- blind nil --------------------------------------------------------------------------

BEHIND = (0, 150)  # North/South 150 behind East/West: N and S may bid blind nil


def blind_round(rules=DEFAULT, dealer=W, hands=ROTATING, scores=BEHIND):
    return RoundState(rules, dealer, hands, scores_before=scores)


def test_only_seats_100_behind_may_bid_blind_nil_and_have_not_seen_their_cards():
    r = blind_round()
    assert r.blind_nil_eligible == (True, False, True, False)
    assert r.cards_seen == [False, True, False, True]
    assert Bid(N, 0, blind=True) in r.legal_actions(N)
    assert SeeCards(N) in r.legal_actions(N)
    assert r.legal_actions(S) == [SeeCards(S)]  # not S's turn: it may only look
    assert r.legal_actions(E) == []


@pytest.mark.parametrize(
    "scores, eligible",
    [
        ((0, 99), (False, False, False, False)),
        ((0, 100), (True, False, True, False)),
        ((-150, -50), (True, False, True, False)),
        ((300, 180), (False, True, False, True)),
        ((0, 0), (False, False, False, False)),
    ],
)
def test_blind_nil_deficit_threshold(scores, eligible):
    r = blind_round(scores=scores)
    assert r.blind_nil_eligible == eligible
    assert r.cards_seen == [not e for e in eligible]


def test_blind_nil_min_deficit_option():
    assert blind_round(Rules(blind_nil_min_deficit=200), scores=(0, 150)).blind_nil_eligible == (
        False, False, False, False,
    )  # fmt: skip
    zero = blind_round(Rules(blind_nil_min_deficit=0), scores=(0, 0))
    assert zero.blind_nil_eligible == (True, True, True, True)


def test_blind_nil_needs_your_side_to_be_behind():
    """A seat whose side is not behind is told why it may not bid blind nil.

    It never chose to look at its cards (it never had the choice), so the
    reason must be the deficit, not "before you look at your cards".
    """
    r = blind_round(dealer=N)  # East bids first; E/W are ahead
    refused(r, Bid(E, 0, blind=True), "blind nil needs your side to be 100 behind")
    r = RoundState(Rules(blind_nil_min_deficit=250), W, ROTATING)
    refused(r, Bid(N, 0, blind=True), "blind nil needs your side to be 250 behind")


def test_blind_nil_must_be_bid_before_looking():
    r = blind_round()
    r.apply(SeeCards(N))
    assert r.cards_seen[N] is True
    refused(r, Bid(N, 0, blind=True), "blind nil must be bid before you look at your cards")
    assert Bid(N, 0, blind=True) not in r.legal_actions()
    assert Bid(N, 0) in r.legal_actions()  # plain nil is still fine
    refused(r, SeeCards(N), "you have already seen your cards")


def test_only_nil_can_be_bid_blind():
    r = blind_round()
    refused(r, Bid(N, 3, blind=True), "only nil can be bid blind")
    r = RoundState(Rules(), W, ROTATING)
    refused(r, Bid(N, 1, blind=True), "only nil can be bid blind")


def test_blind_nil_is_not_played_at_this_table():
    r = blind_round(Rules(blind_nil=False))
    assert r.blind_nil_eligible == (False,) * 4
    assert r.cards_seen == [True] * 4
    refused(r, Bid(N, 0, blind=True), "blind nil is not played at this table")
    assert not any(isinstance(a, Bid) and a.blind for a in r.legal_actions())


def test_see_cards_out_of_turn_and_view():
    r = blind_round()
    assert view_for(r, S).hand is None
    r.apply(SeeCards(S))  # North is to act; South may look any time during bidding
    assert r.to_act == N
    assert r.cards_seen == [False, True, True, True]
    assert r.actions == [SeeCards(S)]
    assert view_for(r, S).hand == ROTATING[S]
    assert view_for(r, N).hand is None
    bid_all(r, 3, 3)
    refused(r, Bid(S, 0, blind=True), "blind nil must be bid before you look at your cards")


def test_a_normal_bid_implicitly_looks():
    r = blind_round()
    r.apply(Bid(N, 4))
    assert r.cards_seen[N] is True
    assert r.blind == [False] * 4
    assert view_for(r, N).hand == ROTATING[N]


def test_blind_nil_without_exchange_goes_straight_to_play():
    r = blind_round()
    r.apply(Bid(N, 0, blind=True))
    assert r.cards_seen[N] is True  # a blind nil bidder picks up its cards after bidding
    bid_all(r, 3, 4, 3)
    assert r.blind == [True, False, False, False]
    assert r.bids == [0, 3, 4, 3]
    assert r.phase is Phase.PLAYING
    assert r.hands == list(ROTATING)


def test_blind_nil_exchange_niler_passes_first_then_partner():
    rules = Rules(blind_nil_pass=2)
    r = blind_round(rules)
    r.apply(Bid(N, 0, blind=True))
    bid_all(r, 3, 4, 3)
    assert r.phase is Phase.PASSING
    assert r.to_act == N
    assert r.pass_queue == [N, S]
    refused(r, PassCards(S, parse_hand("4C 8C")), "it is North's turn")
    refused(r, PassCards(N, parse_hand("AC")), "pass exactly 2 cards")
    refused(r, PassCards(N, parse_hand("AC KD JS")), "pass exactly 2 cards")
    refused(r, PassCards(N, 0), "pass exactly 2 cards")
    refused(r, PassCards(N, parse_hand("AC AS")), "you can only pass cards you hold")
    refused(r, Play(N, C("2C")), "cards are played after the bidding")
    refused(r, Bid(N, 3), "the bidding is over")
    refused(r, SeeCards(N), "you have already seen your cards")
    assert len(r.legal_actions()) == 78  # 13 choose 2
    assert r.legal_actions(S) == []

    r.apply(PassCards(N, parse_hand("AC JS")))
    assert r.hands[N] == ROTATING[N] & ~parse_hand("AC JS")
    assert r.hands[S] == ROTATING[S] | parse_hand("AC JS")
    assert r.phase is Phase.PASSING and r.to_act == S
    assert len(r.legal_actions()) == 105  # 15 choose 2: it may pass back what it got
    refused(r, PassCards(S, parse_hand("2C 6C")), "you can only pass cards you hold")
    refused(r, PassCards(N, parse_hand("6C TC")), "it is South's turn")

    r.apply(PassCards(S, parse_hand("AC 2H")))  # passes one of North's cards back
    assert r.hands[N] == (ROTATING[N] & ~parse_hand("JS")) | parse_hand("2H")
    assert r.hands[S] == (ROTATING[S] & ~parse_hand("2H")) | parse_hand("JS")
    assert [h.bit_count() for h in r.hands] == [13] * 4
    assert r.hands[E] == ROTATING[E] and r.hands[W] == ROTATING[W]
    assert r.passes == [PassCards(N, parse_hand("AC JS")), PassCards(S, parse_hand("AC 2H"))]
    assert r.phase is Phase.PLAYING
    assert r.leader == r.to_act == N  # left of the dealer
    refused(r, PassCards(N, parse_hand("6C TC")), "there is no card exchange now")
    # The cards passed are played by their new holder.
    refused(r, Play(N, C("JS")), "you do not hold the jack of spades")

    nv, sv = view_for(r, N), view_for(r, S)
    assert (nv.passed, nv.received) == (parse_hand("AC JS"), parse_hand("AC 2H"))
    assert (sv.passed, sv.received) == (parse_hand("AC 2H"), parse_hand("AC JS"))
    assert view_for(r, E).passed == view_for(r, E).received == 0
    assert view_for(r, None).exchanges_done == 2


def test_blind_nil_exchange_when_east_west_bid_blind():
    r = blind_round(Rules(blind_nil_pass=2), dealer=N, scores=(200, 50))
    assert r.blind_nil_eligible == (False, True, False, True)
    r.apply(Bid(E, 4))
    r.apply(Bid(S, 4))
    r.apply(Bid(W, 0, blind=True))
    r.apply(Bid(N, 4))
    assert r.phase is Phase.PASSING
    assert r.to_act == W
    refused(r, PassCards(E, parse_hand("3C 7C")), "it is West's turn")
    r.apply(PassCards(W, parse_hand("5C 9C")))
    assert r.to_act == E
    r.apply(PassCards(E, parse_hand("3C 7C")))
    assert r.phase is Phase.PLAYING
    assert r.to_act == E  # left of North


def test_two_of_clubs_leads_after_the_blind_nil_exchange():
    rules = Rules(blind_nil_pass=2, first_lead="two_of_clubs")
    r = blind_round(rules, dealer=E)  # South bids first; North holds the two of clubs
    r.apply(Bid(S, 4))
    r.apply(Bid(W, 3))
    r.apply(Bid(N, 0, blind=True))
    r.apply(Bid(E, 3))
    r.apply(PassCards(N, parse_hand("2C 6C")))
    r.apply(PassCards(S, parse_hand("4C 8C")))
    assert r.phase is Phase.PLAYING
    assert r.leader == r.to_act == S  # South now holds the two of clubs
    refused(r, Play(S, C("6C")), "the two of clubs leads the first trick")
    refused(r, Play(N, C("4C")), "it is South's turn")
    play(r, "2C")
    assert r.tricks == [] and r.trick == [C("2C")]


def test_two_of_clubs_passed_back_leads_from_the_niler():
    rules = Rules(blind_nil_pass=2, first_lead="two_of_clubs")
    r = blind_round(rules, dealer=W)
    r.apply(Bid(N, 0, blind=True))
    bid_all(r, 3, 4, 3)
    r.apply(PassCards(N, parse_hand("2C 6C")))
    r.apply(PassCards(S, parse_hand("2C 4C")))
    assert r.leader == r.to_act == N


# ----- the play -------------------------------------------------------------------------------

# East holds three low spades and ten diamonds; West the top diamonds and ten spades.
TRUMPS = deal(
    n="AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C",
    e="4S 3S 2S JD TD 9D 8D 7D 6D 5D 4D 3D 2D",
    s="AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H",
)


def test_spades_broken_by_trumping_allow_a_spade_lead_later():
    r = playing_round(hands=TRUMPS, dealer=W)
    play(r, "2C", "2S", "2H", "QD")  # East is void in clubs and trumps
    assert r.spades_broken is True
    assert r.tricks == [Trick(N, (C("2C"), C("2S"), C("2H"), C("QD")), E)]
    assert r.to_act == E
    assert Play(E, C("3S")) in r.legal_actions()
    play(r, "3S")
    assert r.trick == [C("3S")]
    play(r, "AH")  # South has no spades: any card
    refused(r, Play(W, C("KD")), "you must follow spades")
    assert [a.card for a in r.legal_actions()] == cards_of(r.hands[W] & SPADE_MASK)


def test_spades_not_broken_by_a_side_suit_discard():
    r = playing_round(hands=TRUMPS, dealer=W)
    play(r, "2C", "2D", "2H", "QD")  # nobody trumps
    assert r.spades_broken is False
    assert r.to_act == N  # the only club wins


def test_a_leader_holding_only_spades_may_lead_one():
    r = playing_round(hands=TRUMPS, dealer=N)
    assert r.to_act == E
    refused(r, Play(E, C("2S")), "spades are not broken yet")
    play(r, "2D", "2H", "QD", "2C")  # West wins with the queen
    assert r.to_act == W
    refused(r, Play(W, C("5S")), "spades are not broken yet")
    play(r, "KD", "3C", "3D", "3H")
    play(r, "AD", "4C", "4D", "4H")
    assert r.to_act == W and r.hands[W] & ~SPADE_MASK == 0
    assert r.spades_broken is False
    assert len(r.legal_actions()) == 10  # every spade
    play(r, "5S")
    assert r.spades_broken is True


def test_leader_with_only_spades_from_the_first_trick():
    r = playing_round(hands=BY_SUIT, dealer=S)  # West holds all the spades and leads
    assert r.to_act == W
    assert len(r.legal_actions()) == 13
    play(r, "2S", "2C", "2D", "2H")
    assert r.tricks_won == [0, 0, 0, 1]


@pytest.mark.parametrize(
    "leader, cards, winner",
    [
        (N, "2C 3C 4C 5C", W),
        (N, "AC 3C 4C 5C", N),
        (E, "KD AH AC QD", E),  # off-suit aces do not win
        (E, "KD AD 2S QD", W),  # the lowest spade beats the ace of the led suit
        (S, "9H 2S 3S AH", N),  # the highest spade wins
        (W, "2C 3D 4H 5D", W),  # nobody followed: the leader wins
        (W, "AS KS QS JS", W),
        (N, "3S AS 2S KS", E),
        (E, "2H 3H 4H 2S", N),
    ],
)
def test_trick_winner(leader, cards, winner):
    assert trick_winner(leader, [C(t) for t in cards.split()]) == winner


def test_trick_winner_leads_the_next_trick_and_counts():
    r = playing_round()
    play(r, "2C", "3C", "4C", "5C")
    assert r.tricks[-1] == Trick(N, (0, 1, 2, 3), W)
    assert r.tricks_won == [0, 0, 0, 1]
    assert r.leader == r.to_act == W
    assert r.trick_number == 2
    assert r.played_mask() == parse_hand("2C 3C 4C 5C")


def test_a_whole_round_scores_at_the_end():
    r = finished_round(seed=3)
    assert len(r.tricks) == 13 and sum(r.tricks_won) == 13
    assert r.result is not None
    assert r.result[0].score_before == 0
    assert r.hands == [0, 0, 0, 0]
    assert r.played_mask() == (1 << 52) - 1


def test_copy_is_independent():
    r = playing_round()
    c = r.copy()
    play(c, "2C", "3C")
    assert (
        r.trick == []
        and r.hands == list(ROTATING)
        and r.actions == [Bid(s, 3) for s in (0, 1, 2, 3)]
    )
    assert c.trick == [0, 1]


def test_round_type_needs_the_bidding_to_be_over():
    r = RoundState(Rules(), W, ROTATING)
    bid_all(r, 3, 3)
    with pytest.raises(ValueError, match="bidding is not over"):
        r.round_type(N)
    bid_all(r, 0, 3)
    assert r.round_type(N).name == "PARTNER_NIL"
    assert r.nil_position(1).value == "they nil"


# ----- bidding options -----------------------------------------------------------------------


def bids_offered(r: RoundState) -> list[int]:
    return [a.tricks for a in r.legal_actions() if isinstance(a, Bid) and not a.blind]


def test_team_bid_cap_13():
    r = RoundState(Rules(team_bid_cap_13=True), W, ROTATING)
    r.apply(Bid(N, 5))
    r.apply(Bid(E, 13))  # the first of a side may bid 13 (partner can bid nil)
    refused(r, Bid(S, 9), "your side's bids may not total more than 13")
    refused(r, Bid(S, 13), "your side's bids may not total more than 13")
    assert bids_offered(r) == list(range(0, 9))
    r.apply(Bid(S, 8))
    assert bids_offered(r) == [0]  # East bid 13: only nil is left for West
    refused(r, Bid(W, 1), "your side's bids may not total more than 13")
    r.apply(Bid(W, 0))
    assert r.phase is Phase.PLAYING


def test_without_the_cap_a_side_may_bid_more_than_13():
    r = RoundState(Rules(), W, ROTATING)
    bid_all(r, 10, 1, 10, 1)
    assert r.bids == [10, 1, 10, 1]


def test_team_bid_cap_13_without_nil_leaves_partner_one():
    rules = Rules(team_bid_cap_13=True, nil=False, blind_nil=False)
    r = RoundState(rules, W, ROTATING)
    refused(r, Bid(N, 13), "bid at most 12 so that your partner can bid at least 1")
    assert bids_offered(r) == list(range(1, 13))
    r.apply(Bid(N, 12))
    r.apply(Bid(E, 2))
    assert bids_offered(r) == [1]
    refused(r, Bid(S, 2), "your side's bids may not total more than 13")


def test_min_team_bid():
    r = RoundState(Rules(min_team_bid=4), W, ROTATING)
    r.apply(Bid(N, 1))  # the first of a side is free
    r.apply(Bid(E, 0))  # East nil: West is exempt
    refused(r, Bid(S, 2), "your side must bid at least 4 together")
    refused(r, Bid(S, 1), "your side must bid at least 4 together")
    assert bids_offered(r) == [0] + list(range(3, 14))
    r.apply(Bid(S, 3))
    assert bids_offered(r) == list(range(0, 14))
    r.apply(Bid(W, 1))
    assert r.bids == [1, 0, 3, 1]


def test_min_team_bid_does_not_refuse_nil():
    r = RoundState(Rules(min_team_bid=5), W, ROTATING)
    bid_all(r, 2, 3, 0)
    assert r.bids[S] == 0


def test_min_team_bid_high_partner_bid_already_meets_it():
    r = RoundState(Rules(min_team_bid=4), W, ROTATING)
    bid_all(r, 6, 3)
    assert bids_offered(r) == list(range(0, 14))


def test_nil_not_played_at_this_table():
    r = RoundState(Rules(nil=False, blind_nil=False), W, ROTATING)
    refused(r, Bid(N, 0), "nil is not played at this table: bid at least 1")
    assert bids_offered(r) == list(range(1, 14))
    bid_all(r, 1, 1, 1, 1)
    assert r.phase is Phase.PLAYING


def test_default_bids_offered_are_nil_through_13():
    r = RoundState(Rules(), W, ROTATING)
    assert r.legal_actions() == [Bid(N, n) for n in range(14)]


# ----- robustness -----------------------------------------------------------------------------


@pytest.mark.parametrize("seat", [4, -1, 7, True, None, "N"])
@pytest.mark.parametrize(
    "make", [SeeCards, lambda seat: Bid(seat, 3), lambda seat: Play(seat, 0),
             lambda seat: PassCards(seat, 3)],
)  # fmt: skip
def test_a_seat_that_does_not_exist_is_refused(seat, make):
    """East/West are behind, so West has not looked: SeeCards(-1) must not look for West."""
    r = blind_round(scores=(150, 0))
    assert r.cards_seen == [True, False, True, False]
    refused(r, make(seat), "there is no such seat")


def test_no_such_seat_comes_before_the_round_is_over():
    r = finished_round()
    refused(r, SeeCards(5), "there is no such seat")
