"""Rounds for the replay tests: played by bots, or written out by hand."""

from __future__ import annotations

import random
from typing import Any

from bots.registry import make_bot
from game.engine import Rules, record_of, view_for
from game.engine.actions import Bid, Play
from game.engine.cards import parse_card
from game.engine.deal import deal_hands
from game.engine.state import Phase, RoundState
from game.engine.tricks import trick_winner


def played_record(seed: int, bot: str = "BIS+SRP", rules: Rules | None = None) -> dict[str, Any]:
    """A round dealt from ``seed`` and played to its end by ``bot`` in every seat."""
    rng = random.Random(seed)
    b = make_bot(bot)
    r = RoundState(rules or Rules(), dealer=seed % 4, hands=deal_hands(f"replay-test/{seed}"))
    while r.phase is not Phase.DONE:
        r.apply(b.act(view_for(r, r.to_act), rng))
    return record_of(r)


def written_record(bids: list[int], plays: str, dealer: int = 0) -> dict[str, Any]:
    """The round of ``plays`` (52 cards in play order): each seat is dealt the
    cards it plays, and bids ``bids[seat]`` (N, E, S, W) from the dealer's left."""
    cards = [parse_card(c) for c in plays.split()]
    seat = leader = (dealer + 1) & 3
    hands = [0, 0, 0, 0]
    trick: list[int] = []
    for c in cards:
        hands[seat] |= 1 << c
        trick.append(c)
        if len(trick) == 4:
            leader = seat = trick_winner(leader, trick)
            trick = []
        else:
            seat = (seat + 1) & 3
    r = RoundState(Rules(), dealer=dealer, hands=hands)
    for k in range(4):
        s = (dealer + 1 + k) & 3
        r.apply(Bid(s, bids[s]))
    for c in cards:
        r.apply(Play(r.to_act, c))  # checks every card: following suit, spades broken
    assert r.phase is Phase.DONE
    return record_of(r)


# Tricks 1-9, written so that North (nil) takes none, South five (4 bid),
# East/West four (6 bid) and East leads trick 10. North deals; East leads first.
FILLER = (
    "2D AD 3D 4D  QD 5D 6D 7D  JD 8D TD TH  QH 3H 4H 9H  5C 6C 7C JC  "
    "TC 3S 8C 9C  4S KS 5S 6S  7S 8S AS 9S  QS TS 6H JS"
)


# Tricks 10-13 from N: KH 4C 3C 2C, E: JH 8H 7H KC, S: AH 5H 9D 2S, W: 2H AC QC KD.
ENDING = "JH 5H 2H KH  2C KC 2S QC  AH KD 3C 7H  9D AC 4C 8H"
