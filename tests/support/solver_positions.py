"""Random positions for the solvers' tests: objectives with random nil bidders,
bids, tricks, scores and bags; a position of a given size; and a position
played out by random legal cards."""

from __future__ import annotations

import random

from bots.solver import PointsObjective, Position, random_position
from game.engine.cards import SUIT_MASKS
from game.engine.rules import Rules
from game.engine.tricks import trick_winner


def random_objectives(rng: random.Random, rules: Rules):
    """A nil objective and two equal points objectives (one per solver) with random
    nil bidders, bids, tricks already taken, scores and bags."""
    nil_seats = sorted(rng.sample(range(4), rng.choice((0, 1, 1, 2, 3))))
    bids = [0 if s in nil_seats else rng.randint(1, 6) for s in range(4)]
    blind = [s in nil_seats and rng.random() < 0.2 for s in range(4)]
    before = [rng.randint(0, 3) if s not in nil_seats else rng.randint(0, 1) for s in range(4)]
    scores = (rng.randint(-150, 450), rng.randint(-150, 450))
    bags = (rng.randrange(10), rng.randrange(10))

    def points() -> PointsObjective:
        return PointsObjective(rules, bids, blind, before, scores, bags)

    return nil_seats, points


def a_position(rng: random.Random, k: int, i: int) -> Position:
    p = random_position(rng, k, spades_first=i % 2 == 0, trick_cards=(0, 0, 1, 2, 3)[i % 5])
    if i % 4 == 3 and not any(c >= 39 for c in p.trick):
        p = p._replace(spades_broken=False)  # random play nearly always breaks spades
    p.check()
    return p


def play_line(rng: random.Random, p: Position):
    """Every position of ``p`` played out by random legal cards to its last card,
    with the tricks each seat took since ``p``."""
    hands, leader, trick, broken = list(p.hands), p.leader, list(p.trick), p.spades_broken
    taken = [0, 0, 0, 0]
    while any(hands):
        yield Position(tuple(hands), leader, tuple(trick), broken), tuple(taken)
        seat = (leader + len(trick)) & 3
        hand = hands[seat]
        if trick:
            legal = hand & SUIT_MASKS[trick[0] // 13] or hand
        else:
            legal = hand if broken else (hand & ~SUIT_MASKS[3]) or hand
        c = rng.choice([c for c in range(52) if legal >> c & 1])
        hands[seat] ^= 1 << c
        broken = broken or c >= 39
        trick.append(c)
        if len(trick) == 4:
            leader = trick_winner(leader, trick)
            taken[leader] += 1
            trick = []

