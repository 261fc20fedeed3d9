"""Seeded positions for the compiled SRP's tests: the rule sets they run under,
and every position of seeded rounds with random bids, played by SRP with one
card in four random."""

from __future__ import annotations

import random
from collections.abc import Iterator

from bots.srp import SRP
from game.engine.actions import Bid
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import view_for

RULES = {
    "default": Rules(),
    "two-of-clubs, nil tricks apart": Rules(
        first_lead="two_of_clubs", nil_tricks_count_for_team=False
    ),
    "no nil": Rules(nil=False, blind_nil=False),
}


def positions(rules: Rules, rounds: int, label: str) -> Iterator[tuple[RoundState, random.Random]]:
    """Every position of ``rounds`` seeded rounds: random bids with plenty of nils
    (blind ones too), played by SRP with one card in four random (so voids,
    signals and broken contracts SRP would avoid show up)."""
    srp = SRP(cover_deals=0)  # the rule alone: what the compiled SRP plays
    for seed in range(rounds):
        rng = random.Random(f"{label}/{seed}")
        r = RoundState(rules, dealer=seed % 4, hands=deal_hands(f"srp-compiled/{label}/{seed}"))
        while r.phase is Phase.BIDDING:
            seat = r.to_act
            if not r.cards_seen[seat] and r.can_bid_blind_nil(seat) and rng.random() < 0.1:
                r.apply(Bid(seat, 0, blind=True))
                continue
            r.cards_seen[seat] = True
            lo, hi = r.bid_range(seat)
            n = 0 if rules.nil and rng.random() < 0.3 else rng.randint(lo, min(hi, lo + 5))
            r.apply(Bid(seat, n))
        while r.phase is not Phase.PLAYING:  # a blind nil's exchange
            view = view_for(r, r.to_act)
            r.apply(rng.choice(view.legal_actions))
        while r.phase is Phase.PLAYING:
            yield r, rng
            legal = r.legal_play_mask()
            if rng.random() < 0.25:
                r.play_card(rng.choice([c for c in range(52) if legal >> c & 1]))
            else:
                r.play_card(srp.play(view_for(r, r.to_act), rng))

