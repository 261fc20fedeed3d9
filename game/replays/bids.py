"""What BIS would have bid in each seat of a finished round (pure: no Django).

Each bid is taken in its seat with what that seat knew then: its hand (or
not, for a seat still blind), the bids before it, the scores and bags. BIS
is the registry's (shipped success curves, the Big 5 / Big 6 conventions:
the bidder the site's default bot uses). Its estimate is the regular takes
before rounding and the success curves' probability that a nil would make.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from bots.bis import BIS, legal_bid
from bots.registry import BIDDERS
from game.engine.actions import Bid, SeeCards
from game.engine.cards import SEAT_LETTERS
from game.engine.state import RoundState
from game.engine.view import view_for

from .analysis import playing_start


@cache
def _bis() -> BIS:
    bidder = BIDDERS["BIS"]()
    assert isinstance(bidder, BIS)
    return bidder


def analyse_bids(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per bid in bidding order: the bid made and what BIS would have bid there."""
    done, _ = playing_start(doc)
    r = RoundState(
        done.rules,
        dealer=done.dealer,
        hands=list(done.hands_dealt),
        scores_before=done.scores_before,
        bags_before=done.bags_before,
        round_number=done.round_number,
    )
    bis = _bis()
    out = []
    for seat in done.bid_order:
        bid, blind = done.bids[seat], done.blind[seat]
        assert bid is not None
        rng = None  # BIS decides without chance
        bis_blind = r.can_bid_blind_nil(seat) and bis.blind_nil(view_for(r, seat), rng)  # type: ignore[arg-type]
        looked = r.copy()
        if not looked.cards_seen[seat]:
            looked.apply(SeeCards(seat))
        view = view_for(looked, seat)
        wanted, info = bis.decide(view)
        bis_bid = 0 if bis_blind else legal_bid(view, wanted).tricks
        out.append(
            {
                "seat": SEAT_LETTERS[seat],
                "bid": bid,
                "blind": blind,
                "bis_bid": bis_bid,
                "bis_blind": bis_blind,
                "takes": round(float(info["takes"]), 2),
                "nil_probability": round(float(info["nil_probability"]), 3),
            }
        )
        r.apply(Bid(seat, bid, blind))
    return out
