"""Rounds built by hand for the bots' tests: a position from partial hands,
bids and the cards played (``position``), the view of the seat to act, a
two-trick endgame for the searches, and issue 25's replayed round."""

from __future__ import annotations

from game.engine.actions import Bid, Play
from game.engine.cards import FULL_DECK, parse_card, parse_hand
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.tricks import Trick, trick_winner
from game.engine.view import SeatView, view_for

# Issue 25: East bid nil; after trick 3 the ace of diamonds can only be East's.
ISSUE_ROUND = (
    "spades/1 r1 d:E s:0,0 b:0,0 rules:winning_goal=200,losing_goal=-100 "
    "h:9854.K7632.8.K53/7.QJT95.A632.J64/KQJ62.84.T.AQT87/AT3.A.KQJ9754.92 "
    "bids:S4,W4,N2,En pass:- play:4HAH2HQHKD8D6DTDQDKC3D2S6SAS4S7SJDKH2DJS8H3S3HJH9D7HADAC5HQ"
    "S7D6HQC9C5CJCTC2C3C6C8C5D5S4C8STHKSTS7C4D9S9H"
)



def position(
    hands: dict[int, str],
    bids: tuple[int, int, int, int],
    plays: str = "",
    dealer: int = 3,
    rules: Rules | None = None,
) -> RoundState:
    """A round with the given (partial) hands, bids and cards played so far.

    Cards not named are dealt round the seats short of 13, lowest card first:
    name every card a test depends on. ``plays`` is the cards in play
    order ('AH 5H ...'), starting with the leader left of ``dealer``.
    """
    masks = [parse_hand(hands.get(s, "")) for s in range(4)]
    rest = FULL_DECK & ~(masks[0] | masks[1] | masks[2] | masks[3])
    seat = 0
    while rest:
        while masks[seat].bit_count() >= 13:
            seat = (seat + 1) & 3
        low = rest & -rest
        masks[seat] |= low
        rest ^= low
        seat = (seat + 1) & 3
    assert not rest
    r = RoundState(rules or Rules(), dealer=dealer, hands=masks)
    for _ in range(4):
        seat = r.to_act
        r.apply(Bid(seat, bids[seat]))
    for text in plays.split():
        r.apply(Play(r.to_act, parse_card(text)))
    return r


def view_of(r: RoundState) -> SeatView:
    """The view of the seat to act."""
    return view_for(r, r.to_act)



def endgame(tricks_won: tuple[int, int, int, int] = (3, 3, 2, 3)) -> RoundState:
    """Two tricks left, North to lead, bids 3 each. North holds AH 2C, East KH QH,
    South 4C 5C, West 6C 7C; South and West showed void in hearts."""
    hands = [parse_hand(h) for h in ("AH 2C", "KH QH", "4C 5C", "6C 7C")]
    texts = [
        "3C 8C 9C TC", "JC QC KC AC", "2H 3H 4H 5H", "6H 7H 8H 9H",
        "2D 3D 4D 5D", "6D 7D 8D 9D", "TD JD QD KD",
        "TH JH AD AS",  # South and West cannot follow hearts; West ruffs
        "2S 3S 4S 5S", "6S 7S 8S 9S", "TS JS QS KS",
    ]  # fmt: skip
    tricks = []
    for t in texts:
        cards = tuple(parse_card(x) for x in t.split())
        tricks.append(Trick(0, cards, trick_winner(0, cards)))
    r = RoundState.__new__(RoundState)
    r.rules = Rules()
    r.dealer = 3
    r.round_number = 1
    r.scores_before = (0, 0)
    r.bags_before = (0, 0)
    r.hands_dealt = tuple(hands)
    r.hands = hands
    r.cards_seen = [True] * 4
    r.blind_nil_eligible = (False,) * 4
    r.phase = Phase.PLAYING
    r.to_act = r.leader = 0
    r.bids = [3, 3, 3, 3]
    r.blind = [False] * 4
    r.bid_order = [0, 1, 2, 3]
    r.pass_queue = []
    r.passes = []
    r.trick = []
    r.tricks = tricks
    r.tricks_won = list(tricks_won)
    r.spades_broken = True
    r.actions = []
    r.result = None
    return r

