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

The row codes are those of ``bots.learned.features.after_play_codes`` (tested
equal on the same positions).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from bots.learned.features import CARD_INDEX, PLAY_FEATURES
from bots.srp_compiled import (
    BIDS,
    BROKEN,
    DONE,
    LEADER,
    NIL_ALLOWED,
    POS,
    WIN_SEAT,
    WON,
    legal_mask,
    play_card,
    round_type,
    srp_play,
)
from game.engine.fast_compiled import _random_card, _uniform, rules_array, score_points

_CARD_INDEX = CARD_INDEX.astype(np.int64)
MAX_ROWS_PER_ROUND = 52 * 13


@njit(cache=True)
def after_codes(st, seat, order_card, order_seat, n, bags, row):
    """The codes of ``seat``'s state in ``st`` (just after its card, the ``n``-th
    of ``order_card``) into ``row`` (as ``after_play_codes``)."""
    row[:] = 0
    for i in range(n):
        j = _CARD_INDEX[order_card[i]]
        row[j] = i + 1
        row[52 + j] = ((order_seat[i] - seat) & 3) + 1
    hand = st[seat]
    for c in range(52):
        if (hand >> c) & 1:
            row[104 + _CARD_INDEX[c]] = 1
    for k in range(4):
        s = (seat + k) & 3
        b = st[BIDS + s]
        row[156 + k] = max(b, 0)
        row[160 + k] = st[WON + s]
        row[217 + k] = 1 if (b == 0 and st[NIL_ALLOWED] != 0) else 0
    m = st[POS] if st[POS] > 0 else 4  # 0: our card completed the trick
    for i in range(n - m, n):
        row[164 + _CARD_INDEX[order_card[i]]] = 1
    winner = st[WIN_SEAT] if st[POS] > 0 else st[LEADER]
    row[216] = 1 if (winner & 1) == (seat & 1) else 0
    row[221] = bags[seat & 1]
    row[222] = bags[1 - (seat & 1)]
    row[223] = st[BROKEN]
    row[224 + _CARD_INDEX[order_card[n - 1]]] = 1
    for i in range(n):
        lead = order_card[i - i % 4] // 13
        if order_card[i] // 13 != lead:
            row[276 + 4 * ((order_seat[i] - seat) & 3) + lead] = 1


@njit(cache=True)
def _outcome(st, seat, bids, blind, rules, bags, out, sure_t):
    """Play ``st`` out with SRP; the points gap of ``seat``'s side, / 100."""
    while st[DONE] < 13:
        play_card(st, srp_play(st, sure_t))
    score_points(bids, blind, st[WON : WON + 4], rules, bags, out)
    p = seat & 1
    return (out[p] - out[1 - p]) / 100.0


@njit(cache=True)
def label_round(
    st, blind, bags, rules, explore, rng, sure_t, x, y, dec_of_row, dec_type, dec_srp, d0
):
    """Play the round in ``st`` (at its first card) to the end; every decision
    with a choice writes one row per legal card into ``x`` (codes) and ``y``
    (labels), ``dec_of_row`` the decision's number (from ``d0``), ``dec_type[d]``
    the decider's round type and ``dec_srp[d]`` which of its rows is SRP's card
    (for comparisons only). Returns the rows written."""
    bids = st[BIDS : BIDS + 4].copy()
    out = np.empty(4, dtype=np.int64)
    order_card = np.empty(52, dtype=np.int64)
    order_seat = np.empty(52, dtype=np.int64)
    tmp = np.empty_like(st)
    n = 0
    rows = 0
    d = d0
    while st[DONE] < 13:
        seat = (st[LEADER] + st[POS]) & 3
        legal = legal_mask(st)
        if legal & (legal - 1):
            dec_type[d] = round_type(st, seat)
            srp_card = srp_play(st, sure_t)
            dec_srp[d] = 0
            m = legal
            while m:
                card = 0
                low = m & -m
                while low > 1:
                    low >>= 1
                    card += 1
                m &= m - 1
                tmp[:] = st
                play_card(tmp, card)
                order_card[n] = card
                order_seat[n] = seat
                after_codes(tmp, seat, order_card, order_seat, n + 1, bags, x[rows])
                y[rows] = _outcome(tmp, seat, bids, blind, rules, bags, out, sure_t)
                dec_of_row[rows] = d
                if card < srp_card:
                    dec_srp[d] += 1
                rows += 1
            d += 1
            card = srp_card
            if _uniform(rng) < explore:
                card = _random_card(legal, _uniform(rng))
        else:
            card = srp_play(st, sure_t)
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


def label_chunk(
    seed: int, chunk: int, rounds: int, explore: float, progress: Any = None
) -> dict[str, np.ndarray]:
    """Rounds ``"{seed}/qp/{chunk}/{j}"``, ``j < rounds``, labelled: ``x`` (codes),
    ``y``, ``group`` (the decision of each row, from 0), ``types`` (each
    decision's round type, ``bots.round_types.RoundType`` values) and ``srp``
    (the row, within its decision, of SRP's card)."""
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
    rows = decisions = 0
    for j in range(rounds):
        name = f"{seed}/qp/{chunk}/{j}"
        rng = random.Random(name)
        bags = (rng.randrange(rules.bag_limit), rng.randrange(rules.bag_limit))
        r = RoundState(rules, rng.randrange(4), deal_hands(name), bags_before=bags)
        while r.phase is not Phase.PLAYING:
            r.apply(bidder.act(view_for(r, r.to_act), rng))
        state = np.array([rng.getrandbits(64)], dtype=np.uint64)
        n = label_round(
            state_of(r), np.array(r.blind, dtype=np.int64), np.array(bags, dtype=np.int64),
            rules_a, explore, state, sure_t, x[rows:], y[rows:], group[rows:], types, srp,
            decisions,
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
