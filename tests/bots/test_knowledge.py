"""What a seat infers from its view: voids, bosses, nils, contracts, sure takes, signals."""

from __future__ import annotations

import random

import pytest

from bots.knowledge import Knowledge, sure_takes
from game.engine.actions import Bid, Play
from game.engine.cards import CLUBS, DIAMONDS, HEARTS, SPADES, parse_card, parse_hand
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.tricks import beaters, beats
from game.engine.view import view_for
from tests.support.positions import position, view_of


def c(text: str) -> int:
    return parse_card(text)


# ----- sure future takes (appendix D.1) -------------------------------------------


def spades_out(*ranks: str) -> int:
    return parse_hand(" ".join(r + "S" for r in ranks))


ALL_SPADES = spades_out(*"23456789TJQKA")


def test_ace_of_spades_is_one_sure_take() -> None:
    assert sure_takes(parse_hand("AS"), ALL_SPADES & ~parse_hand("AS")) == 1


def test_king_queen_of_spades_is_one_sure_take() -> None:
    hand = parse_hand("KS QS")
    assert sure_takes(hand, ALL_SPADES & ~hand) == 1


def test_four_spades_when_seven_were_played_are_two_sure_takes() -> None:
    hand = parse_hand("2S 3S 4S 5S")
    played = spades_out(*"6789TJQ")  # seven spades played
    unseen = ALL_SPADES & ~hand & ~played  # AS KS
    assert sure_takes(hand, unseen) == 2


def test_boss_forces_out_an_opponent_spade() -> None:
    # A led first draws one of the two spades over the 5 and the 4.
    assert sure_takes(parse_hand("AS 5S 4S"), parse_hand("7S 6S")) == 2


@pytest.mark.parametrize(
    ("hand", "unseen", "sure"),
    [
        ("", "AS", 0),
        ("2S", "", 1),
        ("AH KH", "AS", 0),  # side suits are never sure
        ("AS KS QS", "JS TS", 3),
        ("KS", "AS", 0),
        ("KS 2S", "AS", 1),  # outnumbering
        ("QS JS", "AS KS", 0),
        ("QS JS TS", "AS KS", 1),
        ("AS QS", "KS JS", 1),  # the queen can be finessed by K over it... worst case
    ],
)
def test_sure_takes_table(hand: str, unseen: str, sure: int) -> None:
    assert sure_takes(parse_hand(hand), parse_hand(unseen)) == sure


def brute_sure(mine: list[int], theirs: list[int]) -> int:
    """Leader-always-leads one-suit whist by plain minimax (no compression)."""
    if not mine:
        return 0
    if not theirs:
        return len(mine)
    best = 0
    for a in mine:
        worst = 99
        for b in theirs:
            rest = brute_sure([x for x in mine if x != a], [y for y in theirs if y != b])
            worst = min(worst, rest + (a > b))
        best = max(best, worst)
    return best


def test_sure_takes_matches_brute_force() -> None:
    rng = random.Random(7)
    for _ in range(150):
        ranks = rng.sample(range(13), rng.randint(1, 8))
        split = rng.randint(0, len(ranks))
        mine, theirs = ranks[:split], ranks[split:]
        hand = sum(1 << (39 + r) for r in mine)
        unseen = sum(1 << (39 + r) for r in theirs)
        assert sure_takes(hand, unseen) == brute_sure(mine, theirs), (mine, theirs)


FULL_HANDS = {
    0: "2S 3S 4S 5S 2H 3H 4H 2C 3C 4C 2D 3D 4D",
    1: "6S 7S 8S 9S TS 5C 6C 7C 8C 9C TC JC QC",
    2: "JS QS 5H 6H 7H 8H 9H TH JH QH KH AH KC",
    3: "KS AS 5D 6D 7D 8D 9D TD JD QD KD AD AC",
}


def test_knowledge_sure_takes_when_seven_spades_were_played() -> None:
    r = position(FULL_HANDS, (3, 3, 3, 3), plays="2H 6S AH KS  5D 2D 7S JS  KH AS 3H 8S  6D 3D 9S")
    k = Knowledge(view_for(r, 0))
    assert (k.played >> 39).bit_count() == 7
    assert k.sure == 2  # 2S-5S against TS and QS unseen


def test_voids_shown_by_failing_to_follow() -> None:
    r = position(FULL_HANDS, (3, 3, 3, 3), plays="2H 6S AH KS  5D 2D 7S")
    k = Knowledge(view_for(r, 2))
    assert k.void_in(1, HEARTS) and k.void_in(3, HEARTS)
    assert k.void_in(1, DIAMONDS)
    assert not k.void_in(0, HEARTS) and not k.void_in(2, HEARTS)
    assert not k.void_in(1, CLUBS) and not k.void_in(1, SPADES)
    # A void seat may hold no card of that suit.
    assert not k.possible(1) & parse_hand("5H 6H 7H 8H 9H TH JH QH KH 4H 3H")


def test_void_in_spades_when_failing_to_follow_a_spade_lead() -> None:
    hands2 = {
        0: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
        1: "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
    }
    r = position(hands2, (3, 3, 3, 3), plays="AS 2H")
    k = Knowledge(view_for(r, 2))
    assert k.void_in(1, SPADES)
    # North led a spade before spades were broken: it holds only spades.
    assert k.void_in(0, CLUBS) and k.void_in(0, DIAMONDS) and k.void_in(0, HEARTS)


def test_current_winner_and_boss() -> None:
    r = position(FULL_HANDS, (3, 3, 3, 3), plays="2H 6S AH")
    k = Knowledge(view_of(r))
    assert k.seat == 3 and k.lead_suit == HEARTS
    assert k.win_card == c("6S") and k.win_seat == 1
    assert k.boss(HEARTS) == c("KH")  # the ace is played
    assert k.boss(SPADES) == c("AS")
    # West holds AS KS: no unseen spade is over the king, for West.
    assert k.is_boss(c("AS")) and k.is_boss(c("KS"))
    south = Knowledge(view_for(r, 2))
    assert south.is_boss(c("AS")) and not south.is_boss(c("KS"))
    assert k.still_to_play() == []


def test_beats() -> None:
    assert beats(c("2S"), c("AH")) and not beats(c("KH"), c("AH"))
    assert beats(c("AH"), c("KH")) and not beats(c("AD"), c("KH"))
    assert beaters(parse_hand("2S 3H AH AD"), c("KH")) == parse_hand("2S AH")


def test_nil_set_and_tricks_needed() -> None:
    # East bid nil and wins the first trick by trumping: set.
    r = position(FULL_HANDS, (3, 0, 4, 2), plays="2H 6S 5H 5D")
    k = Knowledge(view_for(r, 0))
    assert k.nil == (False, True, False, False)
    assert k.nil_set == (False, True, False, False)
    assert k.need == (7, 1)  # N/S 7 to go; E/W 2, East's trick counts for the team
    r = position(FULL_HANDS, (3, 0, 4, 2), rules=Rules(nil_tricks_count_for_team=False))
    assert Knowledge(view_for(r, 0)).nil_set == (False, False, False, False)


def test_high_low_doubleton_signal() -> None:
    hands = {
        0: "AH KH 2H 3H AC",
        1: "4H 5H",
        2: "QH 6H",  # South: a doubleton, plays Q then 6 under the bosses
        3: "7H 8H 9H",
    }
    r = position(hands, (3, 3, 3, 3), plays="AH 4H QH 7H  KH 5H 6H 8H")
    k = Knowledge(view_for(r, 0))
    assert k.signals[2] >> HEARTS & 1
    assert k.signalled(2) >> HEARTS & 1
    assert not k.signals[1] and not k.signals[3]  # low-high is no signal
    assert k.suit_led_count[HEARTS] == 2


def test_knowledge_of_random_rounds_is_consistent() -> None:
    """Inferred voids never contradict the real hands; played + unseen + hand = deck."""
    from bots.base import RandomPlayer

    player = RandomPlayer()
    for seed in range(40):
        rng = random.Random(seed)
        hands = deal_hands(seed)
        r = RoundState(Rules(), dealer=seed % 4, hands=hands)
        for _ in range(4):
            r.apply(Bid(r.to_act, rng.randint(0, 4)))
        while r.phase is Phase.PLAYING:
            seat = r.to_act
            v = view_for(r, seat)
            k = Knowledge(v)
            assert k.played | k.unseen | k.hand == (1 << 52) - 1
            for s in range(4):
                assert not r.hands[s] & ~k.possible(s) or s == seat
            r.apply(Play(seat, player.play(v, rng)))
