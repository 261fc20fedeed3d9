"""One round of Spades as a state machine: bidding, the blind nil exchange, play.

``RoundState.apply`` takes any action, checks it against every rule and
raises :class:`IllegalAction` with a reason a person understands, or changes
the state. ``legal_play_mask`` and ``play_card`` are the unchecked fast path
that simulations use on the same state.

>>> from .deal import deal_hands
>>> r = RoundState(Rules(), dealer=3, hands=deal_hands(1))
>>> r.phase, r.to_act
(<Phase.BIDDING: 'bidding'>, 0)
>>> r.apply(Bid(seat=1, tricks=3))
Traceback (most recent call last):
  ...
game.engine.state.IllegalAction: it is North's turn
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from itertools import combinations

from .actions import Action, Bid, PassCards, Play, SeeCards
from .cards import (
    FULL_DECK,
    SEAT_NAMES,
    SUIT_NAMES,
    TWO_OF_CLUBS,
    Card,
    Hand,
    Seat,
    card_name,
    cards_of,
    left_of,
    partner_of,
)
from .round_types import NilPosition, RoundType, nil_position, round_type
from .rules import Rules
from .scoring import PartnershipScore, score_round
from .tricks import Trick, legal_play_mask_for, played_cards, winning_card


class IllegalAction(ValueError):
    """An action the rules do not allow now; ``str(e)`` is the reason."""


class Phase(StrEnum):
    BIDDING = "bidding"
    PASSING = "passing"  # the blind nil card exchange
    PLAYING = "playing"
    DONE = "done"


class RoundState:
    """The whole truth of one round. Seats see it only through ``view_for``."""

    __slots__ = (
        "rules", "dealer", "round_number", "scores_before", "bags_before",
        "hands_dealt", "hands", "cards_seen", "blind_nil_eligible", "phase",
        "to_act", "bids", "blind", "bid_order", "pass_queue", "passes", "trick",
        "leader", "tricks", "tricks_won", "spades_broken", "actions", "result",
    )  # fmt: skip

    def __init__(
        self,
        rules: Rules,
        dealer: Seat,
        hands: tuple[Hand, Hand, Hand, Hand] | list[Hand],
        scores_before: tuple[int, int] = (0, 0),
        bags_before: tuple[int, int] = (0, 0),
        round_number: int = 1,
    ) -> None:
        if len(hands) != 4 or any(h.bit_count() != 13 for h in hands):
            raise ValueError("a deal is four hands of 13 cards")
        if hands[0] | hands[1] | hands[2] | hands[3] != FULL_DECK:
            raise ValueError("the four hands must hold the 52 cards once each")
        if not 0 <= dealer < 4:
            raise ValueError("the dealer is a seat 0..3")
        for bags in bags_before:
            if not 0 <= bags < rules.bag_limit:
                raise ValueError(f"bags carried must be 0..{rules.bag_limit - 1}")
        self.rules = rules
        self.dealer = dealer
        self.round_number = round_number
        self.scores_before = (scores_before[0], scores_before[1])
        self.bags_before = (bags_before[0], bags_before[1])
        self.hands_dealt: tuple[Hand, ...] = tuple(hands)
        self.hands: list[Hand] = list(hands)
        # A seat that may bid blind nil has not seen its cards until it says so.
        self.blind_nil_eligible = tuple(self._deficit(seat) for seat in range(4))
        self.cards_seen = [not eligible for eligible in self.blind_nil_eligible]
        self.phase = Phase.BIDDING
        self.to_act: Seat = left_of(dealer)
        self.bids: list[int | None] = [None, None, None, None]
        self.blind = [False, False, False, False]
        self.bid_order: list[Seat] = []
        self.pass_queue: list[Seat] = []
        self.passes: list[PassCards] = []
        self.trick: list[Card] = []
        self.leader: Seat = self.to_act
        self.tricks: list[Trick] = []
        self.tricks_won = [0, 0, 0, 0]
        self.spades_broken = False
        self.actions: list[Action] = []
        self.result: tuple[PartnershipScore, PartnershipScore] | None = None

    @classmethod
    def in_play(
        cls, rules: Rules, dealer: Seat, hands: Sequence[Hand], *, round_number: int,
        scores_before: tuple[int, int], bags_before: tuple[int, int],
        blind_nil_eligible: tuple[bool, ...], bids: Sequence[int | None], blind: Sequence[bool],
        bid_order: Sequence[Seat], tricks: Sequence[Trick], trick: Sequence[Card], leader: Seat,
        to_act: Seat, tricks_won: Sequence[int], spades_broken: bool,
    ) -> RoundState:  # fmt: skip
        """A round in play rebuilt at a position (a search's sampled deal: ``hands``
        are held now). Unchecked, like the fast path; the action log starts empty."""
        r = cls.__new__(cls)
        r.rules, r.dealer, r.round_number = rules, dealer, round_number
        r.scores_before, r.bags_before = scores_before, bags_before
        r.hands_dealt = tuple(hands)
        r.hands = list(hands)
        r.cards_seen = [True, True, True, True]
        r.blind_nil_eligible = blind_nil_eligible
        r.phase = Phase.PLAYING
        r.to_act, r.leader = to_act, leader
        r.bids, r.blind, r.bid_order = list(bids), list(blind), list(bid_order)
        r.pass_queue, r.passes = [], []
        r.trick, r.tricks, r.tricks_won = list(trick), list(tricks), list(tricks_won)
        r.spades_broken = spades_broken
        r.actions, r.result = [], None
        return r

    def _deficit(self, seat: Seat) -> bool:
        rules = self.rules
        if not rules.blind_nil:
            return False
        ours = self.scores_before[seat & 1]
        theirs = self.scores_before[1 - (seat & 1)]
        return theirs - ours >= rules.blind_nil_min_deficit

    # ----- reading the state -------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.DONE

    @property
    def trick_number(self) -> int:
        """1..13 during play (the trick being played)."""
        return len(self.tricks) + 1

    def two_of_clubs_lead(self) -> bool:
        return self.rules.first_lead == "two_of_clubs" and not self.tricks and not self.trick

    def legal_play_mask(self) -> Hand:
        """The cards the seat to act may play (fast path, no checks on phase)."""
        return legal_play_mask_for(
            self.hands[self.to_act], self.trick, self.spades_broken, self.two_of_clubs_lead()
        )

    def bid_range(self, seat: Seat) -> tuple[int, int]:
        """The lowest and highest non-nil bid ``seat`` may make now."""
        lo, hi = 1, 13
        rules = self.rules
        partner_bid = self.bids[partner_of(seat)]
        if partner_bid is None:
            # Without nil, partner needs at least 1 left under the cap.
            if rules.team_bid_cap_13 and not rules.nil:
                hi = 12
        else:
            if rules.team_bid_cap_13:
                hi = 13 - partner_bid
            if partner_bid > 0:  # a nil partner leaves the other bid free
                lo = max(lo, rules.min_team_bid - partner_bid)
        return lo, hi

    def can_bid_blind_nil(self, seat: Seat) -> bool:
        return (
            self.phase is Phase.BIDDING
            and self.blind_nil_eligible[seat]
            and not self.cards_seen[seat]
            and self.bids[seat] is None
        )

    def legal_actions(self, seat: Seat | None = None) -> list[Action]:
        """Every action ``seat`` (default: the seat to act) may take now."""
        if seat is None:
            seat = self.to_act
        out: list[Action] = []
        if self.phase is Phase.BIDDING:
            if not self.cards_seen[seat]:
                out.append(SeeCards(seat))
            if seat != self.to_act:
                return out
            if self.can_bid_blind_nil(seat):
                out.append(Bid(seat, 0, blind=True))
            if self.rules.nil:
                out.append(Bid(seat, 0))
            lo, hi = self.bid_range(seat)
            out.extend(Bid(seat, n) for n in range(lo, hi + 1))
        elif self.phase is Phase.PASSING and seat == self.to_act:
            out.extend(
                PassCards(seat, sum(1 << c for c in combo))
                for combo in combinations(cards_of(self.hands[seat]), self.rules.blind_nil_pass)
            )
        elif self.phase is Phase.PLAYING and seat == self.to_act:
            out.extend(Play(seat, c) for c in cards_of(self.legal_play_mask()))
        return out

    def round_type(self, seat: Seat) -> RoundType:
        return round_type(self._final_bids(), seat, self.rules.nil)

    def nil_position(self, partnership: int) -> NilPosition:
        return nil_position(self._final_bids(), partnership, self.rules.nil)

    def _final_bids(self) -> list[int]:
        if any(b is None for b in self.bids):
            raise ValueError("the bidding is not over")
        return [b for b in self.bids if b is not None]

    # ----- changing the state ------------------------------------------------

    def check(self, action: Action) -> None:
        """Raise :class:`IllegalAction` unless ``action`` is legal now."""
        seat = action.seat
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < 4:
            raise IllegalAction("there is no such seat")
        if self.phase is Phase.DONE:
            raise IllegalAction("the round is over")
        if isinstance(action, SeeCards):
            if self.phase is not Phase.BIDDING or self.cards_seen[seat]:
                raise IllegalAction("you have already seen your cards")
            return
        if seat != self.to_act:
            raise IllegalAction(f"it is {SEAT_NAMES[self.to_act]}'s turn")
        if isinstance(action, Bid):
            self._check_bid(action)
        elif isinstance(action, PassCards):
            self._check_pass(action)
        elif isinstance(action, Play):
            self._check_play(action)
        else:
            raise IllegalAction(f"{action!r} is not an action")

    def _check_bid(self, bid: Bid) -> None:
        if self.phase is not Phase.BIDDING:
            raise IllegalAction("the bidding is over")
        rules, seat, n = self.rules, bid.seat, bid.tricks
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 13:
            raise IllegalAction("a bid is a number of tricks from 0 to 13")
        if bid.blind:
            if n != 0:
                raise IllegalAction("only nil can be bid blind")
            if not rules.blind_nil:
                raise IllegalAction("blind nil is not played at this table")
            if not self.blind_nil_eligible[seat]:
                raise IllegalAction(
                    f"blind nil needs your side to be {rules.blind_nil_min_deficit} behind"
                )
            if self.cards_seen[seat]:
                raise IllegalAction("blind nil must be bid before you look at your cards")
            return
        if n == 0:
            if not rules.nil:
                raise IllegalAction("nil is not played at this table: bid at least 1")
            return
        lo, hi = self.bid_range(seat)
        if n > hi:
            if self.bids[partner_of(seat)] is None:
                raise IllegalAction("bid at most 12 so that your partner can bid at least 1")
            raise IllegalAction("your side's bids may not total more than 13")
        if n < lo:
            raise IllegalAction(f"your side must bid at least {rules.min_team_bid} together")

    def _check_pass(self, action: PassCards) -> None:
        if self.phase is not Phase.PASSING:
            raise IllegalAction("there is no card exchange now")
        k = self.rules.blind_nil_pass
        if action.cards.bit_count() != k:
            raise IllegalAction(f"pass exactly {k} cards")
        if action.cards & ~self.hands[action.seat]:
            raise IllegalAction("you can only pass cards you hold")

    def _check_play(self, action: Play) -> None:
        if self.phase is not Phase.PLAYING:
            raise IllegalAction("cards are played after the bidding")
        card = action.card
        if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < 52:
            raise IllegalAction("that is not a card")
        hand = self.hands[action.seat]
        if not hand >> card & 1:
            raise IllegalAction(f"you do not hold the {card_name(card)}")
        if self.legal_play_mask() >> card & 1:
            return
        if self.trick:
            raise IllegalAction(f"you must follow {SUIT_NAMES[self.trick[0] // 13]}")
        if self.two_of_clubs_lead():
            raise IllegalAction("the two of clubs leads the first trick")
        raise IllegalAction("spades are not broken yet")

    def apply(self, action: Action) -> None:
        """Check ``action`` and carry it out; an illegal action changes nothing."""
        self.check(action)
        if isinstance(action, SeeCards):
            self.cards_seen[action.seat] = True
        elif isinstance(action, Bid):
            self._apply_bid(action)
        elif isinstance(action, PassCards):
            self._apply_pass(action)
        else:
            self.play_card(action.card)
            return  # play_card logs the action itself
        self.actions.append(action)

    def _apply_bid(self, bid: Bid) -> None:
        seat = bid.seat
        self.bids[seat] = bid.tricks
        self.blind[seat] = bid.blind
        self.cards_seen[seat] = True
        self.bid_order.append(seat)
        if len(self.bid_order) < 4:
            self.to_act = left_of(seat)
            return
        if self.rules.blind_nil_pass:
            # Each blind nil bidder passes first, then partner passes back.
            for s in self.bid_order:
                if self.blind[s]:
                    self.pass_queue += [s, partner_of(s)]
        if self.pass_queue:
            self.phase = Phase.PASSING
            self.to_act = self.pass_queue[0]
        else:
            self._start_play()

    def _apply_pass(self, action: PassCards) -> None:
        seat = action.seat
        self.hands[seat] &= ~action.cards
        self.hands[partner_of(seat)] |= action.cards
        self.passes.append(action)
        self.pass_queue.pop(0)
        if self.pass_queue:
            self.to_act = self.pass_queue[0]
        else:
            self._start_play()

    def _start_play(self) -> None:
        self.phase = Phase.PLAYING
        if self.rules.first_lead == "two_of_clubs":
            self.leader = next(s for s in range(4) if self.hands[s] & (1 << TWO_OF_CLUBS))
        else:
            self.leader = left_of(self.dealer)
        self.to_act = self.leader

    def play_card(self, card: Card) -> None:
        """Play ``card`` for the seat to act. Fast path: the caller ensures legality."""
        seat = self.to_act
        self.hands[seat] ^= 1 << card
        self.actions.append(Play(seat, card))
        if card >= 39:
            self.spades_broken = True
        trick = self.trick
        trick.append(card)
        if len(trick) < 4:
            self.to_act = (seat + 1) & 3
            return
        _, winner = winning_card(self.leader, trick)
        self.tricks.append(Trick(self.leader, tuple(trick), winner))
        self.tricks_won[winner] += 1
        self.trick = []
        self.leader = self.to_act = winner
        if len(self.tricks) == 13:
            self._finish()

    def _finish(self) -> None:
        self.phase = Phase.DONE
        self.result = score_round(
            self.rules,
            self._final_bids(),
            self.blind,
            self.tricks_won,
            self.scores_before,
            self.bags_before,
        )

    # ----- copies --------------------------------------------------------------

    def copy(self) -> RoundState:
        """An independent copy (for search)."""
        new = RoundState.__new__(RoundState)
        for name in RoundState.__slots__:
            value = getattr(self, name)
            setattr(new, name, value.copy() if isinstance(value, list) else value)
        return new

    def played_mask(self) -> Hand:
        """Every card played so far in this round."""
        return played_cards(self.tricks, self.trick)
