"""The learned bidders: NNB (a trick regression inside BIS) and SPB (a self-play policy).

**NNB** (the Four Hundred paper's bet model): a network from the hand, the
bidding position and the earlier bids to the tricks the seat will take under
SRP play. It replaces only BIS's regular-takes estimate
(:meth:`bots.bis.BIS.regular_estimate`): the prediction is rounded half up
and clamped to 1..13 by BIS's own rounding, and nil, the end-game rules and
the legal-bid clamp stay BIS's, so NNB against BIS compares the regular
estimate alone. ``NNB`` was trained with the paper's asymmetric loss,
``NNB-sym`` with plain squared loss (the ablation).

**SPB**: a network rating each of {nil, 1..13}, learned by self-play alone
(counterfactual fitted Q-iteration, ``lab.training.spb_q``: every bid of a
seat played out on the same deal), no hand-written rule; at the table it bids
its highest-rated legal bid (blind nil is never bid).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from game.engine.actions import Bid
from game.engine.view import SeatView

from ..base import Bidder
from ..bis import BIS
from ..success_curves import load_success_curves
from .features import BID_FEATURES, score_features, view_bid_features
from .mlp import MLP, load_mlp, shipped

NNB_WEIGHTS = "nnb.npz"
NNB_SYM_WEIGHTS = "nnb_sym.npz"
SPB_WEIGHTS = "spb.npz"
SPB_SCORE_WEIGHTS = "spb_score.npz"
SPB_POOL_WEIGHTS = "spb_pool.npz"
SPB_POOL2_WEIGHTS = "spb_pool2.npz"
SPB_MATCH_WEIGHTS = "spb_match.npz"


class NNB(BIS):
    """BIS whose regular takes are the network's prediction (see the module doc)."""

    name = "NNB"

    def __init__(self, weights: str | MLP = NNB_WEIGHTS, name: str = "NNB", **options: Any) -> None:
        # The shipped curves and the registry BIS's options, so only the estimate differs.
        super().__init__(success_curves=load_success_curves(), **options)
        self.network = weights if isinstance(weights, MLP) else load_mlp(_path(weights))
        self.name = name

    @classmethod
    def like(cls, bis: BIS, weights: str | MLP = NNB_WEIGHTS, name: str = "NNB") -> NNB:
        """NNB with the options and curves of ``bis`` (the registry's BIS), so that
        NNB against that BIS differs in the regular estimate alone."""
        nnb = cls(weights, name)
        for option, value in vars(bis).items():  # every option BIS has, now or later
            if option != "name":
                setattr(nnb, option, value)
        return nnb

    def regular_estimate(self, view: SeatView, prev: tuple[int, ...], opp_nil: int) -> float:
        return float(self.network(view_bid_features(view))[0])


class SPB(Bidder):
    """The self-play bidder: the legal bid its network rates highest."""

    name = "SPB"

    def __init__(self, weights: str | MLP = SPB_WEIGHTS) -> None:
        self.network = weights if isinstance(weights, MLP) else load_mlp(_path(weights))

    def bid(self, view: SeatView, rng: random.Random) -> Bid:
        x = view_bid_features(view)
        if self.network.inputs > BID_FEATURES:  # SPB-score: the match's score and bags too
            assert view.seat is not None
            x = np.concatenate([x, score_features(view.seat, view.scores, view.bags)])
        logits = self.network(x)
        legal = {a.tricks: a for a in view.legal_actions if isinstance(a, Bid) and not a.blind}
        if not legal:
            raise ValueError("no bid is legal now")
        # Output k of the network is the bid k (0 = nil); ties go to the lower bid.
        best = max(legal, key=lambda k: (float(logits[k]), -k))
        return legal[best]


def _path(weights: str) -> str:
    return weights if "/" in weights else shipped(weights)


def policy_mask(view: SeatView) -> np.ndarray:
    """Which of the 14 policy actions (nil, 1..13) are legal in ``view``."""
    mask = np.zeros(14, dtype=bool)
    for a in view.legal_actions:
        if isinstance(a, Bid) and not a.blind:
            mask[a.tricks] = True
    return mask
