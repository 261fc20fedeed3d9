"""BIS, the "Bidding in Spades" bidder (Cohensius, Meir, Oved, Stern; section 4).

Algorithm 1 of the paper::

    regularTakes <- CalcRegularTakes(PT, hand, prevBids)      # regular_takes()
    nilValue     <- CalcNilValue(PT, hand)                    # nil_value()
    nilProb      <- SC(prevBids, nilValue)                    # success curves, or nilValue
    expNilScore  <- 100 nilProb - 100 (1 - nilProb)
    bid nil if expNilScore > nilThreshold (25) else regularTakes

plus the end-of-game modifications (appendices E and G.1), the Big 5 / Big 6
signalling conventions between two BIS partners (G.2) and blind nil (G.3).

Where the paper is silent, the choices made here (each also noted where it is
implemented):

- **Previous-bids adjustment** (feature 5 of section 4.1; the paper gives no
  form): ``-0.1 * (S - 3 k)`` clamped to ``[-0.5, +0.5]``, where ``S`` is the
  sum of the ``k`` non-nil bids already made. 3 is about the mean non-nil bid
  (the paper's mean sum of four bids is 10.55, with about 13% nils). High bids
  before us mean the high cards and spades are elsewhere and fewer tricks are
  left; low bids the opposite. The shift moves the rounded bid by at most one.
- **Rounding**: half up (5.5 -> 6), then clamped to 1..13; a regular bid is
  never 0. The final bid is the nearest legal bid (team caps, minimum team
  bids), ties to the lower.
- **Several voids**: the 1.15 nil factor is applied once per hand, capped at 1.
- **Opponents bid nil**: Table 5 (one hand may cut) for high cards and cuts;
  both opponents nil: nobody wants to cut, every high card and cut counts 1.
- **Without success curves** ``nilProb = nilValue`` (the paper's bootstrap
  version "that does not use the learning component").
- **Nil points**: the expected nil score uses the rules' ``nil_points`` (100
  in the paper).
- **End game** (``end_game=True``, the default). Projected scores assume every
  contract is made (and every nil); a bid not made yet counts 3 (the mean
  non-nil bid). "Opponents can win this round": their projection reaches the
  winning goal and beats ours with our regular bid. Then, in order: an
  opponent bid nil -> bid a trick less (appendix E; G.1 says half a trick
  before rounding, which often changes nothing); else in fourth seat with no
  nil and a sum of bids (ours included) of at least 11 -> bid so the four bids
  sum to 14; else if the gap is under 20 points -> raise the bid by the tricks
  that make our projection win, at most 2; else, with a "risky but do-able"
  nil hand (nilProb >= 0.4, an expected nil score of at least -20: the text
  gives no number; see docs/bots.md for the ablations) -> nil. "We can win
  this round": our projection with the regular bid reaches the goal and beats
  theirs; then in fourth seat we do not bid nil, and if the bid one lower
  still wins (by more than 10 points, appendix E) and two more bags stay
  under the bag limit, we bid one less. Ablation options, not in the text:
  ``unknown_bid`` projects a bid not made yet as that many tricks instead of
  3; ``losing_goal`` bids a trick less and no nil when a set would reach the
  losing goal, which the rules above otherwise ignore.
- **Conventions** (``conventions=True``; assumes partner is BIS with the same
  option). The first of the partnership to bid reserves 6 when the
  partnership is more than 100 points behind and partner may bid blind nil
  (Big 6), else 5 (Big 5). Big 5 criteria: A or K of spades, 4 to 6 regular
  takes, every side suit void or holding a card above the ten. Big 6: A of
  spades, at least 4 takes, every side suit void or holding the ten or
  higher. Without the criteria a would-be reserved bid is lowered by one.
  After partner's Big 5 the nil threshold falls from 25 to 0 points and our
  highest spade, when it is the K or Q (without the A), is treated as covered
  by partner (left out of the spade nil factor). After partner's Big 6, bid
  blind nil when offered.
- **BIS*** (``bid_sensitive_threshold=True``, section 5.3.3): instead of the
  constant 25, the threshold is the partnership's expected score with our
  regular bid minus partner's expected score alone if we bid nil, so nil is
  chosen when it is worth more to the partnership. The paper gives no
  formula; ours models tricks as normal: the partnership's tricks with our
  regular bid ~ N(takes + partner's bid + 0.5, 1.5 * sqrt 2), partner's alone
  ~ N(partner's bid + 0.5, 1.5) (bids run about half a trick conservative);
  an unknown partner bid counts as 3. Contract points are +-10 x contract.
- **Desperate blind nil** (footnote 17, needs ``end_game``): both opponents
  have bid, neither bid nil, their two bids sum to less than 11 (partner's
  bid is not counted: it is no part of their contract), and they reach the
  winning goal if they make their contract.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from game.engine.actions import Bid
from game.engine.cards import SPADES, Hand, holding, partner_of
from game.engine.view import SeatView

from .base import Bidder
from .tables import SIDE, SPADE, ProbabilityTables, load_tables

SuccessCurves = Callable[[tuple[int, ...], float], float]

ACE, KING, QUEEN, JACK, TEN = 12, 11, 10, 9, 8
MEAN_BID = 3.0  # about the mean non-nil bid (paper: mean sum of four bids 10.55)
PREV_BIDS_SLOPE = 0.1
PREV_BIDS_CAP = 0.5
VOID_NIL_FACTOR = 1.15
NIL_THRESHOLD = 25.0
BIG5_NIL_THRESHOLD = 0.0
# G.1 (4)'s "risky but do-able" nil (the text gives no number): nilProb >= 0.4,
# an expected nil score of -20 or more. Measured against 0.3, 0.5 and no risky
# nil in duplicate tournaments on two seeds (docs/bots.md, the x25 rows).
RISKY_NIL_PROBABILITY = 0.4
OPPONENT_NIL_CUT = 1.0  # appendix E: "subtracting a trick" (G.1 says 0.5)
SMALL_GAP = 20
UNKNOWN_BID = 3
# BIS*: trick spread of one hand's estimate, and how conservative bids run.
TRICKS_SD = 1.5
BID_MARGIN = 0.5


def _probability_at_least(need: float, mean: float, sd: float) -> float:
    """P(X >= need) for X ~ N(mean, sd), with a half-trick continuity correction."""
    return 0.5 * math.erfc((need - 0.5 - mean) / (sd * math.sqrt(2.0)))


def partnership_threshold(takes: float, partner_bid: int | None) -> float:
    """BIS*'s nil threshold: our side's expected regular score minus partner's alone."""
    pb = UNKNOWN_BID if partner_bid is None else partner_bid
    bid = max(1, round_takes(takes))
    together = _probability_at_least(bid + pb, takes + pb + BID_MARGIN, TRICKS_SD * math.sqrt(2))
    regular = 10 * (bid + pb) * (2 * together - 1)
    alone = _probability_at_least(pb, pb + BID_MARGIN, TRICKS_SD)
    return regular - 10 * pb * (2 * alone - 1)


_ONES = [[1.0, 1.0, 1.0] for _ in range(13)]


def _table(tables: ProbabilityTables, cutters: int) -> list[list[float]]:
    return _ONES if cutters <= 0 else tables.high_card[min(cutters, 3)]


def spade_trick_value(spades: int) -> int:
    """High and long spades (4.1.2, 4.1.3) of a 13-bit spade holding.

    A always; K with one more spade; Q with two; J with three; one more for
    every spade beyond the fourth.
    """
    n = spades.bit_count()
    value = 0
    for rank, needed in ((ACE, 1), (KING, 2), (QUEEN, 3), (JACK, 4)):
        if spades >> rank & 1 and n >= needed:
            value += 1
    return value + max(0, n - 4)


@dataclass(frozen=True, slots=True)
class TakesEstimate:
    """The parts of the regular-takes estimate (section 4.1)."""

    side_high_cards: tuple[float, float, float]  # clubs, diamonds, hearts
    spade_tricks: int  # high and long spades of the spades not used to cut
    cuts: float  # short side suits with the spades given to them
    spades_cutting: int
    adjustment: float  # from the previous bids

    @property
    def before_adjustment(self) -> float:
        return sum(self.side_high_cards) + self.spade_tricks + self.cuts

    @property
    def total(self) -> float:
        return self.before_adjustment + self.adjustment


def previous_bids_adjustment(prev_bids: Sequence[int]) -> float:
    """Feature 5 of section 4.1 (our design, see the module doc)."""
    made = [b for b in prev_bids if b > 0]
    shift = -PREV_BIDS_SLOPE * (sum(made) - MEAN_BID * len(made))
    return max(-PREV_BIDS_CAP, min(PREV_BIDS_CAP, shift))


def estimate_takes(
    hand: Hand,
    prev_bids: Sequence[int] = (),
    opponents_nil: int = 0,
    tables: ProbabilityTables | None = None,
    cutters: int | None = None,
) -> TakesEstimate:
    """The expected regular takes of ``hand``, part by part.

    ``opponents_nil``: how many opponents bid nil (each leaves one hand fewer
    that may cut). ``cutters`` overrides the number of hands that may cut (3
    for cutthroat, Table 6).
    """
    tables = tables or load_tables()
    if cutters is None:
        cutters = 2 - opponents_nil
    table = _table(tables, cutters)
    side: list[float] = []
    cut_slots: list[float] = []
    for suit in range(3):
        h = holding(hand, suit)
        n = h.bit_count()
        value = 0.0
        # A, K, Q win the suit's first, second, third trick, given blockers.
        for j, rank in enumerate((ACE, KING, QUEEN)):
            if h >> rank & 1 and n > j:
                value += table[n][j]
        side.append(value)
        # A void, singleton or doubleton can cut the tricks after it runs out.
        if n < 3:
            cut_slots.extend(table[n][j] for j in range(n, 3))
    cut_slots.sort(reverse=True)
    spades = holding(hand, SPADES)
    best = (spade_trick_value(spades), 0.0, 0)
    remaining, cut_value = spades, 0.0
    # Give the k lowest spades to cutting, k = 1, 2, ...; keep the best total.
    for k in range(1, min(spades.bit_count(), len(cut_slots)) + 1):
        remaining &= remaining - 1  # drop the lowest spade left
        cut_value += cut_slots[k - 1]
        value = spade_trick_value(remaining)
        if value + cut_value > best[0] + best[1] + 1e-12:
            best = (value, cut_value, k)
    return TakesEstimate(
        side_high_cards=(side[0], side[1], side[2]),
        spade_tricks=best[0],
        cuts=best[1],
        spades_cutting=best[2],
        adjustment=previous_bids_adjustment(prev_bids),
    )


def round_takes(takes: float) -> int:
    """Half up, then 1..13: a regular bid is never 0."""
    return max(1, min(13, int(takes + 0.5)))


def regular_takes(
    hand: Hand,
    prev_bids: Sequence[int] = (),
    opponents_nil: int = 0,
    tables: ProbabilityTables | None = None,
) -> int:
    """The regular bid of section 4.1: the estimate, adjusted, rounded, 1..13."""
    return round_takes(estimate_takes(hand, prev_bids, opponents_nil, tables).total)


def nil_value(
    hand: Hand,
    tables: ProbabilityTables | None = None,
    partner_covers_top_spade: bool = False,
) -> float:
    """Section 4.2: the product over suits of P(nil(suit) | holding), x1.15 with a void.

    ``partner_covers_top_spade``: partner signalled Big 5 (A or K of spades),
    so our top spade, when it is the K or Q without the A, is left out.
    """
    tables = tables or load_tables()
    value = 1.0
    void = False
    for suit in range(4):
        h = holding(hand, suit)
        if not h:
            void = True
            continue
        kind = SPADE if suit == SPADES else SIDE
        if kind == SPADE and partner_covers_top_spade:
            top = h.bit_length() - 1
            if top in (KING, QUEEN):
                h ^= 1 << top
                if not h:
                    continue
        value *= 1.0 - tables.nil_set_probability(kind, h)
        if value == 0.0:
            return 0.0
    if void:
        value *= VOID_NIL_FACTOR
    return min(1.0, value)


def _side_suits_stopped(hand: Hand, lowest_rank: int) -> bool:
    return all(holding(hand, s) == 0 or holding(hand, s) >> lowest_rank for s in range(3))


def big5_criteria(hand: Hand, takes: int) -> bool:
    """G.2: A or K of spades, 4-6 takes, each side suit void or with a card above ten."""
    spades = holding(hand, SPADES)
    return bool(spades >> KING) and 4 <= takes <= 6 and _side_suits_stopped(hand, JACK)


def big6_criteria(hand: Hand, takes: int) -> bool:
    """G.2: A of spades, at least 4 takes, each side suit void or with a ten or higher."""
    spades = holding(hand, SPADES)
    return bool(spades >> ACE & 1) and takes >= 4 and _side_suits_stopped(hand, TEN)


@dataclass(frozen=True, slots=True)
class _Situation:
    """The scores as Algorithm 1's end-game rules see them (every contract made)."""

    our_score: int
    opp_score: int
    goal: int
    partner_points: int  # partner's contract tricks x10 plus a nil bonus
    partner_tricks: int
    opp_projection: int
    opp_nil: int
    bags: int
    bag_limit: int

    def ours(self, bid: int) -> int:
        return self.our_score + 10 * (bid + self.partner_tricks) + self.partner_points

    def we_win_with(self, bid: int) -> bool:
        mine = self.ours(bid)
        return mine >= self.goal and mine > self.opp_projection

    def set_loses(self, bid: int, losing_goal: int) -> bool:
        """Our contract with ``bid`` set would take us to the losing goal."""
        return self.our_score - 10 * (bid + self.partner_tricks) <= losing_goal

    def they_can_win(self, bid: int) -> bool:
        return self.opp_projection >= self.goal and self.opp_projection >= self.ours(bid)


def _situation(view: SeatView, unknown_bid: int = UNKNOWN_BID) -> _Situation:
    seat = view.seat
    assert seat is not None
    us = seat & 1
    nil_points = view.rules.nil_points
    partner = partner_of(seat)

    def contract(s: int) -> tuple[int, int]:
        """(tricks, nil points) one seat contributes to its side's projection."""
        b = view.bids[s]
        if b is None:
            return unknown_bid, 0
        if b == 0:
            return 0, nil_points * (2 if view.blind[s] else 1)
        return b, 0

    p_tricks, p_points = contract(partner)
    opp = [contract(s) for s in ((seat + 1) & 3, (seat + 3) & 3)]
    opp_projection = view.scores[1 - us] + sum(10 * t + p for t, p in opp)
    return _Situation(
        our_score=view.scores[us],
        opp_score=view.scores[1 - us],
        goal=view.rules.winning_goal,
        partner_points=p_points,
        partner_tricks=p_tricks,
        opp_projection=opp_projection,
        opp_nil=sum(1 for s in ((seat + 1) & 3, (seat + 3) & 3) if view.bids[s] == 0),
        bags=view.bags[us],
        bag_limit=view.rules.bag_limit,
    )


class BIS(Bidder):
    """The BIS bidder: Algorithm 1 with the appendix G modifications (see module doc)."""

    name = "BIS"

    def __init__(
        self,
        success_curves: SuccessCurves | None = None,
        end_game: bool = True,
        conventions: bool = False,
        nil_threshold: float = NIL_THRESHOLD,
        tables: ProbabilityTables | None = None,
        bid_sensitive_threshold: bool = False,
        opponent_nil_cut: float = OPPONENT_NIL_CUT,
        risky_nil: float | None = RISKY_NIL_PROBABILITY,
        unknown_bid: int = UNKNOWN_BID,
        losing_goal: bool = False,
    ) -> None:
        self.bid_sensitive_threshold = bid_sensitive_threshold
        # End-game choices beyond the text, kept as options for their ablations.
        self.opponent_nil_cut = opponent_nil_cut
        self.risky_nil = risky_nil
        self.unknown_bid = unknown_bid
        self.losing_goal = losing_goal
        self.success_curves = success_curves
        self.end_game = end_game
        self.conventions = conventions
        self.nil_threshold = nil_threshold
        self._tables = tables

    @property
    def tables(self) -> ProbabilityTables:
        if self._tables is None:
            self._tables = load_tables()
        return self._tables

    # ----- conventions ---------------------------------------------------------

    @staticmethod
    def reserved_bid(view: SeatView, second: int) -> int:
        """5 (Big 5) or 6 (Big 6): 6 when >100 behind and ``second`` may bid blind nil."""
        us = second & 1
        behind = view.scores[1 - us] - view.scores[us]
        if behind > 100 and view.rules.blind_nil and view.blind_nil_eligible[second]:
            return 6
        return 5

    def _partner_signal(self, view: SeatView) -> int | None:
        """Partner's Big 5/6 signal, when partner bid before us and used the reserved bid."""
        seat = view.seat
        assert seat is not None
        partner = partner_of(seat)
        if not self.conventions or view.bids[partner] is None:
            return None
        reserved = self.reserved_bid(view, seat)
        return reserved if view.bids[partner] == reserved else None

    # ----- the bid ------------------------------------------------------------------

    def nil_probability(self, prev_bids: tuple[int, ...], value: float) -> float:
        if self.success_curves is None:
            return value
        return max(0.0, min(1.0, float(self.success_curves(prev_bids, value))))

    def regular_estimate(self, view: SeatView, prev: tuple[int, ...], opp_nil: int) -> float:
        """The regular takes before rounding (section 4.1); a learned bidder (NNB)
        overrides only this and keeps the nil decision and end-game rules."""
        assert view.hand is not None
        return estimate_takes(view.hand, prev, opp_nil, self.tables).total

    def decide(self, view: SeatView) -> tuple[int, dict]:
        """The wanted bid (before legality) and the figures behind it."""
        seat, hand = view.seat, view.hand
        if seat is None or hand is None:
            raise ValueError("BIS bids for a seat that has seen its cards")
        partner = partner_of(seat)
        prev = tuple(b for s in view.bid_order if (b := view.bids[s]) is not None)
        opponents = ((seat + 1) & 3, (seat + 3) & 3)
        opp_nil = sum(1 for s in opponents if view.bids[s] == 0)
        takes = self.regular_estimate(view, prev, opp_nil)
        signal = self._partner_signal(view)
        value = nil_value(hand, self.tables, partner_covers_top_spade=signal == 5)
        p = self.nil_probability(prev, value)
        points = view.rules.nil_points
        exp_nil = points * p - points * (1.0 - p)
        if signal == 5:
            threshold = BIG5_NIL_THRESHOLD
        elif self.bid_sensitive_threshold:
            threshold = partnership_threshold(takes, view.bids[partner])
        else:
            threshold = self.nil_threshold
        nil_allowed = view.rules.nil and view.bids[partner] != 0
        want_nil = nil_allowed and exp_nil > threshold
        info = {"takes": takes, "nil_value": value, "nil_probability": p,
                "expected_nil_score": exp_nil, "threshold": threshold}  # fmt: skip

        last = len(prev) == 3
        bid = round_takes(takes)
        if self.end_game:
            sit = _situation(view, self.unknown_bid)
            if sit.they_can_win(bid) and not sit.we_win_with(bid):
                info["end_game"] = "risk seeking"
                gap = sit.opp_projection - sit.ours(bid)
                if sit.opp_nil:
                    bid = round_takes(takes - self.opponent_nil_cut)  # (1): room to set the nil
                elif last and 0 not in prev and sum(prev) + bid >= 11:
                    bid = max(bid, min(13, 14 - sum(prev)))  # G.1 (2): complete to 14
                elif gap < SMALL_GAP:
                    bid = min(13, bid + min(2, gap // 10 + 1))  # G.1 (3)
                elif nil_allowed and self.risky_nil is not None and p >= self.risky_nil:
                    want_nil = True  # G.1 (4): a risky but do-able nil
            elif sit.we_win_with(bid) and last:
                info["end_game"] = "risk averse"
                want_nil = False  # G.1 averse (1)
                if (
                    bid > 1
                    and sit.ours(bid - 1) > sit.opp_projection + 10
                    and sit.we_win_with(bid - 1)
                    and sit.bags + 2 < sit.bag_limit
                ):
                    bid -= 1  # G.1 averse (2)
            elif self.losing_goal and (
                sit.set_loses(bid, lose := view.rules.losing_goal)
                or (want_nil and sit.our_score - points <= lose)
            ):
                # Not in the text (the BIS-EGlose ablation): a set would end the
                # match at the losing goal, so no nil, and one trick less.
                info["end_game"] = "near the losing goal"
                want_nil = False
                if sit.set_loses(bid, lose):
                    bid = max(1, bid - 1)
        if want_nil:
            return 0, info
        if self.conventions and view.bids[partner] is None:
            reserved = self.reserved_bid(view, partner)
            meets = (big6_criteria if reserved == 6 else big5_criteria)(hand, round_takes(takes))
            if meets:
                info["signal"] = reserved
                bid = reserved
            elif bid == reserved:
                bid -= 1
        return bid, info

    def bid(self, view: SeatView, rng: random.Random) -> Bid:
        seat = view.seat
        assert seat is not None
        wanted, _ = self.decide(view)
        return legal_bid(view, wanted)

    def blind_nil(self, view: SeatView, rng: random.Random) -> bool:
        """G.3: after partner's Big 6, or (with ``end_game``) in a desperate situation."""
        seat = view.seat
        if seat is None or not view.rules.blind_nil:
            return False
        partner = partner_of(seat)
        if view.bids[partner] == 0:
            return False
        if self._partner_signal(view) == 6:
            return True
        if not self.end_game:
            return False
        opponents = ((seat + 1) & 3, (seat + 3) & 3)
        opp_bids = [view.bids[s] for s in opponents]
        if any(b is None for b in opp_bids):
            return False
        # Footnote 17: "their bid is easy (no nils and the sum of bids below 11)":
        # the opponents' bids only, partner's is no part of their contract.
        opp_contract = sum(b for b in opp_bids if b is not None)
        if 0 in opp_bids or opp_contract >= 11:
            return False
        return view.scores[1 - (seat & 1)] + 10 * opp_contract >= view.rules.winning_goal


def legal_bid(view: SeatView, wanted: int) -> Bid:
    """``wanted`` if legal, else the nearest legal regular bid (ties: lower)."""
    seat = view.seat
    assert seat is not None
    bids = [a for a in view.legal_actions if isinstance(a, Bid) and not a.blind]
    if not bids:
        raise ValueError("no bid is legal now")
    for a in bids:
        if a.tricks == wanted:
            return a
    regular = [a for a in bids if a.tricks > 0] or bids
    return min(regular, key=lambda a: (abs(a.tricks - wanted), a.tricks))
