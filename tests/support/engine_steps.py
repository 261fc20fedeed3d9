"""Small builders shared by the engine tests (no Django anywhere)."""

from __future__ import annotations

import copy
import random

from game.engine.actions import Bid, Play, SeeCards
from game.engine.cards import FULL_DECK, SEAT_LETTERS, parse_card, parse_hand
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState


def deal(**hands: str) -> tuple[int, int, int, int]:
    """Hands from text by seat letter (n=..., e=..., s=...); one seat may be left
    out and gets the 13 remaining cards."""
    masks: dict[int, int] = {}
    for letter, text in hands.items():
        masks[SEAT_LETTERS.index(letter.upper())] = parse_hand(text)
    missing = [s for s in range(4) if s not in masks]
    assert len(missing) <= 1, "give at least three hands"
    if missing:
        used = 0
        for m in masks.values():
            used |= m
        masks[missing[0]] = FULL_DECK & ~used
    out = (masks[0], masks[1], masks[2], masks[3])
    assert all(m.bit_count() == 13 for m in out), [m.bit_count() for m in out]
    assert out[0] | out[1] | out[2] | out[3] == FULL_DECK
    return out


# Card c goes to seat c % 4: every seat holds every suit.
ROTATING = tuple(sum(1 << c for c in range(52) if c % 4 == s) for s in range(4))
# One suit per seat: N clubs, E diamonds, S hearts, W spades.
BY_SUIT = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))


def snapshot(r: RoundState) -> dict:
    """A deep copy of every slot, to show that a refused action changed nothing."""
    return {name: copy.deepcopy(getattr(r, name)) for name in RoundState.__slots__}


def bid_all(r: RoundState, *bids: int) -> None:
    """Bid in turn order (starting with the seat to act)."""
    for n in bids:
        r.apply(Bid(r.to_act, n))


def play(r: RoundState, *cards: str) -> None:
    for text in cards:
        r.apply(Play(r.to_act, parse_card(text)))


def random_step(r: RoundState, rng: random.Random, blind_bias: float = 0.5) -> None:
    """Apply one random legal action; occasionally a seat that has not looked
    at its cards looks (out of turn), and blind nil is favoured when offered."""
    if r.phase is Phase.BIDDING:
        unseen = [s for s in range(4) if not r.cards_seen[s] and s != r.to_act]
        if unseen and rng.random() < 0.15:
            r.apply(SeeCards(rng.choice(unseen)))
            return
    actions = r.legal_actions()
    blind = [a for a in actions if isinstance(a, Bid) and a.blind]
    if blind and rng.random() < blind_bias:
        r.apply(blind[0])
        return
    r.apply(rng.choice(actions))


def random_round(
    rules: Rules,
    seed: int,
    dealer: int = 0,
    hands=None,
    scores_before=(0, 0),
    bags_before=(0, 0),
    round_number: int = 1,
) -> RoundState:
    from game.engine.deal import deal_hands

    rng = random.Random(seed)
    r = RoundState(
        rules,
        dealer,
        hands if hands is not None else deal_hands(seed),
        scores_before,
        bags_before,
        round_number,
    )
    while not r.is_over:
        random_step(r, rng)
    return r
