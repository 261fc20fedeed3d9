"""Seat views and networks for the learned bots' tests (tests/bots, tests/lab):
bidding and playing views of seeded rounds, and a network with a constant
output."""

from __future__ import annotations

import random

import numpy as np

from bots.learned.mlp import MLP
from bots.registry import make_bot
from game.engine.actions import SeeCards
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import SeatView, view_for

RULES = Rules(winning_goal=200, losing_goal=-100)


def constant_net(inputs: int, outputs: np.ndarray) -> MLP:
    """A network whose output is ``outputs`` whatever the input."""
    w = np.zeros((inputs, len(outputs)), np.float32)
    return MLP([(w, np.asarray(outputs, np.float32))])


def bid_views(n: int, seed: int = 1) -> list[SeatView]:
    rng = random.Random(seed)
    bot = make_bot("BIS+SRP")
    views = []
    for i in range(n):
        r = RoundState(RULES, dealer=i % 4, hands=deal_hands(f"learned/{seed}/{i}"))
        for _ in range(rng.randrange(4)):
            r.apply(bot.act(view_for(r, r.to_act), rng))
        view = view_for(r, r.to_act)
        if view.hand is None:
            r.apply(SeeCards(r.to_act))
            view = view_for(r, r.to_act)
        views.append(view)
    return views


def play_views(n: int, seed: int = 1) -> list[SeatView]:
    rng = random.Random(seed)
    bot = make_bot("RB+SRP")
    views = []
    for i in range(n):
        r = RoundState(RULES, dealer=i % 4, hands=deal_hands(f"learned-play/{seed}/{i}"))
        for _ in range(4 + rng.randrange(52)):
            r.apply(bot.act(view_for(r, r.to_act), rng))
        while r.phase is not Phase.PLAYING:
            r.apply(bot.act(view_for(r, r.to_act), rng))
        views.append(view_for(r, r.to_act))
    return views

