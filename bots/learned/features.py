"""What the learned bots see, as numbers: one function per network, numpy only.

Bidding (NNB, SPB), after the Four Hundred paper's 4x13 hand matrix with the
trump row first: 52 hand bits (spades, then clubs, diamonds, hearts; ranks
two..ace), the bidding position (0..3 earlier bids, one-hot) and, for partner,
left-hand and right-hand opponent, whether they have bid, whether it was nil,
and the bid / 13. 65 numbers.

Card play (QP), the paper's state: the order history (52 cards, the i-th card
of the round at (i + 1) / 52), the player history (52 cards, who played it
relative to us: 1 we, 2 left, 3 partner, 4 right, / 4), our hand (52 bits),
the four bids and the tricks won so far (relative seat order, / 13). To make
"who leads, what wins the trick" learnable by a small network (the paper saw
its player throw high cards that could not win) we add the cards of the
trick in progress (52 bits) and whether our side is winning it (1). 217
numbers.
"""

from __future__ import annotations

import numpy as np

from game.engine.cards import partner_of
from game.engine.tricks import winning_card
from game.engine.view import SeatView

BID_FEATURES = 65
PLAY_FEATURES = 217

# Engine card c = suit * 13 + rank (clubs, diamonds, hearts, spades); ours puts
# the spades row first.
ROW_OF_SUIT = (1, 2, 3, 0)
CARD_INDEX = np.array([ROW_OF_SUIT[c // 13] * 13 + c % 13 for c in range(52)], dtype=np.int64)


def hand_bits(hand: int) -> np.ndarray:
    """The 52 hand bits, spades row first."""
    bits = np.zeros(52, dtype=np.float32)
    for c in range(52):
        if hand >> c & 1:
            bits[CARD_INDEX[c]] = 1.0
    return bits


def relative_seats(seat: int) -> tuple[int, int, int]:
    """Partner, left-hand opponent, right-hand opponent."""
    return partner_of(seat), (seat + 1) & 3, (seat + 3) & 3


def bid_features(
    hand: int, seat: int, bids: tuple[int | None, ...] | list[int | None], earlier: int
) -> np.ndarray:
    """The bidding input of ``seat`` holding ``hand`` with ``earlier`` bids made."""
    x = np.zeros(BID_FEATURES, dtype=np.float32)
    x[:52] = hand_bits(hand)
    x[52 + earlier] = 1.0
    for k, s in enumerate(relative_seats(seat)):
        b = bids[s]
        if b is not None:
            x[56 + 3 * k] = 1.0
            x[57 + 3 * k] = 1.0 if b == 0 else 0.0
            x[58 + 3 * k] = b / 13.0
    return x


SCORE_FEATURES = 4  # SPB-score's extra inputs (:func:`score_features`)


def score_features(seat: int, scores: tuple[int, int], bags: tuple[int, int]) -> np.ndarray:
    """The match as SPB-score sees it, from ``seat``'s side: both scores / 200 and
    both partnerships' bags / 10 (ours first)."""
    us, them = seat & 1, 1 - (seat & 1)
    return np.array(
        [scores[us] / 200.0, scores[them] / 200.0, bags[us] / 10.0, bags[them] / 10.0],
        dtype=np.float32,
    )


def view_bid_features(view: SeatView) -> np.ndarray:
    seat, hand = view.seat, view.hand
    if seat is None or hand is None:
        raise ValueError("a learned bidder bids for a seat that has seen its cards")
    return bid_features(hand, seat, view.bids, len(view.bid_order))


# ----- card play --------------------------------------------------------------------


def play_state(
    seat: int,
    hand: int,
    order: list[tuple[int, int]],
    bids: tuple[int | None, ...] | list[int | None],
    tricks_won: tuple[int, ...] | list[int],
    trick: list[int],
    leader: int,
) -> np.ndarray:
    """The state of ``seat``: ``order`` is every (seat, card) played this round in
    order, ``trick`` the cards of the trick in progress (led by ``leader``)."""
    x = np.zeros(PLAY_FEATURES, dtype=np.float32)
    for i, (s, c) in enumerate(order):
        j = CARD_INDEX[c]
        x[j] = (i + 1) / 52.0
        x[52 + j] = (((s - seat) & 3) + 1) / 4.0
    x[104:156] = hand_bits(hand)
    for k, s in enumerate((seat, (seat + 1) & 3, (seat + 2) & 3, (seat + 3) & 3)):
        b = bids[s]
        x[156 + k] = (b if b is not None else 0) / 13.0
        x[160 + k] = tricks_won[s] / 13.0
    for c in trick:
        x[164 + CARD_INDEX[c]] = 1.0
    if trick:
        _, winner = winning_card(leader, trick)
        x[216] = 1.0 if (winner & 1) == (seat & 1) else 0.0
    return x


def after_play_states(view: SeatView, cards: list[int]) -> np.ndarray:
    """One row per candidate card: the state of our seat just after playing it
    (a completed trick is left in the trick bits, so its winner shows)."""
    seat, hand = view.seat, view.hand
    if seat is None or hand is None:
        raise ValueError("QP plays for a seat that has seen its cards")
    order: list[tuple[int, int]] = []
    for t in view.tricks:
        order.extend(((t.leader + i) & 3, c) for i, c in enumerate(t.cards))
    order.extend(((view.leader + i) & 3, c) for i, c in enumerate(view.trick))
    rows = np.empty((len(cards), PLAY_FEATURES), dtype=np.float32)
    for r, card in enumerate(cards):
        rows[r] = play_state(
            seat,
            hand & ~(1 << card),
            [*order, (seat, card)],
            view.bids,
            view.tricks_won,
            [*view.trick, card],
            view.leader,
        )
    return rows
