"""SRP's lead when covering partner's nil, checked on sampled deals.

:func:`bots.srp.cover_risk` scores a lead from each card's chance of being
partner's, taken one card at a time. That misses what the trick's other
cards do (an opponent who must follow, an opponent void who may trump) and
how the holdings hang together. So when SRP leads with its partner's nil
standing and more than one suit to lead, it deals the unseen cards
``deals`` times consistently with what it knows, plays the trick out after
each candidate lead (the top card of each suit it may lead) with SRP's rules
at every seat, and leads the card that set the nil in the fewest deals; the
rule's own order breaks ties. Measured in docs/bots.md ("SRP's nil cover").

The deals are those of UCT's bid-informed sampler (:mod:`bots.bidinfo`,
:mod:`bots.sampling_compiled`), with partner's weight for a card its nil play
showed it does not hold (:func:`bots.srp.nil_shown`) cut to
``SHOWN_WEIGHT``; the trick is played by the compiled SRP
(:mod:`bots.srp_compiled`, whose own cover lead is the rule alone). The
stream of random numbers is seeded from the seat's hand and the cards
played, so SRP stays a function of what its seat sees.
"""

from __future__ import annotations

import numpy as np

from game.engine.cards import Card, Hand
from game.engine.view import SeatView

from . import bidinfo, srp_compiled
from .knowledge import Knowledge
from .sampling import ImpossibleDeal, WeightedSampler
from .sampling_compiled import CompiledSampler

# Partner's weight for a card its nil play showed it does not hold, against its
# bid-informed weight: all but ruled out (a niler off SRP's play may hold it).
SHOWN_WEIGHT = 0.02
_MASK64 = (1 << 64) - 1


def lead_sets(
    view: SeatView, k: Knowledge, leads: list[Card], shown: Hand, deals: int
) -> list[int]:
    """For each of ``leads``, in how many of ``deals`` sampled deals partner (the
    niler) wins the trick that lead starts."""
    partner = k.partner
    weights = bidinfo.load().weights_for(view)
    opponents = k.possible((k.seat + 1) & 3) | k.possible((k.seat + 3) & 3)
    row = list(weights.get(partner, [1.0] * 52))
    m = shown & opponents  # a card only partner can hold stays its own
    while m:
        low = m & -m
        m ^= low
        row[low.bit_length() - 1] *= SHOWN_WEIGHT
    weights[partner] = row
    try:
        sampler = CompiledSampler(WeightedSampler.from_view(view, weights, k))
    except ImpossibleDeal:
        return [0] * len(leads)
    played = 0
    for t in view.tricks:
        for c in t.cards:
            played |= 1 << c
    stream = np.array(
        [(view.hand * 0x9E3779B97F4A7C15 ^ played * 0xBF58476D1CE4E5B9) & _MASK64], dtype=np.uint64
    )
    template = srp_compiled.state_of_view(view)
    sure_t = srp_compiled.sure_table()
    rows = np.zeros((len(leads), srp_compiled.STATE_SIZE), dtype=np.int64)
    hands = np.zeros(4, dtype=np.int64)
    cards = np.array(leads, dtype=np.int64)
    # Play stops once every hand holds this many cards: the led trick is over.
    after_trick = 12 - len(view.tricks)
    won = srp_compiled.WON + partner
    sets = [0] * len(leads)
    for _ in range(deals):
        sampler.sample_into(stream, hands)
        srp_compiled.play_out_all(template, hands, cards, after_trick, rows, sure_t)
        for i in range(len(leads)):
            sets[i] += int(rows[i, won] > 0)
    return sets
