"""What the learned bots see, as numbers: one function per network, numpy only.

Bidding (NNB, SPB), after the Four Hundred paper's 4x13 hand matrix with the
trump row first: 52 hand bits (spades, then clubs, diamonds, hearts; ranks
two..ace), the bidding position (0..3 earlier bids, one-hot) and, for partner,
left-hand and right-hand opponent, whether they have bid, whether it was nil,
and the bid / 13. 65 numbers.

Card play (QP), the state of our seat just after a candidate card, first the
paper's (164 numbers, the "plain" features of the ablation): the order history
(52 cards, the i-th card of the round at (i + 1) / 52), the player history (52
cards, who played it relative to us: 1 we, 2 left, 3 partner, 4 right, / 4),
our hand (52 bits), the four bids and the tricks won (we, left, partner,
right; / 13). Then what Spades needs (128 more, 292 in all): the cards of the
trick our card went to (52 bits; all four when it completed the trick), whether
our side wins it so far, who bid nil (4), each side's bags before the round
(ours, theirs; / 10), whether spades are broken, the card we just played (52
bits: the action, which the paper's state holds only as the newest entry of
the order history) and the suits each seat has shown void in by not following
(we, left, partner, right x clubs, diamonds, hearts, spades). Then, issue 62,
what the contract and the trick in play come to (8 more, 300 in all): how many
of the cards we have not seen beat the trick's winning card in its suit, and
how many unseen spades could trump it (none when it is a spade; both 0 once our
card completed the trick), how many seats are still to play to the trick, how
many of them opponents and whether partner is one, each side's tricks still
needed for its contract (nil bidders' bids not in it) and the tricks left. All
of it follows from the inputs before, but only through comparisons over many
of them; issue 62 found QP's side set far more often than SRP's, QP leaving
tricks to SRP at the third seat and not ruffing where SRP's card would have
made the contract (docs/bots.md, "Why QP's side is set"). The numbers are kept as
small integer codes times a fixed scale (``PLAY_SCALE``) so that the training
data (``lab.training.qp_data``, compiled, the same codes) fit in bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations

import numpy as np

from game.engine.cards import partner_of
from game.engine.tricks import winning_card
from game.engine.view import SeatView

BID_FEATURES = 65
PLAIN_FEATURES = 164  # the Four Hundred paper's state
SPADES_FEATURES = 292  # with the Spades additions (the networks of issue 46)
PLAY_FEATURES = 300  # with the contract and the trick in play (issue 62)

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

# Where each part of a card-play row starts (see the module's docstring).
ORDER, PLAYER, HAND, BIDS, WON, TRICK, WINNING, NILS, BAGS, BROKEN, CARD, VOIDS = (
    0, 52, 104, 156, 160, 164, 216, 217, 221, 223, 224, 276,
)  # fmt: skip
BEAT_SUIT, BEAT_TRUMP, TO_PLAY, OPP_TO_PLAY, PARTNER_TO_PLAY, NEED, LEFT = (
    292, 293, 294, 295, 296, 297, 299,
)  # fmt: skip
PLAY_SCALE = np.ones(PLAY_FEATURES, dtype=np.float32)
PLAY_SCALE[ORDER:PLAYER] = 1 / 52
PLAY_SCALE[PLAYER:HAND] = 1 / 4
PLAY_SCALE[BIDS:TRICK] = 1 / 13
PLAY_SCALE[BAGS : BAGS + 2] = 1 / 10
PLAY_SCALE[BEAT_SUIT:TO_PLAY] = 1 / 13
PLAY_SCALE[TO_PLAY] = 1 / 3
PLAY_SCALE[OPP_TO_PLAY] = 1 / 2
PLAY_SCALE[NEED : LEFT + 1] = 1 / 13

SUIT_MASK = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))
SPADES = 3


def suit_permutations() -> np.ndarray:
    """Gather indices, 6 x ``PLAY_FEATURES``: row ``perms[p]`` of a card-play row is
    the same position with clubs, diamonds and hearts relabelled by the p-th of their
    six orders (the first the identity). Spades are trumps and the three others are
    alike in the rules, so the six rows are one position; a network's values on them
    differ only by what it has not learned. Only the card blocks and the voids name
    a suit; every count (the issue-62 inputs too) is the same under a relabelling."""
    out = np.zeros((6, PLAY_FEATURES), dtype=np.int64)
    for p, order in enumerate(permutations(range(3))):
        src = np.arange(PLAY_FEATURES)
        for s, t in enumerate(order):  # suit s becomes suit t
            for rank in range(13):
                for block in (ORDER, PLAYER, HAND, TRICK, CARD):
                    src[block + CARD_INDEX[t * 13 + rank]] = block + CARD_INDEX[s * 13 + rank]
            for rel in range(4):
                src[VOIDS + 4 * rel + t] = VOIDS + 4 * rel + s
        out[p] = src
    return out


SUIT_PERMUTATIONS = suit_permutations()


def _bits(m: int) -> int:
    return bin(m).count("1")


def needed(
    bids: Sequence[int | None], won: Sequence[int], nil: bool, count_nil: bool, side: int
) -> int:
    """Tricks partnership ``side`` still needs for its contract (a nil bidder's
    bid is not in it; its tricks count if the rules say so)."""
    contract = taken = 0
    for s in (side, side + 2):
        is_nil = nil and bids[s] == 0
        contract += 0 if is_nil else max(bids[s] or 0, 0)
        taken += won[s] if count_nil or not is_nil else 0
    return max(0, contract - taken)


def trick_codes(
    row: np.ndarray, seat: int, leader: int, trick: tuple[int, ...], unseen: int,
    bids: Sequence[int | None], won: Sequence[int], nil: bool, count_nil: bool, done: int,
) -> None:  # fmt: skip
    """The issue-62 part of ``row``: ``trick`` the cards of the trick our card went to
    (led by ``leader``), ``unseen`` the cards we have not seen, ``won`` the tricks won
    by seat and ``done`` the tricks completed, both with our card's."""
    if len(trick) < 4:
        best, _ = winning_card(leader, trick)
        suit = best // 13
        row[BEAT_SUIT] = _bits(unseen & SUIT_MASK[suit] & ~((2 << best) - 1))
        row[BEAT_TRUMP] = _bits(unseen & SUIT_MASK[SPADES]) if suit != SPADES else 0
        later = [(leader + i) & 3 for i in range(len(trick), 4)]
        row[TO_PLAY] = len(later)
        row[OPP_TO_PLAY] = sum((s & 1) != (seat & 1) for s in later)
        row[PARTNER_TO_PLAY] = int(partner_of(seat) in later)
    us = seat & 1
    row[NEED] = needed(bids, won, nil, count_nil, us)
    row[NEED + 1] = needed(bids, won, nil, count_nil, 1 - us)
    row[LEFT] = 13 - done


def after_play_codes(view: SeatView, cards: list[int]) -> np.ndarray:
    """One row of codes (uint8) per candidate card: our seat's state just after
    playing it. Times ``PLAY_SCALE`` they are the network's input."""
    seat, hand = view.seat, view.hand
    if seat is None or hand is None:
        raise ValueError("QP plays for a seat that has seen its cards")
    base = np.zeros(PLAY_FEATURES, dtype=np.uint8)
    n = 0
    for t in (*view.tricks, None):
        leader, played = (t.leader, t.cards) if t is not None else (view.leader, view.trick)
        for i, c in enumerate(played):
            n += 1
            base[ORDER + CARD_INDEX[c]] = n
            base[PLAYER + CARD_INDEX[c]] = ((leader + i - seat) & 3) + 1
            if c // 13 != played[0] // 13:
                base[VOIDS + 4 * ((leader + i - seat) & 3) + played[0] // 13] = 1
    base[HAND:BIDS] = hand_bits(hand)
    for k in range(4):
        s = (seat + k) & 3
        bid = view.bids[s]
        base[BIDS + k] = bid or 0
        base[WON + k] = view.tricks_won[s]
        base[NILS + k] = int(bid == 0 and view.rules.nil)
    base[BAGS] = view.bags[seat & 1]
    base[BAGS + 1] = view.bags[1 - (seat & 1)]
    rows = np.repeat(base[None, :], len(cards), axis=0)
    seen = hand
    for t in view.tricks:
        for c in t.cards:
            seen |= 1 << c
    for c in view.trick:
        seen |= 1 << c
    nil, count_nil = view.rules.nil, view.rules.nil_tricks_count_for_team
    for r, card in enumerate(cards):
        row = rows[r]
        j = CARD_INDEX[card]
        row[ORDER + j] = n + 1
        row[PLAYER + j] = 1
        row[HAND + j] = 0
        trick = (*view.trick, card)
        row[TRICK + CARD_INDEX[np.array(trick)]] = 1
        _, winner = winning_card(view.leader, trick)
        row[WINNING] = int((winner & 1) == (seat & 1))
        won = list(view.tricks_won)
        if len(trick) == 4:
            row[WON + ((winner - seat) & 3)] += 1
            won[winner] += 1
        trick_codes(
            row, seat, view.leader, trick, ((1 << 52) - 1) & ~seen, view.bids, won, nil,
            count_nil, len(view.tricks) + (len(trick) == 4),
        )  # fmt: skip
        row[BROKEN] = int(view.spades_broken or card >= 39)
        row[CARD + j] = 1
        if view.trick and card // 13 != view.trick[0] // 13:
            row[VOIDS + view.trick[0] // 13] = 1
    return rows


def after_play_states(view: SeatView, cards: list[int], inputs: int = PLAY_FEATURES) -> np.ndarray:
    """The network's input rows (float32) for the candidate ``cards``: the first
    ``inputs`` numbers (``PLAIN_FEATURES`` for the paper's state alone)."""
    return (after_play_codes(view, cards) * PLAY_SCALE)[:, :inputs]
