"""SIM, simulation-checked bidding (after "Knowledge vs. Simulation for Bidding
in Tarok", Marincic, Gams, Lustrek: section 6 and Table 5).

The knowledge model (BIS, with the shipped success curves) proposes the
candidates: its bid, one either side, and nil when BIS weighs it (nil is its
bid, or its nil probability is at least BIS's "risky but do-able" 0.4). For
each candidate SIM simulates the same deals (common random numbers, so two
candidates differ by the bid and not by the cards):

1. the unseen cards dealt consistently with the seat's hand and the bids so
   far, weighted by the bid-informed table (:mod:`bots.bidinfo`);
2. the candidate bid, then BIS (with SRP's play) bids, and passes in a blind
   nil exchange, for the seats still to bid;
3. the round played out by SRP at all four seats (:func:`play_out`);
4. scored from the match's scores and bags before the round (bag penalties
   count), as our partnership's points minus theirs, plus ``WIN_VALUE`` when
   the round ends the match in our favour (minus it against us), so a bid that
   wins or loses the game now counts as such.

The blend is the paper's ``mu = k_s mu_s + (1 - k_s) mu_m``: ``mu_s`` the
simulated mean (or, for the risk variants, a lower quantile of the simulated
values), ``mu_m`` BIS's estimate of the candidate in the same units (expected
contract points under BIS*'s normal trick model, :func:`knowledge_values`).
BIS's own bid is what its rules chose (the end-game rules included), so its
estimate is raised to at least the best other candidate's: ``k_s = 0`` is
exactly BIS, the control. Ties go to BIS's bid.

Budgets: a fixed number of deals (tournaments: reproducible by seed,
:data:`DEFAULT_DEALS`, ``SPADES_SIM_DEALS``), or a time budget
(:meth:`SIM.bid_within`, live tables): deals are simulated while time lasts,
every candidate on each deal, and a deal the deadline cuts short is left out.
With no whole deal BIS's bid stands.
"""

from __future__ import annotations

import math
import os
import random
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from game.engine import kernel_cache  # noqa: F401  (before the kernels: their cache folder)
from game.engine.actions import Bid, SeeCards
from game.engine.cards import Hand, partner_of
from game.engine.match import match_winner
from game.engine.scoring import score_round
from game.engine.state import Phase, RoundState
from game.engine.view import SeatView, view_for

from . import bidinfo, srp_compiled
from .base import Bidder, Bot
from .bis import (
    BID_MARGIN,
    BIS,
    RISKY_NIL_PROBABILITY,
    TRICKS_SD,
    UNKNOWN_BID,
    _probability_at_least,
    legal_bid,
    round_takes,
)
from .sampling import ImpossibleDeal, WeightedSampler
from .srp import SRP
from .success_curves import make_bis

# Deals per bid in tournaments (every candidate plays each deal). The paper
# simulated 10 games for each of 3 bids; the cost is measured in docs/bots.md.
DEFAULT_DEALS = int(os.environ.get("SPADES_SIM_DEALS", "10"))
# A simulated round that ends the match is worth this many points more (or less).
WIN_VALUE = 200.0
# The playout: "compiled" (bots.srp_compiled) or "reference" (bots.srp.SRP on views).
PLAYOUT = os.environ.get("SPADES_SIM_PLAYOUT", "compiled")


@njit(cache=True)
def _srp_to_the_end(st: np.ndarray, sure_t: np.ndarray) -> None:
    while st[srp_compiled.DONE] < 13:
        srp_compiled.play_card(st, srp_compiled.srp_play(st, sure_t))


def play_out(r: RoundState, rng: random.Random, player: SRP, compiled: bool | None = None
             ) -> RoundState:  # fmt: skip
    """Play the round to its end with SRP at every seat. The one place a SIM
    playout is made: the compiled SRP (:mod:`bots.srp_compiled`, held equal to
    ``player`` card by card by its tests, about ten times faster) unless
    ``compiled`` is False or ``PLAYOUT`` says "reference"; then ``player`` plays
    from each seat's view."""
    if compiled is None:
        compiled = PLAYOUT == "compiled"
    if compiled and r.phase is Phase.PLAYING:
        st = srp_compiled.state_of(r)
        _srp_to_the_end(st, srp_compiled.sure_table())
        r.tricks_won = [int(x) for x in st[srp_compiled.WON : srp_compiled.WON + 4]]
        r.hands = [0, 0, 0, 0]
        r.phase = Phase.DONE
        bids = [b or 0 for b in r.bids]
        r.result = score_round(r.rules, bids, r.blind, r.tricks_won, r.scores_before,
                               r.bags_before)  # fmt: skip
        return r
    while r.phase is Phase.PLAYING:
        r.play_card(player.play(view_for(r, r.to_act), rng))
    return r


def bid_to_play(
    view: SeatView, hands: list[Hand], bid: int, bot: Bot, rng: random.Random
) -> RoundState:
    """The sampled deal from the start of the round: the bids so far as made,
    ``bid`` for the view's seat, then ``bot`` for the seats still to bid (and
    any blind nil exchange), stopped where play begins."""
    seat = view.seat
    assert seat is not None
    r = RoundState(view.rules, view.dealer, hands, view.scores, view.bags, view.round_number)
    for s, b in [*((s, view.bids[s] or 0) for s in view.bid_order), (seat, bid)]:
        blind = s != seat and view.blind[s]
        if not blind and not r.cards_seen[s]:
            r.apply(SeeCards(s))  # a seat that might have bid blind nil looked first
        r.apply(Bid(s, b, blind=blind))
    while r.phase is Phase.BIDDING or r.phase is Phase.PASSING:
        r.apply(bot.act(view_for(r, r.to_act), rng))
    return r


def outcome(r: RoundState, seat: int) -> float:
    """A finished simulated round for ``seat``'s partnership: points gap, plus
    or minus WIN_VALUE if it ends the match."""
    assert r.result is not None
    us = seat & 1
    points = (r.result[0].points, r.result[1].points)
    value = float(points[us] - points[1 - us])
    after = (r.scores_before[0] + points[0], r.scores_before[1] + points[1])
    winner = match_winner(r.rules, after, r.round_number)
    if winner is not None:
        value += WIN_VALUE if winner == us else -WIN_VALUE
    return value


def _contract_value(bid: int, takes: float, partner_bid: int | None) -> float:
    """Expected contract points of a regular ``bid`` with ``takes`` estimated
    tricks (BIS*'s model: tricks normal, bids half a trick conservative)."""
    if partner_bid == 0:  # partner's nil: our contract alone
        p = _probability_at_least(bid, takes + BID_MARGIN, TRICKS_SD)
        return 10 * bid * (2 * p - 1)
    pb = UNKNOWN_BID if partner_bid is None else partner_bid
    sd = TRICKS_SD * math.sqrt(2)
    p = _probability_at_least(bid + pb, takes + pb + BID_MARGIN, sd)
    return 10 * (bid + pb) * (2 * p - 1)


def knowledge_values(view: SeatView, info: dict, candidates: list[int]) -> dict[int, float]:
    """BIS's estimate of each candidate bid, in expected points (before the
    anchor on BIS's own bid, :func:`blend`)."""
    seat = view.seat
    assert seat is not None
    partner_bid = view.bids[partner_of(seat)]
    out = {}
    for c in candidates:
        if c == 0:
            alone = 0.0
            if partner_bid:
                p = _probability_at_least(partner_bid, partner_bid + BID_MARGIN, TRICKS_SD)
                alone = 10 * partner_bid * (2 * p - 1)
            out[c] = info["expected_nil_score"] + alone
        else:
            out[c] = _contract_value(c, info["takes"], partner_bid)
    return out


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (linear between order statistics)."""
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass
class SimResult:
    bid: int  # the chosen bid
    bis_bid: int
    deals: int  # deals simulated (each with every candidate)
    knowledge: dict[int, float]  # mu_m, after the anchor
    simulated: dict[int, float]  # mu_s (mean or quantile); empty with no deal
    blended: dict[int, float]


def blend(
    bis_bid: int,
    knowledge: dict[int, float],
    values: dict[int, list[float]],
    k_s: float,
    q: float | None,
) -> tuple[int, dict[int, float], dict[int, float]]:
    """(chosen bid, mu_m anchored, mu_s) for the simulated ``values`` per candidate."""
    anchored = dict(knowledge)
    anchored[bis_bid] = max(anchored.values())
    simulated: dict[int, float] = {}
    if values and all(values.values()):
        for c, vs in values.items():
            simulated[c] = sum(vs) / len(vs) if q is None else quantile(vs, q)
    if not simulated:
        return bis_bid, anchored, simulated
    mu = {c: k_s * simulated[c] + (1 - k_s) * anchored[c] for c in anchored}
    best = max(mu, key=lambda c: (mu[c], c == bis_bid))
    return best, anchored, simulated


class SIM(Bidder):
    """BIS's candidates checked by simulation, blended with weight ``k_s``;
    ``q``: choose by the ``q`` lower quantile of the simulated values instead
    of their mean (risk averse)."""

    name = "SIM"

    def __init__(
        self,
        k_s: float = 0.5,
        q: float | None = None,
        deals: int | None = None,
        budget: float | None = None,
    ) -> None:
        if not 0.0 <= k_s <= 1.0:
            raise ValueError("k_s is a weight in 0..1")
        self.k_s, self.q = k_s, q
        self.deals = deals
        self.budget = budget  # seconds per bid instead of a deal count (None: deals)
        self.bis: BIS = make_bis("BIS", conventions=True)  # the registry's BIS
        # The playouts' SRP is the rule alone, as the compiled one (bots.srp_compiled).
        self.bot = Bot(self.bis, SRP(cover_deals=0))

    # ----- the knowledge side ---------------------------------------------------

    def candidates(self, view: SeatView) -> tuple[int, list[int], dict]:
        """(BIS's bid, the candidates, BIS's figures): legal bids only."""
        wanted, info = self.bis.decide(view)
        bis_bid = legal_bid(view, wanted).tricks
        legal = {a.tricks for a in view.legal_actions if isinstance(a, Bid) and not a.blind}
        centre = bis_bid if bis_bid else round_takes(info["takes"])
        cands = [bis_bid] + [b for b in (centre - 1, centre, centre + 1) if b >= 1]
        if info["nil_probability"] >= RISKY_NIL_PROBABILITY:
            cands.append(0)
        seen: list[int] = []
        for c in cands:
            if c in legal and c not in seen:
                seen.append(c)
        return bis_bid, seen, info

    # ----- the simulations ------------------------------------------------------

    def simulate(self, view: SeatView, hands: list[Hand], bid: int, seed: float) -> float:
        """One candidate on one sampled deal: its outcome for our partnership."""
        rng = random.Random(seed)  # the same stream for every candidate of a deal
        r = bid_to_play(view, hands, bid, self.bot, rng)
        assert view.seat is not None
        return outcome(play_out(r, rng, self.bot.player), view.seat)  # type: ignore[arg-type]

    def search(
        self,
        view: SeatView,
        rng: random.Random,
        deals: int | None = None,
        budget: float | None = None,
    ) -> SimResult:
        """BIS's candidates, simulated on ``deals`` deals or within ``budget`` seconds."""
        if view.seat is None or view.hand is None or view.to_act != view.seat:
            raise ValueError("SIM bids for the seat to bid, after it has seen its cards")
        bis_bid, cands, info = self.candidates(view)
        knowledge = knowledge_values(view, info, cands)
        values: dict[int, list[float]] = {c: [] for c in cands}
        n = 0
        if self.k_s > 0 and len(cands) > 1:
            deadline = time.perf_counter() + budget if budget is not None else math.inf
            limit = deals if budget is None else None
            try:
                sampler = WeightedSampler.from_view(view, bidinfo.load().weights_for(view))
            except ImpossibleDeal:
                limit, deadline = 0, -math.inf
            while (limit is None or n < limit) and time.perf_counter() < deadline:
                hands = sampler.sample(rng)
                seed = rng.random()
                row = []
                for c in cands:
                    if time.perf_counter() >= deadline:
                        break
                    row.append(self.simulate(view, hands, c, seed))
                if len(row) < len(cands):
                    break  # cut short: every candidate stands on the same deals
                for c, v in zip(cands, row, strict=True):
                    values[c].append(v)
                n += 1
        bid, anchored, simulated = blend(bis_bid, knowledge, values, self.k_s, self.q)
        mu = {c: self.k_s * simulated[c] + (1 - self.k_s) * anchored[c] for c in simulated}
        return SimResult(bid, bis_bid, n, anchored, simulated, mu)

    def needs_search(self, view: SeatView) -> bool:
        """Would :meth:`bid` simulate here (more than one candidate, k_s > 0)?"""
        if self.k_s <= 0 or view.phase is not Phase.BIDDING or view.hand is None:
            return False
        return view.seat is not None and view.to_act == view.seat

    def bid(self, view: SeatView, rng: random.Random) -> Bid:
        deals = self.deals if self.deals is not None else DEFAULT_DEALS
        result = self.search(view, rng, deals=None if self.budget else deals, budget=self.budget)
        return legal_bid(view, result.bid)

    def bid_within(self, view: SeatView, rng: random.Random, seconds: float) -> Bid:
        """The bid with a time budget (a live table): BIS's bid if no deal fits."""
        return legal_bid(view, self.search(view, rng, budget=max(0.0, seconds)).bid)

    def fallback(self, view: SeatView, rng: random.Random) -> Bid:
        """BIS's bid: the move when the budget runs out."""
        return self.bis.bid(view, rng)

    def blind_nil(self, view: SeatView, rng: random.Random) -> bool:
        return self.bis.blind_nil(view, rng)

    def pass_cards(self, view: SeatView, rng: random.Random) -> int:
        return self.bis.pass_cards(view, rng)
