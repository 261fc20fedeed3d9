"""Rounds for the QP self-play's tests (tests/lab): dealt and bid as the
self-play's ``bid_rounds`` does, in the Python engine."""

from __future__ import annotations

import random

from bots.srp import SRP
from game.engine.state import Phase, RoundState
from game.engine.view import view_for
from lab.training.qp_self import RULES


def engine_round(name: str, j: int) -> RoundState:
    """Round ``"<name>/<j>"`` dealt and bid as ``bid_rounds`` does, in the Python engine."""
    from bots.base import Bot
    from bots.success_curves import make_bis
    from game.engine.deal import deal_hands

    deal = f"{name}/{j}"
    rng = random.Random(deal)
    before = (rng.randrange(RULES.bag_limit), rng.randrange(RULES.bag_limit))
    r = RoundState(RULES, rng.randrange(4), deal_hands(deal), bags_before=before)
    bidder = Bot(make_bis("BIS"), SRP())
    while r.phase is not Phase.PLAYING:
        r.apply(bidder.act(view_for(r, r.to_act), rng))
    return r

