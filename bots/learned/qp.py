"""QP, the Four Hundred card-play value network as a player.

For every legal card it builds the state our seat would be in just after
playing it (``features.after_play_states``), evaluates the value network on
all of them at once and plays the card of highest value (ties: the lowest
card). No rule of play is written here: the network alone ranks the cards.

QP learned by self-play alone, from random weights, as the Four Hundred
paper trains (``lab.training.qp_self``): the network at every seat, each
state it entered labelled by the λ-return of the round's Spades score
(``QP-self``, tournaments only since issue 62). ``QP-trick`` (issue 62) is that
network with 8 inputs added for the contract and the trick in play, trained on
from it with half the rounds against SRP. The shipped QP (``QP-branch``, issue
62) is QP-trick trained on with branched labels: at half of its decisions
against SRP every legal card is played out on the true deal, so that each card
is valued against the opponent it meets (``lab.training.qp_league``), and
it values each card as the mean of its network's values on the six
relabellings of clubs, diamonds and hearts (one position to the rules, six to
the network: ``features.SUIT_PERMUTATIONS``); ``QP-branch`` is the network's
value alone, as the earlier variants play. ``QP-srp``
(tournaments only) is the issue-46 network fitted instead to every legal card's
outcome when SRP plays the round out (``lab.training.qp_data``,
``qp_train``); ``QP-plain`` is that training on the paper's state alone (the
ablation) and ``QP2`` one step of policy iteration from it.
"""

from __future__ import annotations

import random

import numpy as np
from threadpoolctl import ThreadpoolController

from game.engine.actions import Play
from game.engine.tricks import winning_card
from game.engine.view import SeatView

from ..base import Player
from .features import SUIT_PERMUTATIONS, after_play_states
from .mlp import MLP, load_mlp, shipped

# The six relabellings make 6 rows a card, a product big enough for OpenBLAS to
# split across threads: on a busy 2-core machine that took the 90th percentile of
# a decision from 0.4 to 44 ms (measured). One thread for them, always.
_BLAS = ThreadpoolController()

# The issue-46 self-play weights (lab.training.qp_self), the shipped QP until
# QP-trick beat SRP by more (issue 62); QP-self for tournaments.
QP_SELF_WEIGHTS = "qp.npz"
# Fitted to SRP's roll-outs, the paper's state alone, and one step of policy
# iteration from the first (tournaments only).
QP_SRP_WEIGHTS = "qp_srp.npz"
QP_PLAIN_WEIGHTS = "qp_plain.npz"
QP2_WEIGHTS = "qp2.npz"
# QP's self-play continued against a league: SRP, earlier networks, match deals (issue 62).
QP_LEAGUE_WEIGHTS = "qp_league.npz"
# QP's weights with issue 62's inputs added (the contract and the trick in play,
# 300 inputs), trained on against SRP and itself on match deals: the shipped QP
# until QP-branch (tournaments only).
QP_TRICK_WEIGHTS = "qp_trick.npz"
# QP-trick's run without the 8 inputs (292): its ablation (tournaments only).
QP_TRICK292_WEIGHTS = "qp_trick292.npz"
# QP-trick's run continued at a third of its rate against SRP (60%), QP-trick and
# the run's snapshots (25%), itself (15%): issue 62's third candidate, tournaments only.
QP_CONT_WEIGHTS = "qp_cont.npz"
# QP-trick's run with branched labels: at half of the learner's decisions every
# legal card is played out on the true deal against SRP (or itself), the
# learner going on (issue 62's fourth candidate).
QP_BRANCH_WEIGHTS = "qp_branch.npz"
QP_WEIGHTS = QP_BRANCH_WEIGHTS  # the shipped QP (issue 62: q26 against q16)


class QP(Player):
    name = "QP"

    def __init__(
        self, weights: str | MLP = QP_WEIGHTS, epsilon: float = 0.0, symmetric: bool = False
    ) -> None:
        if isinstance(weights, MLP):
            self.network = weights
        else:
            self.network = load_mlp(weights if "/" in weights else shipped(weights))
        # Exploration for training only: a random legal card with this probability.
        self.epsilon = epsilon
        # Each card's value as the mean over the six relabellings of the plain suits.
        self.symmetric = symmetric

    def values(self, view: SeatView, cards: list[int]) -> np.ndarray:
        """The network's value of each candidate card (float32, one per card)."""
        states = after_play_states(view, cards, self.network.inputs)
        if not self.symmetric:
            return self.network(states)[:, 0]
        n = states.shape[1]
        rows = states[:, SUIT_PERMUTATIONS[:, :n]].reshape(-1, n)  # card-major, 6 a card
        with _BLAS.limit(limits=1, user_api="blas"):
            values = self.network(rows)[:, 0]
        return values.reshape(len(cards), -1).mean(axis=1)

    def play(self, view: SeatView, rng: random.Random) -> int:
        cards = sorted(a.card for a in view.legal_actions if isinstance(a, Play))
        if not cards:
            raise ValueError("no card is legal now")
        if len(cards) == 1:
            return cards[0]
        if self.epsilon and rng.random() < self.epsilon:
            return rng.choice(cards)
        # argmax takes the first (lowest) of ties
        return cards[int(np.argmax(self.values(view, cards)))]


class QPPlain(QP):
    """The ablation: the same training on the paper's plain state (164 inputs)."""

    name = "QP-plain"

    def __init__(self, weights: str | MLP = QP_PLAIN_WEIGHTS, epsilon: float = 0.0) -> None:
        super().__init__(weights, epsilon)


class QPThird(QP):
    """QP with SRP's card at third seat where SRP's puts the side ahead in the trick
    and QP's does not, in rounds without a nil: the decisions ``qp_diagnose`` found
    costliest against SRP (issue 62: +13 points a decision for SRP's card). A
    measured repair, tournaments only, on QP-trick's weights (those it was measured
    with); the network alone is QP."""

    name = "QP-third"

    def __init__(self, weights: str | MLP = QP_TRICK_WEIGHTS) -> None:
        from bots.srp import SRP  # rule play: only this variant needs it

        super().__init__(weights)
        self.rule = SRP()

    def play(self, view: SeatView, rng: random.Random) -> int:
        card = super().play(view, rng)
        if len(view.trick) != 2 or 0 in view.bids or view.seat is None:
            return card
        side = view.seat & 1
        if winning_card(view.leader, [*view.trick, card])[1] & 1 == side:
            return card
        other = self.rule.play(view, rng)
        if winning_card(view.leader, [*view.trick, other])[1] & 1 == side:
            return other
        return card
