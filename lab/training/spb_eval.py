"""SPB's learning curve: duplicate matches against a fixed bidder, played fast.

Whole matches (the training rules, goal 200 / -100) between two bidders, both
with SRP play, each deal sequence played twice with the partnerships swapped
(as ``manage.py tournament --duplicate``). Bidding goes through the engine and
the bots' own ``bid`` (scores, bags and blind nil as at a table); the cards are
played by the compiled rule SRP (``bots.sim.play_out``, i.e. ``SRP-rule``), so
a point of the curve costs seconds. The final figures come from the real
tournament command with the registry's SRP; this is the cheap gauge used
during training.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from bots.base import Bidder, Bot
from bots.sim import play_out
from bots.srp import SRP
from game.engine.deal import deal_hands
from game.engine.match import match_winner
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import view_for

from .spb_sim import TRAIN_RULES

MAX_ROUNDS = 200  # a match that has not ended by then is a draw (none has, in practice)


@dataclass
class Gauge:
    """A's wins out of ``games`` finished matches, nils bid and made by A."""

    wins: int = 0
    games: int = 0
    nils: int = 0
    nils_made: int = 0
    bids: int = 0

    @property
    def rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of the win rate."""
        n, z = self.games, 1.96
        if n == 0:
            return (0.0, 1.0)
        p = self.rate
        mid = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return (mid - half, mid + half)


def play_match(
    bidders: tuple[Bidder, Bidder], a_side: int, seed: str, gauge: Gauge, rules: Rules
) -> int | None:
    """One match, bidder A for partnership ``a_side``; the winning partnership."""
    rng = random.Random(seed)
    player = SRP(cover_deals=0)
    bots = [Bot(bidders[0 if s & 1 == a_side else 1], player) for s in range(4)]
    scores, bags = (0, 0), (0, 0)
    for n in range(MAX_ROUNDS):
        r = RoundState(rules, n & 3, deal_hands(f"{seed}/{n}"), scores, bags, n)
        while r.phase is Phase.BIDDING or r.phase is Phase.PASSING:
            r.apply(bots[r.to_act].act(view_for(r, r.to_act), rng))
        play_out(r, rng, player, compiled=True)
        assert r.result is not None
        for s in (a_side, a_side + 2):
            gauge.bids += 1
            if r.bids[s] == 0:
                gauge.nils += 1
                gauge.nils_made += r.tricks_won[s] == 0
        scores = (r.result[0].score_after, r.result[1].score_after)
        bags = (r.result[0].bags_after, r.result[1].bags_after)
        winner = match_winner(rules, scores, n + 1)
        if winner is not None:
            return winner
    return None


def duplicate_gauge(
    a: Bidder, b: Bidder, games: int, seed: int | str, rules: Rules = TRAIN_RULES
) -> Gauge:
    """``games`` matches (even: each deal sequence twice, sides swapped)."""
    gauge = Gauge()
    for g in range(games):
        a_side = g & 1
        winner = play_match((a, b), a_side, f"{seed}/gauge/{g // 2}", gauge, rules)
        if winner is not None:
            gauge.games += 1
            gauge.wins += winner == a_side
    return gauge
