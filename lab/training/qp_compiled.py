"""QP compiled (numba): the after-state codes, their 300 inputs and the forward pass.

What :class:`bots.learned.qp.QP` does in numpy, on :mod:`bots.srp_compiled`'s
state array, so that QP can be the roll-out policy of its own training data
(``lab.training.qp_data``, policy iteration). For each legal card the seat's
state just after it is written as codes (:func:`after_codes`, equal to
``bots.learned.features.after_play_codes``), and the network is evaluated on
the codes times ``PLAY_SCALE``: the first layer as its bias plus the weight rows
of the nonzero inputs (a row has 300 codes, about a third of them nonzero), the
later layers as the bias plus the weight rows of the positive activations (the
ReLU zeros cost nothing). float32 as the shipped weights; the order of the sums
is not BLAS's, so the values differ from numpy's by rounding (about 1e-6), and
the card is the one of highest value, the lowest card on a tie, as QP's.
``tests/lab/test_qp_compiled.py`` holds both equal to the numpy player on
thousands of positions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bots.bits import low_bit
from bots.learned.features import CARD_INDEX, PLAY_FEATURES, PLAY_SCALE, SUIT_PERMUTATIONS
from bots.learned.mlp import MLP
from bots.srp_compiled import (
    BIDS,
    BROKEN,
    COUNT_NIL,
    DONE,
    LEADER,
    NIL_ALLOWED,
    PLAYED,
    POS,
    WIN_CARD,
    WIN_SEAT,
    WON,
    legal_mask,
    play_card,
)
from game.engine import kernel_cache  # noqa: F401  (before the kernels: their cache folder)

_CARD_INDEX = CARD_INDEX.astype(np.int64)
_FULL = np.int64((1 << 52) - 1)
_SUIT13 = np.int64((1 << 13) - 1)


@njit(cache=True)
def _count(m):
    k = 0
    while m:
        m &= m - 1
        k += 1
    return k


@njit(cache=True)
def _needed(st, side):
    """``bots.learned.features.needed`` on the state array."""
    contract = 0
    taken = 0
    for s in (side, side + 2):
        nil = st[NIL_ALLOWED] != 0 and st[BIDS + s] == 0
        if not nil:
            contract += max(st[BIDS + s], 0)
        if st[COUNT_NIL] != 0 or not nil:
            taken += st[WON + s]
    return max(0, contract - taken)


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
    if row.shape[0] > 292:  # issue 62's part: the contract and the trick in play
        pos = st[POS]
        if pos > 0:
            unseen = _FULL & ~st[PLAYED] & ~hand
            best = st[WIN_CARD]
            suit = best // 13
            above = (_SUIT13 << (13 * suit)) & ~((np.int64(2) << best) - 1)
            row[292] = _count(unseen & above)
            row[293] = _count(unseen & (_SUIT13 << 39)) if suit != 3 else 0
            row[294] = 4 - pos
            opp = 0
            partner = 0
            for i in range(pos, 4):
                s = (st[LEADER] + i) & 3
                if (s & 1) != (seat & 1):
                    opp += 1
                elif s != seat:
                    partner = 1
            row[295] = opp
            row[296] = partner
        row[297] = _needed(st, seat & 1)
        row[298] = _needed(st, 1 - (seat & 1))
        row[299] = 13 - st[DONE]


@njit(cache=True)
def expand(codes, scale, inputs, x):
    """The network's input (float32) of a row of codes, as ``after_play_states``."""
    for i in range(inputs):
        x[i] = np.float32(codes[i]) * scale[i]


@njit(cache=True)
def values(codes, k, scale, ws, bs, h_a, h_b, out):
    """The network's outputs on the first ``k`` rows of ``codes`` (times ``scale``)
    into ``out``: ``ws``, ``bs`` the layers (a tuple of float32 matrices, in x out,
    and of biases), ``h_a``, ``h_b`` scratch of ``k`` or more rows as wide as the
    widest layer. Each weight row is read once for all ``k`` rows."""
    w = ws[0]
    width = w.shape[1]
    h = h_a
    for r in range(k):
        h[r, :width] = bs[0]
        for i in range(w.shape[0]):
            c = codes[r, i]
            if c != 0:
                a = np.float32(c) * scale[i]
                for j in range(width):
                    h[r, j] += a * w[i, j]
    for layer in range(1, len(ws)):
        w = ws[layer]
        o = h_b if layer % 2 == 1 else h_a
        width = w.shape[1]
        for r in range(k):
            o[r, :width] = bs[layer]
        for i in range(w.shape[0]):
            for r in range(k):
                a = h[r, i]
                if a > 0:  # the ReLU: a zero activation adds nothing
                    for j in range(width):
                        o[r, j] += a * w[i, j]
        h = o
    for r in range(k):
        out[r] = h[r, 0]


@njit(cache=True)
def candidates(st, seat, order_card, order_seat, n, bags, scratch, codes, cards):
    """Each legal card of ``seat`` (to act in ``st``, the ``n``-th card of the round)
    into ``cards`` and the codes of its after-state into ``codes``, lowest card
    first; returns how many. Position ``n`` of the orders is overwritten."""
    m = legal_mask(st)
    k = 0
    while m:
        card = low_bit(m)
        m &= m - 1
        scratch[:] = st
        play_card(scratch, card)
        order_card[n] = card
        order_seat[n] = seat
        after_codes(scratch, seat, order_card, order_seat, n + 1, bags, codes[k])
        cards[k] = card
        k += 1
    return k


@njit(cache=True)
def card_values(codes, k, perms, scale, ws, bs, h_a, h_b):
    """The values of the first ``k`` rows of ``codes`` (a candidate's after-state
    each), each the mean over the relabellings ``perms`` (gather rows, the first the
    identity; that row alone for the network's value as it is): row ``p * k + r``
    of ``codes`` gets candidate r relabelled by ``perms[p]``. Returns the values,
    a row of ``h_a`` (its last)."""
    m = perms.shape[0]
    for p in range(1, m):
        for r in range(k):
            for i in range(perms.shape[1]):
                codes[p * k + r, i] = codes[r, perms[p, i]]
    v = h_a[h_a.shape[0] - 1]
    values(codes, k * m, scale, ws, bs, h_a, h_b, v)
    if m > 1:
        for r in range(k):
            t = v[r]
            for p in range(1, m):
                t += v[p * k + r]
            v[r] = t / np.float32(m)
    return v


@njit(cache=True)
def qp_card(st, order_card, order_seat, n, bags, scale, ws, bs, scratch, codes, h_a, h_b, perms):
    """QP's card for the seat to act in ``st`` (the ``n``-th card of the round;
    ``order_card``/``order_seat`` the cards before it, position ``n`` is
    overwritten). ``scratch`` a state array, ``codes``, ``h_a``, ``h_b`` and
    ``perms`` as :class:`CompiledQP` holds them."""
    legal = legal_mask(st)
    if legal & (legal - 1) == 0:  # one legal card
        return low_bit(legal)
    seat = (st[LEADER] + st[POS]) & 3
    cards = np.empty(13, dtype=np.int64)
    k = candidates(st, seat, order_card, order_seat, n, bags, scratch, codes, cards)
    v = card_values(codes, k, perms, scale, ws, bs, h_a, h_b)
    best = 0
    for r in range(1, k):
        if v[r] > v[best]:  # ties: the lowest card, as QP's argmax
            best = r
    return cards[best]


class CompiledQP:
    """A network's layers as the compiled functions take them, with scratch space."""

    def __init__(self, net: MLP, symmetric: bool = False) -> None:
        self.ws = tuple(np.ascontiguousarray(w, dtype=np.float32) for w, _ in net.layers)
        self.bs = tuple(np.ascontiguousarray(b, dtype=np.float32) for _, b in net.layers)
        self.scale = np.ascontiguousarray(PLAY_SCALE[: net.inputs], dtype=np.float32)
        # The relabellings a value is the mean over (QP(symmetric=True)), or none.
        self.perms = SUIT_PERMUTATIONS if symmetric else SUIT_PERMUTATIONS[:1].copy()
        rows = 13 * len(self.perms)  # every candidate, in every relabelling
        width = max(w.shape[1] for w in self.ws)
        # h_a's last row holds the values.
        self.h_a = np.zeros((rows + 1, max(width, rows)), dtype=np.float32)
        self.h_b = np.zeros((rows, width), dtype=np.float32)
        self.codes = np.zeros((rows, PLAY_FEATURES), dtype=np.uint8)
        self.checksum = net.checksum
