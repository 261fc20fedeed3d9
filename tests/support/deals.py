"""Rounds played part-way, and the check that a sampled deal fits what a seat knows."""

from __future__ import annotations

import random

from bots.knowledge import Knowledge
from bots.registry import make_bot
from game.engine.cards import SUIT_MASKS, Hand
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import SeatView, view_for


def played_round(
    seed: int, stop_at_play: int, bot: str = "BIS+SRP", label: str = "uct-test"
) -> RoundState:
    """A round bid and played by ``bot`` until ``stop_at_play`` cards are down."""
    rng = random.Random(seed)
    b = make_bot(bot)
    r = RoundState(Rules(), dealer=seed % 4, hands=deal_hands(f"{label}/{seed}"))
    while r.phase is not Phase.PLAYING:
        r.apply(b.act(view_for(r, r.to_act), rng))
    while r.phase is Phase.PLAYING and len(r.tricks) * 4 + len(r.trick) < stop_at_play:
        r.apply(b.act(view_for(r, r.to_act), rng))
    return r


def check_deal(hands: list[Hand], view: SeatView, k: Knowledge) -> int:
    """Assert that ``hands`` fits the seat's knowledge; returns how many voids it checked."""
    assert hands[k.seat] == k.hand
    assert [h.bit_count() for h in hands] == list(view.hand_counts)
    checked_voids = 0
    others = 0
    for s in range(4):
        if s == k.seat:
            continue
        assert not hands[s] & others
        assert not hands[s] & view.played
        others |= hands[s]
        for suit in range(4):
            if k.voids[s] >> suit & 1:
                checked_voids += 1
                assert not hands[s] & SUIT_MASKS[suit]
    assert others == k.unseen
    return checked_voids
