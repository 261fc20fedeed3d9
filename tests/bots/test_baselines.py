"""The baseline bidders IO, MS and RB follow the paper's rules and always bid legally."""

from __future__ import annotations

import random

import pytest

from bots.baselines import (
    IOBidder,
    MSBidder,
    RBBidder,
    io_nil,
    io_regular,
    legal_bid,
    ms_regular,
    naive_nil,
    rb_card_value,
    rb_regular,
    rb_value,
)
from bots.registry import make_bot
from game.engine.actions import Bid
from game.engine.cards import ACE, FULL_DECK, KING, SPADES, TWO, parse_hand
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import RoundState
from game.engine.view import SeatView, view_for

RULES = Rules(blind_nil=False)


def round_with(hand: str, seat: int = 0, prior_bids: tuple[int, ...] = (), rules: Rules = RULES):
    """A round where ``seat`` holds ``hand`` and the seats before it bid ``prior_bids``."""
    mine = parse_hand(hand)
    assert mine.bit_count() == 13
    rest = [c for c in range(52) if not mine >> c & 1]
    hands = [0, 0, 0, 0]
    hands[seat] = mine
    others = [s for s in range(4) if s != seat]
    for i, c in enumerate(rest):
        hands[others[i % 3]] |= 1 << c
    assert hands[0] | hands[1] | hands[2] | hands[3] == FULL_DECK
    # The first bidder is left of the dealer; seat bids after len(prior_bids) others.
    first = (seat - len(prior_bids)) & 3
    r = RoundState(rules, dealer=(first - 1) & 3, hands=tuple(hands))
    for n in prior_bids:
        r.apply(Bid(r.to_act, n))
    assert r.to_act == seat
    return r


def view_with(hand: str, seat: int = 0, prior_bids: tuple[int, ...] = ()) -> SeatView:
    return view_for(round_with(hand, seat, prior_bids), seat)


# ----- the naive nil classifier (RB, MS) -------------------------------------------

FIRST_EXAMPLE = "2C 3C JC 2H 3H 4H 5H 6H 7H 8H 9H TH JH"  # appendix F.2: no nil
SECOND_EXAMPLE = "5D 8D TD AD 5C 8C TC 5H 8H TH 5S 8S TS"  # appendix F.2: nil


def test_paper_first_example_is_no_nil() -> None:
    assert not naive_nil(parse_hand(FIRST_EXAMPLE), None)


def test_paper_second_example_is_nil() -> None:
    assert naive_nil(parse_hand(SECOND_EXAMPLE), None)
    assert naive_nil(parse_hand(SECOND_EXAMPLE), 4)


@pytest.mark.parametrize(
    "hand",
    [
        "6D 8D TD AD 5C 8C TC 5H 8H TH 5S 8S TS",  # lowest diamond above 5
        "5D 9D TD AD 5C 8C TC 5H 8H TH 5S 8S TS",  # second lowest above 8
        "5D 8D JD AD 5C 8C TC 5H 8H TH 5S 8S TS",  # third lowest above T
        "2D 3D 4D 5D 2C 3C 4C 2H 3H 2S 3S 4S 5S",  # four spades
        "2D 3D 4D 5D 6D 2C 3C 4C 2H 3H 4H 2S KS",  # a king of spades, second lowest
    ],
)
def test_naive_nil_rejects_each_vulnerability(hand: str) -> None:
    assert not naive_nil(parse_hand(hand), None)


def test_naive_nil_checks_only_the_cards_a_short_suit_has() -> None:
    # Clubs: 2 and 7 (two cards); hearts void; spades 4, 6, 9 (third no higher than T).
    hand = parse_hand("2C 7C 2D 3D 4D 5D 6D 7D 8D AD 4S 6S 9S")
    assert naive_nil(hand, None)
    # A singleton higher than 5 is a vulnerability.
    assert not naive_nil(parse_hand("6C 2D 3D 4D 5D 6D 7D 8D 9D AD 4S 6S 9S"), None)


def test_naive_nil_not_when_partner_bid_nil() -> None:
    assert not naive_nil(parse_hand(SECOND_EXAMPLE), 0)


@pytest.mark.parametrize("bidder", [RBBidder(), MSBidder()])
def test_rb_and_ms_bid_nil_with_the_second_example(bidder) -> None:
    assert bidder.bid(view_with(SECOND_EXAMPLE), random.Random(0)) == Bid(0, 0)
    # Partner (North, seat 0) bid nil: the same hand bids a regular contract.
    b = bidder.bid(view_with(SECOND_EXAMPLE, seat=2, prior_bids=(0, 3)), random.Random(0))
    assert b.seat == 2 and b.tricks >= 1


@pytest.mark.parametrize("bidder", [RBBidder(), MSBidder()])
def test_rb_and_ms_do_not_bid_nil_with_the_first_example(bidder) -> None:
    assert bidder.bid(view_with(FIRST_EXAMPLE), random.Random(0)).tricks >= 1


# ----- IO ---------------------------------------------------------------------------


def test_io_regular_values() -> None:
    # AS KS TS: 3; 9S 4S: 0.8; AH KH: 2; AC: 1; KD 5D ({Kx}): 0.5 -> 7.3 -> 7.
    assert io_regular(parse_hand("AS KS TS 9S 4S AH KH 2H AC 3C KD 5D 2D")) == 7
    # Kx in two suits and one low spade: 0.5 + 0.5 + 0.4 = 1.4 -> 1.
    assert io_regular(parse_hand("KH 2H KC 3C 2S 2D 3D 4D 5D 6D 7D 8D 9D")) == 1
    # A singleton K is worth nothing; 4 low spades 1.6 -> 2.
    assert io_regular(parse_hand("KH 2S 3S 4S 5S 2D 3D 4D 5D 6D 7D 8D 9D")) == 2
    # Rounding: halves go up (2.5 -> 3), and the bid is at least 1.
    assert io_regular(parse_hand("AH KC 2C 2D 3D 4D 5D 6D 7D 8D 9D TD JD")) == 2  # 1.5 -> 2
    assert io_regular(parse_hand("2C 3C 4C 5C 2D 3D 4D 5D 6D 2H 3H 4H 5H")) == 1


NIL_HAND = "QH 2H 3H QC 2C 3C 9S 5S 2S 2D 3D 4D JD"  # no A or K, no A-T spade, 3 spades


def test_io_nil_condition() -> None:
    hand = parse_hand(NIL_HAND)
    assert io_regular(hand) <= 3
    assert io_nil(hand, io_regular(hand), 4)
    assert io_nil(hand, io_regular(hand), 7)
    assert not io_nil(hand, io_regular(hand), 3)  # partner bid below 4
    assert not io_nil(hand, io_regular(hand), None)  # partner has not bid
    assert not io_nil(hand, io_regular(hand), 0)
    with_king = parse_hand("KH 2H 3H QC 2C 3C 9S 5S 2S 2D 3D 4D JD")
    assert not io_nil(with_king, io_regular(with_king), 4)
    with_ten_of_spades = parse_hand("QH 2H 3H QC 2C 3C TS 5S 2S 2D 3D 4D JD")
    assert not io_nil(with_ten_of_spades, io_regular(with_ten_of_spades), 4)
    four_spades = parse_hand("QH 2H 3H QC 2C 3C 9S 5S 3S 2S 3D 4D JD")
    assert not io_nil(four_spades, io_regular(four_spades), 4)


def test_io_bidder_nil_needs_partner_bid() -> None:
    io = IOBidder()
    # South (seat 2) bids after North bid 4: nil.
    assert io.bid(view_with(NIL_HAND, seat=2, prior_bids=(4, 2)), random.Random(0)).tricks == 0
    # First to bid: the regular bid.
    assert io.bid(view_with(NIL_HAND), random.Random(0)).tricks == io_regular(parse_hand(NIL_HAND))


# ----- MS ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "expected"),
    [
        # AS, AH, KH (4 long), QS (3 spades) = 4; KC singleton no; singleton club
        # with exactly three spades +1 -> 5.
        ("AS QS 5S AH KH 7H 3H KC 9D 8D 7D 6D 4D", 5),
        # Q of spades in a doubleton without the A: not counted; Kx kings count.
        ("QS 5S AH KH QH JH KC 2C 9D 8D 7D 6D 5D", 3),
        # Q of spades in a doubleton with the A: counted.
        ("AS QS 2H 3H 4H 5H 2C 3C 4C 2D 3D 4D 5D", 2),
        # Six spades: KS, QS, and three beyond the first three -> 5.
        ("KS QS 9S 8S 7S 6S 2H 3H 4H 2C 3C 2D 3D", 5),
        # Spade void: three aces minus one.
        ("AH 2H 3H 4H AC 2C 3C 4C 5C AD 2D 3D 4D", 2),
        # Singleton spade (the ace): 1 - 1, then at least 1.
        ("AS 2H 3H 4H 5H 2C 3C 4C 5C 2D 3D 4D 5D", 1),
        # Singleton Q of spades: not counted, -1 for the singleton.
        ("QS AH 3H 4H 5H AC 3C 4C 5C AD 3D 4D 5D", 2),
        # Four spades (one beyond three) and short side suits: AS, KH, +1, no bonus.
        ("AS 4S 3S 2S KH 3H 4H 5H 6H 7H 8H 9H 2C", 3),
        # Exactly three spades with short side suits: AH +1 (once for two short suits).
        ("4S 3S 2S AH 2H 3H 4H 5H 6H 7H 8H 9H 2C", 2),
    ],
)
def test_ms_regular_bid(hand: str, expected: int) -> None:
    assert ms_regular(parse_hand(hand)) == expected


def test_ms_never_bids_below_one() -> None:
    hand = parse_hand("9C 8C 7C 6C 9D 8D 7D 6D 9H 8H 7H 6H 5H")  # spade void, no honours
    assert ms_regular(hand) == 1


# ----- RB ---------------------------------------------------------------------------


def test_rb_table_values() -> None:
    assert rb_card_value(ACE, SPADES, 3) == 1.05
    assert rb_card_value(ACE, SPADES, 1) < rb_card_value(ACE, SPADES, 5)
    assert rb_card_value(KING, SPADES, 1) < rb_card_value(KING, SPADES, 2)
    assert rb_card_value(KING, 2, 1) < rb_card_value(KING, 2, 2)  # a bare side king
    assert rb_card_value(TWO, 2, 5) == 0.0  # low side cards are worth nothing
    assert rb_card_value(TWO, SPADES, 3) < rb_card_value(TWO, SPADES, 6)
    assert rb_card_value(ACE, 0, 13) == rb_card_value(ACE, 0, 7)  # 7+ share a column


def test_rb_regular_bid() -> None:
    # AS KS QS (3 spades): 1.05 + 0.8 + 0.65; AH (len 2): 0.75; KD (len 3): 0.45 -> 3.7 -> 4.
    hand = parse_hand("AS KS QS AH 2H KD 3D 4D 2C 3C 4C 5C 6C")
    assert rb_value(hand) == pytest.approx(3.7)
    assert rb_regular(hand) == 4
    # Halves round up: AS alone (0.6) + a side ace (0.75) + side Q in a
    # doubleton (0.2) = 1.55 -> 2.
    assert rb_regular(parse_hand("AS AH 2H QD 2D 2C 3C 4C 5C 6C 7C 8C 9C")) == 2
    # Nothing at all still bids 1.
    assert rb_regular(parse_hand("9C 8C 7C 6C 9D 8D 7D 6D 9H 8H 7H 6H 5H")) == 1


def test_rb_averages_like_a_recreational_table() -> None:
    sums = []
    for i in range(400):
        r = RoundState(RULES, dealer=i & 3, hands=deal_hands(f"rb-average/{i}"))
        for _ in range(4):
            r.apply(RBBidder().bid(view_for(r, r.to_act), random.Random(i)))
        sums.append(sum(b for b in r.bids if b is not None))
    mean = sum(sums) / len(sums)
    assert 9.8 <= mean <= 11.5, mean


# ----- every bid is legal -------------------------------------------------------------


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(nil=False, blind_nil=False),
        Rules(team_bid_cap_13=True, min_team_bid=4, blind_nil=False),
        Rules(team_bid_cap_13=True, nil=False, blind_nil=False, min_team_bid=6),
    ],
    ids=["default", "no-nil", "cap-13-min-4", "no-nil-cap-min-6"],
)
@pytest.mark.parametrize("name", ["RB", "MS", "IO"])
def test_bids_are_always_legal(name: str, rules: Rules) -> None:
    bot = make_bot(f"{name}+Random")
    rng = random.Random(7)
    for i in range(150):
        r = RoundState(
            rules, dealer=i & 3, hands=deal_hands(f"legal/{i}"),
            scores_before=(0, -150) if i % 5 == 0 else (0, 0),
        )  # fmt: skip
        while r.phase.value == "bidding":
            seat = r.to_act
            view = view_for(r, seat)
            if rng.random() < 0.5:  # a random earlier bid, to vary what the bidder faces
                action = rng.choice(list(view.legal_actions))
            else:
                action = bot.act(view, rng)
                assert action in view.legal_actions
            r.apply(action)


def test_legal_bid_clamps() -> None:
    r = round_with(NIL_HAND, seat=2, prior_bids=(10, 2),
                   rules=Rules(team_bid_cap_13=True, blind_nil=False))  # fmt: skip
    view = view_for(r, 2)
    assert legal_bid(view, 5) == Bid(2, 3)
    assert legal_bid(view, 0) == Bid(2, 0)
    r = round_with(NIL_HAND, seat=0, rules=Rules(nil=False, blind_nil=False))
    assert legal_bid(view_for(r, 0), 0) == Bid(0, 1)
