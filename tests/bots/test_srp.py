"""SRP: always legal, and each playing habit in a position built by hand."""

from __future__ import annotations

import random

import pytest

from bots.registry import make_bot
from bots.srp import SRP
from game.engine.actions import Bid, Play
from game.engine.cards import format_card, parse_card
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import view_for
from tests.support.positions import position, view_of

srp = SRP()


def srp_plays(r: RoundState) -> str:
    return format_card(srp.play(view_of(r), random.Random(0)))


def play_out(seed: int, rules: Rules, scores: tuple[int, int] = (0, 0)) -> RoundState:
    rng = random.Random(seed)
    hands = deal_hands(f"srp-legal/{seed}")
    r = RoundState(rules, dealer=seed % 4, hands=hands, scores_before=scores)
    bot = make_bot("Random+SRP")
    while r.phase is Phase.BIDDING:
        seat = r.to_act
        if not r.cards_seen[seat] and r.can_bid_blind_nil(seat) and rng.random() < 0.5:
            r.apply(Bid(seat, 0, blind=True))
            continue
        r.cards_seen[seat] = True
        # Random bids with plenty of nils.
        lo, hi = r.bid_range(seat)
        n = 0 if rules.nil and rng.random() < 0.3 else rng.randint(lo, min(hi, lo + 5))
        r.apply(Bid(seat, n))
    while r.phase is not Phase.DONE:
        seat = r.to_act
        view = view_for(r, seat)
        action = bot.act(view, rng)
        if r.phase is Phase.PLAYING:
            legal = [a.card for a in view.legal_actions if isinstance(a, Play)]
            assert isinstance(action, Play) and action.card in legal
        r.apply(action)  # raises IllegalAction on an illegal card
    return r


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(first_lead="two_of_clubs", nil_tricks_count_for_team=False),
        Rules(nil=False, blind_nil=False),
        Rules(blind_nil_pass=2),
    ],
    ids=["default", "two-of-clubs", "no-nil", "blind-nil-pass"],
)
def test_srp_never_plays_an_illegal_card(rules: Rules) -> None:
    for seed in range(100):
        scores = (0, 150) if seed % 3 == 0 else (0, 0)  # blind nil possible for N/S
        r = play_out(seed, rules, scores)
        assert sum(r.tricks_won) == 13


def test_srp_is_registered_and_deterministic() -> None:
    assert make_bot("Random+SRP").player.name == "SRP"
    r = position({}, (3, 3, 3, 3))
    v = view_of(r)
    assert len({srp.play(v, random.Random(s)) for s in range(5)}) == 1


# ----- technique -------------------------------------------------------------------
# Dealer West (3): North leads the first trick. Bids sum 12 ("over") unless said.


def test_second_hand_low() -> None:
    r = position({0: "5H", 1: "KH 7H 2H AS"}, (3, 3, 3, 3), plays="5H")
    assert srp_plays(r) == "2H"


def test_third_hand_high_with_the_cheapest_winner() -> None:
    r = position({0: "3H", 1: "9H", 2: "AH JH TH 4H"}, (3, 3, 3, 3), plays="3H 9H")
    assert srp_plays(r) == "TH"


def test_fourth_hand_wins_cheaply() -> None:
    # South (an opponent of West) is winning with the nine.
    r = position({0: "3H", 1: "4H", 2: "9H", 3: "AH QH TH 2H"}, (3, 3, 3, 3), plays="3H 4H 9H")
    assert srp_plays(r) == "TH"


def test_does_not_overtake_a_partner_winning_with_the_boss() -> None:
    hands = {0: "AH 2H", 1: "5H 3H", 2: "KH 4H", 3: "QH JH TH 9H 8H 7H 6H"}
    r = position(hands, (3, 3, 3, 3), plays="AH 5H")
    assert srp_plays(r) == "4H"


def test_last_hand_does_not_overtake_a_winning_partner() -> None:
    r = position({0: "2H", 1: "JH", 2: "5H", 3: "QH 3H"}, (3, 3, 3, 3), plays="2H JH 5H")
    assert srp_plays(r) == "3H"


def test_trumps_with_the_lowest_spade_that_wins() -> None:
    # East is void in hearts.
    r = position({0: "AH", 1: "2S 7S KS 2C 3C 4C 5C 6C 7C 8C 9C TC JC"}, (3, 3, 3, 3), plays="AH")
    assert srp_plays(r) == "2S"


def test_overtrumps_only_as_high_as_needed() -> None:
    # North leads the ace of hearts, East trumps with the five, South is void.
    r = position(
        {
            0: "AH",
            1: "5S 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC",
            2: "3S 8S QS 2D 3D 4D 5D 6D 7D 8D 9D TD JD",
        },
        (3, 3, 3, 3),
        plays="AH 5S",
    )
    assert srp_plays(r) == "8S"


def test_cashes_a_boss_when_tricks_are_needed() -> None:
    r = position({0: "AD 4D 3H 5H 8C"}, (5, 3, 5, 3))
    assert srp_plays(r) == "AD"


def test_does_not_lead_from_king_doubleton_into_the_ace() -> None:
    r = position({0: "KH 4H 9C 7C 5C 8D 6D"}, (5, 3, 5, 3))
    assert parse_card(srp_plays(r)) // 13 != parse_card("KH") // 13


def test_gives_the_high_low_doubleton_signal() -> None:
    # West leads the ace of diamonds; North holds 9-3 of diamonds and spades to cut.
    hands = {3: "AD KD", 0: "9D 3D 5S 6S", 1: "QD JD TD 8D 7D 6D", 2: "5D 4D 2D"}
    r = position(hands, (3, 3, 3, 3), dealer=2, plays="AD")
    assert srp_plays(r) == "9D"


def test_reads_partner_signal_and_leads_the_suit() -> None:
    # South plays QH then 6H under North's bosses: a doubleton, so North leads hearts.
    hands = {0: "AH KH 2H 3H AC", 1: "4H 5H", 2: "QH 6H 7S", 3: "7H 8H 9H"}
    r = position(hands, (4, 3, 4, 3), plays="AH 4H QH 7H  KH 5H 6H 8H")
    assert srp_plays(r) in ("2H", "3H")


# ----- nil -------------------------------------------------------------------------


def test_niler_ducks_with_its_highest_losing_card() -> None:
    r = position({0: "QH", 1: "KH JH 9H 3H"}, (3, 0, 3, 3), plays="QH")
    assert srp_plays(r) == "JH"


def test_niler_void_sheds_its_most_dangerous_card() -> None:
    hands = {0: "5C", 1: "AH 2H 3D 4D 5D 6D 7D 8D 9D TD 2S 3S 4S"}
    r = position(hands, (3, 0, 3, 3), plays="5C")
    assert srp_plays(r) == "AH"


def test_niler_leads_its_safest_low_card() -> None:
    hands = {0: "KH 2H 9C 8C 7D 5S"}
    r = position(hands, (0, 3, 3, 3))
    assert srp_plays(r) == "2H"


def test_coverer_wins_over_a_niling_partner() -> None:
    # Dealer South: West leads. North bid nil and is winning with the eight.
    hands = {3: "3H AH", 0: "8H 4H", 1: "5H 9H QH", 2: "KH TH 2H 6H 7H JH"}
    r = position(hands, (0, 3, 4, 3), dealer=2, plays="3H 8H 5H")
    assert srp_plays(r) == "TH"


def test_coverer_plays_high_before_a_niling_partner() -> None:
    # East leads; South second to play, North (nil) plays last.
    hands = {1: "9H 3H", 2: "KH 4H", 0: "QH 2H 5H", 3: "AH 6H 7H 8H TH JH"}
    r = position(hands, (0, 3, 4, 3), dealer=0, plays="9H")
    assert srp_plays(r) == "KH"


def test_coverer_leads_high() -> None:
    hands = {2: "AC 7C 3C 9D 4D", 0: "2C"}
    r = position(hands, (0, 3, 4, 3), dealer=1)
    assert srp_plays(r) == "AC"


def test_sets_an_opposing_niler_by_leading_low() -> None:
    # East bid nil; North leads its two of hearts.
    r = position({0: "2H KH 9H 4C 7C", 1: "2C 3C 2D 3D", 2: "2S"}, (3, 0, 4, 3))
    assert srp_plays(r) == "2H"


def test_never_overtakes_an_opposing_niler() -> None:
    # North leads, East (nil) is winning with the nine: South stays under it.
    r = position({0: "6D", 1: "9D", 2: "QD 7D 3D"}, (3, 0, 4, 3), plays="6D 9D")
    assert srp_plays(r) == "7D"


def test_plays_under_when_the_niler_is_still_to_play() -> None:
    # West leads, North plays second with East (nil) still to play: low.
    r = position({3: "5D", 0: "KD 8D 2D"}, (3, 0, 4, 3), dealer=2, plays="5D")
    assert srp_plays(r) == "2D"


# ----- bags -------------------------------------------------------------------------


def test_ducks_in_an_under_round_when_sure_takes_make_the_contract() -> None:
    # Bids sum 4 (strong under); North's AS KS are two sure takes for the 1+1
    # contract, so North ducks the heart with its highest heart under the nine.
    hands = {1: "9H 3H 6H", 2: "2H 8H TH", 3: "5H JH KH AH", 0: "AS KS QH 4H 7H"}
    r = position(hands, (1, 1, 1, 1), dealer=0, plays="9H 2H 5H")
    assert srp_plays(r) == "7H"
    # The same trick in an over round (bids 3 4 3 3): North takes it.
    r = position(hands, (3, 4, 3, 3), dealer=0, plays="9H 2H 5H")
    assert srp_plays(r) == "QH"
