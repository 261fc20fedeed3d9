"""``view_for``: the one place that decides what a seat may see.

A seat sees its own hand (once it has looked at it), the cards it passed and
received in a blind nil exchange, and everything public: bids, every card
played, tricks taken, scores, bags, whose turn. A spectator (``seat=None``)
sees only what is public. Nothing else leaves the engine: not another seat's
cards, not the deal seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .actions import Action, action_from_dict, action_to_dict
from .cards import Card, Hand, Seat, cards_of, format_card, mask_of, parse_card, partner_of
from .match import Match
from .rules import Rules
from .scoring import PartnershipScore
from .state import Phase, RoundState
from .tricks import Trick, played_cards


@dataclass(frozen=True, slots=True)
class RoundSummary:
    """A finished round, as the score sheet shows it."""

    round_number: int
    dealer: Seat
    bids: tuple[int, ...]
    blind: tuple[bool, ...]
    tricks_won: tuple[int, ...]
    result: tuple[PartnershipScore, PartnershipScore]


@dataclass(frozen=True, slots=True)
class SeatView:
    seat: Seat | None  # None: a spectator
    rules: Rules
    round_number: int
    dealer: Seat
    phase: Phase
    to_act: Seat
    hand: Hand | None  # None until the seat has looked at its cards (always for spectators)
    hand_counts: tuple[int, int, int, int]
    bids: tuple[int | None, ...]
    blind: tuple[bool, ...]
    bid_order: tuple[Seat, ...]
    blind_nil_eligible: tuple[bool, ...]
    passed: Hand  # cards this seat gave partner in the exchange
    received: Hand  # cards this seat got from partner
    exchanges_done: int  # how many passes were made (public)
    leader: Seat
    trick: tuple[Card, ...]  # the current trick, the leader's card first
    tricks: tuple[Trick, ...]  # completed tricks, public
    tricks_won: tuple[int, int, int, int]
    spades_broken: bool
    scores: tuple[int, int]  # before this round
    bags: tuple[int, int]
    result: tuple[PartnershipScore, PartnershipScore] | None  # when the round is over
    legal_actions: tuple[Action, ...]
    history: tuple[RoundSummary, ...] = ()  # earlier finished rounds of the match
    match_winner: int | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SeatView:
        """The view ``to_dict`` gave (a bot written against ``SeatView`` playing
        through the bot protocol, whose decisions carry that dict); other keys,
        such as a frame's ``version`` and ``table``, are ignored."""

        def cards(texts: list[str]) -> tuple[Card, ...]:
            return tuple(parse_card(t) for t in texts)

        def score(r: list[dict[str, Any]] | None) -> tuple[PartnershipScore, ...] | None:
            keys = PartnershipScore.__dataclass_fields__
            return None if r is None else tuple(
                PartnershipScore(**{k: v for k, v in p.items() if k in keys}) for p in r
            )  # fmt: skip

        hand = data["hand"]
        return cls(
            seat=data["seat"],
            rules=Rules.from_dict(data["rules"]),
            round_number=data["round_number"],
            dealer=data["dealer"],
            phase=Phase(data["phase"]),
            to_act=data["to_act"],
            hand=None if hand is None else mask_of(cards(hand)),
            hand_counts=tuple(data["hand_counts"]),  # type: ignore[arg-type]
            bids=tuple(data["bids"]),
            blind=tuple(data["blind"]),
            bid_order=tuple(data["bid_order"]),
            blind_nil_eligible=tuple(data["blind_nil_eligible"]),
            passed=mask_of(cards(data["passed"])),
            received=mask_of(cards(data["received"])),
            exchanges_done=data["exchanges_done"],
            leader=data["leader"],
            trick=cards(data["trick"]),
            tricks=tuple(
                Trick(t["leader"], cards(t["cards"]), t["winner"]) for t in data["tricks"]
            ),
            tricks_won=tuple(data["tricks_won"]),  # type: ignore[arg-type]
            spades_broken=data["spades_broken"],
            scores=tuple(data["scores"]),  # type: ignore[arg-type]
            bags=tuple(data["bags"]),  # type: ignore[arg-type]
            result=score(data["result"]),  # type: ignore[arg-type]
            legal_actions=tuple(action_from_dict(a) for a in data["legal_actions"]),
            history=tuple(
                RoundSummary(
                    h["round_number"],
                    h["dealer"],
                    tuple(h["bids"]),
                    tuple(h["blind"]),
                    tuple(h["tricks_won"]),
                    score(h["result"]),
                )  # type: ignore[arg-type]
                for h in data["history"]
            ),  # fmt: skip
            match_winner=data["match_winner"],
        )

    @property
    def played(self) -> Hand:
        """Every card played in this round so far."""
        return played_cards(self.tricks, self.trick)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; cards as text like 'AS'."""
        return {**self.private_dict(), **self.public_dict()}

    def private_dict(self) -> dict[str, Any]:
        """The keys of ``to_dict`` that differ from seat to seat."""
        return _private_dict(self.seat, self.hand, self.passed, self.received, self.legal_actions)

    def public_dict(self) -> dict[str, Any]:
        """The keys of ``to_dict`` that every seat of the table sees alike.

        A server builds them once per move, not once per socket.
        """

        def score(r: tuple[PartnershipScore, PartnershipScore] | None) -> list[dict] | None:
            return None if r is None else [p.to_dict() for p in r]

        return {
            "rules": self.rules.to_dict(),
            "round_number": self.round_number,
            "dealer": self.dealer,
            "phase": self.phase.value,
            "to_act": self.to_act,
            "hand_counts": list(self.hand_counts),
            "bids": list(self.bids),
            "blind": list(self.blind),
            "bid_order": list(self.bid_order),
            "blind_nil_eligible": list(self.blind_nil_eligible),
            "exchanges_done": self.exchanges_done,
            "leader": self.leader,
            "trick": [format_card(c) for c in self.trick],
            "tricks": [
                {"leader": t.leader, "cards": [format_card(c) for c in t.cards], "winner": t.winner}
                for t in self.tricks
            ],
            "tricks_won": list(self.tricks_won),
            "spades_broken": self.spades_broken,
            "scores": list(self.scores),
            "bags": list(self.bags),
            "result": score(self.result),
            "history": [
                {
                    "round_number": h.round_number,
                    "dealer": h.dealer,
                    "bids": list(h.bids),
                    "blind": list(h.blind),
                    "tricks_won": list(h.tricks_won),
                    "result": score(h.result),
                }
                for h in self.history
            ],
            "match_winner": self.match_winner,
        }


def _private_dict(
    seat: Seat | None,
    hand: Hand | None,
    passed: Hand,
    received: Hand,
    legal_actions: tuple[Action, ...] | list[Action],
) -> dict[str, Any]:
    return {
        "seat": seat,
        "hand": None if hand is None else _card_list(hand),
        "passed": _card_list(passed),
        "received": _card_list(received),
        "legal_actions": [action_to_dict(a) for a in legal_actions],
    }


def _card_list(mask: Hand) -> list[str]:
    return [format_card(c) for c in reversed(cards_of(mask))]


def summarize(r: RoundState) -> RoundSummary:
    assert r.result is not None, "the round is not over"
    return RoundSummary(
        r.round_number,
        r.dealer,
        tuple(b if b is not None else -1 for b in r.bids),
        tuple(r.blind),
        tuple(r.tricks_won),
        r.result,
    )


def view_for(game: Match | RoundState, seat: Seat | None) -> SeatView:
    """What ``seat`` may see of a match or a round; ``None`` for a spectator."""
    if isinstance(game, Match):
        r = game.round
        finished = [summarize(x) for x in game.rounds if x.result is not None]
        # The current round's own result shows in ``result``, not in history.
        if r.result is not None:
            finished = finished[:-1]
        history, winner = tuple(finished), game.winner
    else:
        r, history, winner = game, (), None
    hand, passed, received = _own_cards(r, seat)
    return SeatView(
        seat=seat,
        rules=r.rules,
        round_number=r.round_number,
        dealer=r.dealer,
        phase=r.phase,
        to_act=r.to_act,
        hand=hand,
        hand_counts=(
            r.hands[0].bit_count(),
            r.hands[1].bit_count(),
            r.hands[2].bit_count(),
            r.hands[3].bit_count(),
        ),  # fmt: skip
        bids=tuple(r.bids),
        blind=tuple(r.blind),
        bid_order=tuple(r.bid_order),
        blind_nil_eligible=r.blind_nil_eligible,
        passed=passed,
        received=received,
        exchanges_done=len(r.passes),
        leader=r.leader,
        trick=tuple(r.trick),
        tricks=tuple(r.tricks),
        tricks_won=(r.tricks_won[0], r.tricks_won[1], r.tricks_won[2], r.tricks_won[3]),
        spades_broken=r.spades_broken,
        scores=r.scores_before,
        bags=r.bags_before,
        result=r.result,
        legal_actions=tuple(r.legal_actions(seat)) if seat is not None else (),
        history=history,
        match_winner=winner,
    )


def private_part(game: Match, seat: Seat | None) -> dict[str, Any]:
    """``view_for(game, seat).private_dict()`` alone: a server sends the public
    part, alike for every seat, once per move, and this per socket."""
    r = game.round
    hand, passed, received = _own_cards(r, seat)
    legal = r.legal_actions(seat) if seat is not None else ()
    return _private_dict(seat, hand, passed, received, legal)


def _own_cards(r: RoundState, seat: Seat | None) -> tuple[Hand | None, Hand, Hand]:
    """(hand, passed, received) that ``seat`` may see: its hand once it has
    looked at it, and the cards of its blind nil exchange."""
    if seat is None:
        return None, 0, 0
    if not 0 <= seat < 4:
        raise ValueError("seat must be 0..3 or None")
    passed = received = 0
    for p in r.passes:
        if p.seat == seat:
            passed |= p.cards
        elif p.seat == partner_of(seat):
            received |= p.cards
    return (r.hands[seat] if r.cards_seen[seat] else None), passed, received
