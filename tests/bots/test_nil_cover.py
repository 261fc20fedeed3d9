"""SRP covering a niling partner: scripted positions where the right card is
unambiguous (appendix D of "Bidding in Spades" and issue 25's replayed round),
the risk estimate checked against the real hands. The nil-set audit's tests are in
tests/lab/test_nil_sets.py."""

from __future__ import annotations

import random
from collections.abc import Iterator

from bots.knowledge import Knowledge
from bots.nil_cover import lead_sets
from bots.registry import bot_names, make_bot
from bots.srp import SRP, cover_risk, nil_shown
from game.engine.actions import Play
from game.engine.cards import SPADE_MASK, SUIT_MASKS, format_card, parse_card
from game.engine.deal import deal_hands
from game.engine.record import from_text
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.tricks import ABOVE, BELOW
from game.engine.view import view_for
from tests.support.positions import ISSUE_ROUND, position, view_of

srp = SRP()

def issue_round(cards: int) -> RoundState:
    head, play = ISSUE_ROUND.split(" play:")
    return from_text(f"{head} play:{play[: 2 * cards]}")


def srp_plays(r: RoundState) -> str:
    return format_card(srp.play(view_of(r), random.Random(0)))


def test_never_leads_into_a_card_only_the_niler_holds() -> None:
    # Trick 7, West to lead with 2C 9C 4D 5D 7D 9D TS: every diamond forces
    # East (nil) to win with the ace; the spade or a club lets East play under.
    r = issue_round(24)
    assert r.to_act == 3 and not r.trick
    assert srp_plays(r)[1] != "D"
    k = Knowledge(view_of(r))
    assert cover_risk(k, parse_card("9D"), view_of(r).hand_counts) == 1.0


def test_leads_a_risky_suit_before_a_sure_loser_with_fewer_cards_over_it() -> None:
    # Dealer East: South (nil) leads 2H, West and East show void in hearts, North
    # wins with 3H. Now the KH and AH are South's and South holds no lower heart:
    # any heart sets the nil. The old rule led QH (fewest unseen cards over it).
    hands = {
        0: "3H 4H 5H 6H 7H 8H 9H TH JH QH TC 9C 2D",
        2: "2H KH AH",
        3: "4C",
        1: "5C",
    }
    r = position(hands, (4, 3, 0, 3), dealer=1, plays="2H 4C 3H 5C")
    assert r.to_act == 0 and not r.trick
    assert srp_plays(r) == "TC"


def test_reads_what_the_niler_showed_it_does_not_hold() -> None:
    # Dealer North: East leads 2D and South (nil) plays 9D, the lowest of its
    # diamonds that all win: so it holds no diamond from 3D to 8D. North covers
    # with JD and leads. South's diamonds left are over the nine: the queen
    # forces its king. The hearts are safe (South plays under the eight). The
    # old risk, blind to South's play, counted on the low diamonds and led QD.
    hands = {
        0: "JD QD 8H 7H 6H 2S 3S 4S 5S 6S 7S 8S 9S",
        1: "2D 4D 5D 6D AD 4H 5H TS JS QS KS AS JC",
        2: "9D KD 2H 3H 2C 3C 4C 5C 6C 7C 8C 9C TC",
        3: "3D 7D 8D TD 9H TH JH QH KH AH QC KC AC",
    }
    r = position(hands, (4, 3, 0, 3), dealer=0, plays="2D 9D 3D JD")
    assert r.to_act == 0 and not r.trick
    view = view_of(r)
    shown = nil_shown(view, 2)
    assert [format_card(c) for c in range(52) if shown >> c & 1] == [
        "2D", "3D", "4D", "5D", "6D", "7D", "8D"
    ]  # fmt: skip
    k = Knowledge(view)
    qd, eh = parse_card("QD"), parse_card("8H")
    assert cover_risk(k, qd, view.hand_counts) < cover_risk(k, eh, view.hand_counts)
    assert cover_risk(k, qd, view.hand_counts, shown) > cover_risk(k, eh, view.hand_counts, shown)
    assert srp_plays(r) == "8H"


def test_the_sampled_deals_see_a_lead_that_only_the_niler_can_win() -> None:
    # Issue 25's round at trick 7: every diamond West may lead forces East's ace.
    r = issue_round(24)
    view = view_of(r)
    k = Knowledge(view)
    legal = r.hands[3]
    leads = [c for c in range(52) if legal >> c & 1 and c // 13 == 1]
    assert leads and all(n == 64 for n in lead_sets(view, k, leads, nil_shown(view, 1), 64))


def cover_leads(label: str, rounds: int) -> Iterator[RoundState]:
    """Every coverer's lead (its partner's nil standing) of ``rounds`` rounds
    self-played by BIS+SRP."""
    bot = make_bot("BIS+SRP")
    for seed in range(rounds):
        rng = random.Random(seed)
        r = RoundState(Rules(), dealer=seed % 4, hands=deal_hands(f"{label}/{seed}"))
        while r.phase is not Phase.DONE:
            seat = r.to_act
            covering = r.bids[seat ^ 2] == 0 and r.bids[seat] != 0 and not r.tricks_won[seat ^ 2]
            if r.phase is Phase.PLAYING and not r.trick and covering:
                yield r
            r.apply(bot.act(view_for(r, seat), rng))


def test_the_sampled_cover_is_a_function_of_the_view() -> None:
    # At every coverer's lead with a choice of suits: the same card whatever the
    # random stream; the deals change some leads from the rule's (SRP with no
    # deals, what the compiled SRP plays).
    rule = SRP(cover_deals=0)
    checked = differ = 0
    for r in cover_leads("sampled-cover", 40):
        view = view_of(r)
        if len({a.card // 13 for a in view.legal_actions if isinstance(a, Play)}) > 1:
            card = srp.play(view, random.Random(1))
            assert srp.play(view, random.Random(2)) == card
            checked += 1
            differ += card != rule.play(view, random.Random(1))
    assert checked > 20 and differ > 0


def test_nil_shown_reads_a_niler_playing_under_and_discarding() -> None:
    # South (nil) plays 5H under East's QH: it holds no heart from 6H to JH.
    # Then, void in clubs, it discards 8D: no diamond over it (all would lose).
    hands = {1: "QH 2C", 2: "4H 5H 2D 3D 4D 5D 6D 7D 8D 2S 3S 4S 5S", 3: "3H 3C", 0: "2H AC"}
    r = position(hands, (3, 3, 0, 3), dealer=0, plays="QH 5H 3H 2H 2C 8D 3C AC")
    view = view_of(r)
    shown = nil_shown(view, 2) & ~Knowledge(view).played
    hearts = [format_card(c) for c in range(26, 39) if shown >> c & 1]
    diamonds = [format_card(c) for c in range(13, 26) if shown >> c & 1]
    assert hearts == ["6H", "7H", "8H", "9H", "TH", "JH"]
    assert diamonds == ["9D", "TD", "JD", "QD", "KD", "AD"]


def test_covers_from_above_after_the_niler() -> None:
    # North leads, East (nil) is winning with the nine, South follows low; West
    # is void in diamonds and trumps over East with its lowest spade.
    hands = {0: "2D 4D 5D 6D", 1: "9D TD", 2: "3D 7D 8D JD QD KD AD", 3: "5S 2S 4H 7H"}
    r = position(hands, (3, 0, 4, 3), dealer=3, plays="2D 9D 3D")
    assert srp_plays(r) == "2S"


def test_second_hand_covers_high_with_a_card_that_is_not_boss() -> None:
    # Appendix D.1: cover with high cards that are not boss. East leads 4H,
    # South plays its queen (the ace and king are out) so North (nil, last) can
    # play under it.
    hands = {1: "4H", 2: "QH 5H 3D", 0: "JH 2H", 3: "AH KH"}
    r = position(hands, (0, 3, 4, 3), dealer=0, plays="4H")
    assert srp_plays(r) == "QH"


def _check_leads(r: RoundState, checked: list[int]) -> None:
    """At a coverer's lead, compare each suit's risk with partner's real cards."""
    seat = r.to_act
    view = view_for(r, seat)
    k = Knowledge(view)
    partner = r.hands[seat ^ 2]
    for suit in range(4):
        cards = r.hands[seat] & SUIT_MASKS[suit]
        if not cards:
            continue
        top = cards.bit_length() - 1
        risk = cover_risk(k, top, view.hand_counts)
        held = partner & SUIT_MASKS[suit]
        forced = bool(held & ABOVE[top]) and not held & BELOW[top]
        must_trump = not held and suit != 3 and not partner & ~SPADE_MASK and partner & SPADE_MASK
        if risk == 0.0:
            checked[0] += 1
            assert not forced and not must_trump
        if risk == 1.0:
            checked[1] += 1
            assert forced or must_trump


def test_cover_risk_agrees_with_the_real_hands() -> None:
    # At every coverer's lead of self-played rounds: a risk of 0 means the niler
    # cannot be forced over the card, a risk of 1 that it surely is.
    checked = [0, 0]
    for r in cover_leads("nil-cover", 60):
        _check_leads(r, checked)
    assert checked[0] > 20


def test_the_rule_alone_is_a_tournament_player_not_offered_in_menus() -> None:
    bot = make_bot("BIS+SRP-rule")
    assert bot.name == "BIS+SRP-rule" and isinstance(bot.player, SRP)
    assert bot.player.cover_deals == 0 and srp.cover_deals > 0
    assert not any(name.endswith("+SRP-rule") for name in bot_names())
