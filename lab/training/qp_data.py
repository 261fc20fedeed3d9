"""QP's training data: every legal card of every decision, played out, compiled (numba).

A round is dealt and bid in Python (BIS, the registry's bidder), then played
in one compiled call on :mod:`bots.srp_compiled`'s state array. At each
decision with a choice, every legal card is played on a copy of the true deal
and the round is played out to its end by SRP at all four seats; the label of
the card is the Spades score of that ending, the decider's partnership's
round points minus the opponents' (nil, blind nil and the bags of both sides,
which start from a random count, all in), / 100. The network, which sees only
the seat's information (:mod:`bots.learned.features`), then regresses the
expected outcome of each card given what the seat knows: the hidden cards'
variance is averaged by the regression, and the cards of one decision share
their deal, so their differences carry little of it.

So the targets are those of one step of policy improvement over SRP (SRP is
the roll-out policy, not a rule given to the learner at play time). The round
itself goes on with SRP's card, or with a random legal card with probability
``explore``, so that the states are not only SRP's.

Policy iteration (``rollout``): QP itself, compiled with given weights
(:mod:`lab.training.qp_compiled`), plays the round and the roll-outs instead
of SRP, optionally with SRP at a random share of the seats, on other deals;
the labels are then the values of the cards when that QP plays on.

The row codes are those of ``bots.learned.features.after_play_codes`` (tested
equal on the same positions).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from bots.bits import low_bit
from bots.learned.features import PLAY_FEATURES
from bots.learned.mlp import MLP
from bots.srp_compiled import (
    BIDS,
    DONE,
    LEADER,
    POS,
    STATE_SIZE,
    WON,
    legal_mask,
    play_card,
    round_type,
    srp_play,
)
from game.engine import kernel_cache  # noqa: F401  (before the kernels: their cache folder)
from game.engine.fast_compiled import _random_card, _uniform, rules_array, score_points
from lab.training.qp_compiled import CompiledQP, after_codes, qp_card

__all__ = ["after_codes", "label_chunk", "label_round", "rollout_tag"]

MAX_ROWS_PER_ROUND = 52 * 13
# What label_round is given for a network when SRP plays the roll-outs (unused).
_NO_NET = MLP([(np.zeros((PLAY_FEATURES, 1), np.float32), np.zeros(1, np.float32))])


@njit(cache=True)
def _outcome(st, seat, bids, blind, rules, bags, out, sure_t):
    """Play ``st`` out with SRP; the points gap of ``seat``'s side, / 100."""
    while st[DONE] < 13:
        play_card(st, srp_play(st, sure_t))
    score_points(bids, blind, st[WON : WON + 4], rules, bags, out)
    p = seat & 1
    return (out[p] - out[1 - p]) / 100.0


@njit(cache=True)
def _outcome_qp(
    st, seat, bids, blind, rules, bags, out, order_card, order_seat, n, net, srp_seats, sure_t
):
    """Play ``st`` (``n`` cards played, ``order_card``/``order_seat``) out with QP at
    every seat but those of the bits of ``srp_seats`` (SRP); the points gap of
    ``seat``'s side, / 100."""
    scale, ws, bs, scratch, codes, h_a, h_b, perms = net
    while st[DONE] < 13:
        seat_now = (st[LEADER] + st[POS]) & 3
        if (srp_seats >> seat_now) & 1:
            card = srp_play(st, sure_t)
        else:
            card = qp_card(
                st, order_card, order_seat, n, bags, scale, ws, bs, scratch, codes, h_a, h_b, perms
            )
        order_card[n] = card
        order_seat[n] = seat_now
        n += 1
        play_card(st, card)
    score_points(bids, blind, st[WON : WON + 4], rules, bags, out)
    p = seat & 1
    return (out[p] - out[1 - p]) / 100.0


@njit(cache=True)
def label_round(
    st, blind, bags, rules, explore, rng, sure_t, x, y, dec_of_row, dec_type, dec_srp, d0,
    policy, net, srp_share,
):  # fmt: skip
    """Play the round in ``st`` (at its first card) to the end; every decision
    with a choice writes one row per legal card into ``x`` (codes) and ``y``
    (labels), ``dec_of_row`` the decision's number (from ``d0``), ``dec_type[d]``
    the decider's round type and ``dec_srp[d]`` which of its rows is the roll-out
    policy's card (for comparisons only). ``policy`` 0: the roll-outs and the
    round are played by SRP; 1: by QP with the network ``net`` (the tuple of
    :class:`~lab.training.qp_compiled.CompiledQP`'s arrays), except that at each
    decision each seat is drawn to play SRP instead with probability
    ``srp_share`` (the same seats for all the decision's cards, and the round
    goes on with the decider's drawn policy's card). Returns the rows written."""
    bids = st[BIDS : BIDS + 4].copy()
    out = np.empty(4, dtype=np.int64)
    order_card = np.empty(52, dtype=np.int64)
    order_seat = np.empty(52, dtype=np.int64)
    tmp = np.empty_like(st)
    n = 0
    rows = 0
    d = d0
    scale, ws, bs, scratch, codes, h_a, h_b, perms = net
    while st[DONE] < 13:
        seat = (st[LEADER] + st[POS]) & 3
        legal = legal_mask(st)
        if legal & (legal - 1):
            dec_type[d] = round_type(st, seat)
            srp_seats = 0
            if policy == 1 and srp_share > 0:
                for s in range(4):
                    if _uniform(rng) < srp_share:
                        srp_seats |= 1 << s
            if policy == 0 or (srp_seats >> seat) & 1:
                base_card = srp_play(st, sure_t)
            else:
                base_card = qp_card(
                    st, order_card, order_seat, n, bags, scale, ws, bs, scratch, codes, h_a, h_b,
                    perms,
                )  # fmt: skip
            dec_srp[d] = 0
            m = legal
            while m:
                card = low_bit(m)
                m &= m - 1
                tmp[:] = st
                play_card(tmp, card)
                order_card[n] = card
                order_seat[n] = seat
                after_codes(tmp, seat, order_card, order_seat, n + 1, bags, x[rows])
                if policy == 0:
                    y[rows] = _outcome(tmp, seat, bids, blind, rules, bags, out, sure_t)
                else:
                    y[rows] = _outcome_qp(
                        tmp, seat, bids, blind, rules, bags, out, order_card, order_seat, n + 1,
                        net, srp_seats, sure_t,
                    )  # fmt: skip
                dec_of_row[rows] = d
                if card < base_card:
                    dec_srp[d] += 1
                rows += 1
            d += 1
            card = base_card
            if _uniform(rng) < explore:
                card = _random_card(legal, _uniform(rng))
        elif policy == 0:
            card = srp_play(st, sure_t)
        else:
            card = qp_card(
                st, order_card, order_seat, n, bags, scale, ws, bs, scratch, codes, h_a, h_b, perms
            )
        order_card[n] = card
        order_seat[n] = seat
        n += 1
        play_card(st, card)
    return rows


def empty_buffers(rounds: int) -> tuple[np.ndarray, ...]:
    """Room for ``rounds`` rounds: codes, labels, decision of each row, round types,
    SRP's choices."""
    n = rounds * MAX_ROWS_PER_ROUND
    return (
        np.zeros((n, PLAY_FEATURES), dtype=np.uint8),
        np.zeros(n, dtype=np.float32),
        np.zeros(n, dtype=np.int64),
        np.zeros(rounds * 52, dtype=np.int8),
        np.zeros(rounds * 52, dtype=np.int8),
    )


def rollout_tag(net: MLP | None, srp_share: float = 0.0) -> str:
    """What names the roll-out policy in deal seeds and data files: "" for SRP,
    ``qp-<first 12 hex digits of the weights' SHA-256>`` for QP, then
    ``-srp<share>`` if SRP plays a share of the seats."""
    if net is None:
        return ""
    return f"qp-{net.checksum[:12]}" + (f"-srp{srp_share:g}" if srp_share else "")


def net_arrays(net: MLP | None, symmetric: bool = False) -> tuple:
    """The network as ``label_round`` takes it (a stand-in when SRP rolls out);
    ``symmetric``: each card's value the mean over the suits' relabellings."""
    c = CompiledQP(net if net is not None else _NO_NET, symmetric)
    scratch = np.zeros(STATE_SIZE, dtype=np.int64)
    return (c.scale, c.ws, c.bs, scratch, c.codes, c.h_a, c.h_b, c.perms)


def label_chunk(
    seed: int,
    chunk: int,
    rounds: int,
    explore: float,
    progress: Any = None,
    rollout: MLP | None = None,
    srp_share: float = 0.0,
) -> dict[str, np.ndarray]:
    """Rounds ``"{seed}/qp/{chunk}/{j}"``, ``j < rounds``, labelled: ``x`` (codes),
    ``y``, ``group`` (the decision of each row, from 0), ``types`` (each
    decision's round type, ``bots.round_types.RoundType`` values) and ``srp``
    (the row, within its decision, of the roll-out policy's card). With a
    ``rollout`` network, QP with it plays the round and the roll-outs instead of
    SRP, on other deals: ``"{seed}/<rollout_tag>/{chunk}/{j}"``; ``srp_share``: the
    chance that a seat plays SRP in a decision's roll-outs (``label_round``)."""
    import random

    from bots.base import Bot
    from bots.srp import SRP
    from bots.srp_compiled import state_of, sure_table
    from bots.success_curves import make_bis
    from game.engine.deal import deal_hands
    from game.engine.rules import Rules
    from game.engine.state import Phase, RoundState
    from game.engine.view import view_for

    rules = Rules(winning_goal=200, losing_goal=-100)
    rules_a = rules_array(rules)
    bidder = Bot(make_bis("BIS"), SRP())
    sure_t = sure_table()
    x, y, group, types, srp = empty_buffers(rounds)
    policy, net = (0 if rollout is None else 1), net_arrays(rollout)
    rows = decisions = 0
    for j in range(rounds):
        name = f"{seed}/{rollout_tag(rollout, srp_share) or 'qp'}/{chunk}/{j}"
        rng = random.Random(name)
        bags = (rng.randrange(rules.bag_limit), rng.randrange(rules.bag_limit))
        r = RoundState(rules, rng.randrange(4), deal_hands(name), bags_before=bags)
        while r.phase is not Phase.PLAYING:
            r.apply(bidder.act(view_for(r, r.to_act), rng))
        state = np.array([rng.getrandbits(64)], dtype=np.uint64)
        n = label_round(
            state_of(r), np.array(r.blind, dtype=np.int64), np.array(bags, dtype=np.int64),
            rules_a, explore, state, sure_t, x[rows:], y[rows:], group[rows:], types, srp,
            decisions, policy, net, srp_share,
        )  # fmt: skip
        decisions = int(group[rows + n - 1]) + 1 if n else decisions
        rows += n
        if progress is not None:
            progress.update(1)
    return {
        "x": x[:rows],
        "y": y[:rows],
        "group": group[:rows],
        "types": types[:decisions],
        "srp": srp[:decisions],
    }
