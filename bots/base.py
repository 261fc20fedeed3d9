"""What a bot is: a bidder plus a player, deciding from what its seat may see.

A bot gets a :class:`~game.engine.view.SeatView` (from ``view_for``) and a
seeded ``random.Random``, and returns one action. It keeps no memory between
calls: everything it may know (its hand, the bids, every card played) is in
the view, so a worker that has never seen the table can compute the move.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod

from game.engine.actions import Action, Bid, PassCards, Play, SeeCards
from game.engine.cards import cards_of
from game.engine.state import Phase
from game.engine.view import SeatView


class Bidder(ABC):
    """Chooses a bid. ``name`` is the paper's name (BIS, RB, MS, IO...)."""

    name: str = ""

    @abstractmethod
    def bid(self, view: SeatView, rng: random.Random) -> Bid:
        """The bid for ``view.seat``; the view's hand is known (cards seen)."""

    def blind_nil(self, view: SeatView, rng: random.Random) -> bool:
        """Bid blind nil now, before looking? Only asked when it is allowed."""
        return False

    def pass_cards(self, view: SeatView, rng: random.Random) -> int:
        """Cards to give partner in the blind nil exchange (a mask)."""
        k = view.rules.blind_nil_pass
        hand = cards_of(view.hand or 0)
        blind_niler = view.blind[view.seat] if view.seat is not None else False
        # The blind nil bidder sheds its highest cards; the partner gives its lowest.
        chosen = sorted(hand, key=lambda c: c % 13, reverse=blind_niler)[:k]
        return sum(1 << c for c in chosen)


class Player(ABC):
    """Chooses a card to play. ``name`` is the paper's name (SRP, WRP, UCT...)."""

    name: str = ""

    @abstractmethod
    def play(self, view: SeatView, rng: random.Random) -> int:
        """The card for ``view.seat`` to play; must be one of the legal plays."""


class Bot:
    """A bidder and a player: ``Bot(BIS(), SRP())`` is named ``BIS+SRP``."""

    def __init__(self, bidder: Bidder, player: Player) -> None:
        self.bidder = bidder
        self.player = player

    @property
    def name(self) -> str:
        return f"{self.bidder.name}+{self.player.name}"

    def act(self, view: SeatView, rng: random.Random) -> Action:
        """The bot's action for its seat in ``view`` (it must be the bot's turn)."""
        seat = view.seat
        if seat is None:
            raise ValueError("a bot acts for a seat, not as a spectator")
        if view.phase is Phase.BIDDING:
            if view.hand is None:  # blind nil is open: decide before looking
                if (
                    view.to_act == seat
                    and any(isinstance(a, Bid) and a.blind for a in view.legal_actions)
                    and self.bidder.blind_nil(view, rng)
                ):
                    return Bid(seat, 0, blind=True)
                return SeeCards(seat)
            return self.bidder.bid(view, rng)
        if view.phase is Phase.PASSING:
            return PassCards(seat, self.bidder.pass_cards(view, rng))
        if view.phase is Phase.PLAYING:
            return Play(seat, self.player.play(view, rng))
        raise ValueError("the round is over: nothing to do")


class RandomBidder(Bidder):
    """A uniformly random legal bid: a test opponent, not a strategy."""

    name = "Random"

    def bid(self, view: SeatView, rng: random.Random) -> Bid:
        bids = [a for a in view.legal_actions if isinstance(a, Bid) and not a.blind]
        return rng.choice(bids)


class RandomPlayer(Player):
    """A uniformly random legal card."""

    name = "Random"

    def play(self, view: SeatView, rng: random.Random) -> int:
        return rng.choice([a.card for a in view.legal_actions if isinstance(a, Play)])
