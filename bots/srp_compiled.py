"""SRP's play and UCT's playout compiled (numba): :mod:`bots.srp` stays the reference.

UCT plays each sampled deal on with SRP until every hand fits the solver
(:mod:`bots.uct`). In Python every such card builds a view and a
:class:`~bots.knowledge.Knowledge` from the whole trick history; that was 56%
of a 13-trick search. Here one int64 array holds a round in play and what
every seat can infer from the public tricks (voids, the high-low signal's
first-round cards, the rounds each suit was led, the winning card), updated
card by card as :class:`~bots.knowledge.Knowledge` would rebuild it; the
seat-specific part (hand, unseen cards, needs, sure takes) is filled in per
decision. The rules below are :class:`bots.srp.SRP`'s, one function each
under the same name; a tuple key of the reference becomes one integer with
the same order. ``tests/bots/test_srp_compiled.py`` holds them equal to the
reference on thousands of positions: a change to ``bots/srp.py`` or
``bots/knowledge.py`` must be made here too, and those tests show where.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from game.engine import kernel_cache  # noqa: F401  (before the kernels: their cache folder)
from game.engine.cards import (
    FULL_DECK,
    JACK,
    SIDE_SUIT_MASK,
    SPADE_MASK,
    SUIT_MASKS,
    Card,
    Hand,
    Seat,
)
from game.engine.rules import Rules
from game.engine.state import RoundState
from game.engine.tricks import ABOVE, BEATERS, BELOW, Trick
from game.engine.view import SeatView

from .bits import high_bit, low_bit, popcount
from .knowledge import NILER_HOLDS, SUITSET_MASK, _one_suit_whist

# ----- the state array's fields ------------------------------------------------------

# Hands are fields 0-3 (by seat). Public: the played cards, then per seat the
# suits shown void, the high-low signals, per suit the completed rounds, per
# (seat, suit) the card followed under a higher one on the suit's first round.
PLAYED, VOIDS, SIGNALS, ROUNDS, FIRST_UNDER = 4, 5, 9, 13, 17
TRICK, LEADER, POS, LEAD_SUIT, WIN_CARD, WIN_SEAT = 33, 37, 38, 39, 40, 41
SCAN_BEST = 42  # Knowledge._scan's running best card (its own rule, kept apart)
KBROKEN = 43  # a spade in a completed trick (what Knowledge calls broken)
BROKEN = 44  # the engine's spades_broken
WON, DONE, BIDS, NIL_ALLOWED, COUNT_NIL = 45, 49, 50, 54, 55
# Filled in for each decision: the seat to play, its hand and unseen cards, its
# sure takes (-1 until asked) and each partnership's tricks still needed.
SEAT, HAND, UNSEEN, SURE, NEED = 56, 57, 58, 59, 60
TWO_CLUBS = 62  # the rules' first lead is the two of clubs
# Per seat: the cards its nil play showed it does not hold (bots.srp.nil_shown).
SHOWN = 64
STATE_SIZE = 68

WIN, LOSE = 1, -1
SPADES = 3
# bots.round_types.RoundType's values
STRONG_UNDER, UNDER, OVER, FOURTEEN, STRONG_OVER = 1, 2, 3, 4, 5
WE_NIL, PARTNER_NIL, OPPONENTS_NIL, NIL_VS_NIL, DOUBLE_NIL = 6, 7, 8, 9, 10

_SUIT = np.array(SUIT_MASKS, dtype=np.int64)
_ABOVE = np.array(ABOVE, dtype=np.int64)
_BELOW = np.array(BELOW, dtype=np.int64)
_BEATERS = np.array(BEATERS, dtype=np.int64)
_SUITSET = np.array(SUITSET_MASK, dtype=np.int64)
_SPADE = np.int64(SPADE_MASK)
_SIDE = np.int64(SIDE_SUIT_MASK)
_FULL = np.int64(FULL_DECK)
_NILER_HOLDS = np.array(NILER_HOLDS, dtype=np.float64)

_sure_table: np.ndarray | None = None


def sure_table() -> np.ndarray:
    """``t[n, m]``: :func:`bots.knowledge.sure_takes` for the spades compressed to
    ``n`` ranks of which ``m`` (bits) are ours, from the reference (built once a
    process, about 0.3 s)."""
    global _sure_table
    if _sure_table is None:
        t = np.zeros((14, 1 << 13), dtype=np.int64)
        for n in range(14):
            full = (1 << n) - 1
            for m in range(1 << n):
                theirs = full & ~m
                t[n, m] = _one_suit_whist(m, theirs, n) if m and theirs else m.bit_count()
        _sure_table = t
    return _sure_table


# ----- what the seat knows (bots.knowledge.Knowledge) ----------------------------------


@njit(cache=True, inline="always")
def _lowest(m):
    return low_bit(m)


@njit(cache=True, inline="always")
def _highest(m):
    return high_bit(m)


@njit(cache=True, inline="always")
def void_in(st, seat, suit):
    return (st[VOIDS + seat] >> suit) & 1 != 0


@njit(cache=True, inline="always")
def is_boss(st, card):
    return st[UNSEEN] & _ABOVE[card] == 0


@njit(cache=True, inline="always")
def beats(card, best):
    return (_BEATERS[best] >> card) & 1 != 0


@njit(cache=True)
def possible(st, seat):
    if seat == st[SEAT]:
        return st[HAND]
    return st[UNSEEN] & ~_SUITSET[st[VOIDS + seat]]


@njit(cache=True)
def signalled(st, seat):
    if (st[VOIDS + seat] >> SPADES) & 1:
        return 0
    return st[SIGNALS + seat]


@njit(cache=True)
def may_beat(st, seat, card, lead_suit):
    poss = possible(st, seat)
    if not void_in(st, seat, lead_suit):
        if card // 13 != lead_suit:
            return False
        return poss & _ABOVE[card] != 0
    return poss & _SPADE & _BEATERS[card] != 0


@njit(cache=True)
def still_mask(st):
    """The seats after the one to play in this trick, as bits."""
    m = 0
    for i in range(1, 4 - st[POS]):
        m |= 1 << ((st[SEAT] + i) & 3)
    return m


@njit(cache=True)
def holds(st, card):
    """Will ``card`` (now winning) hold against the opponents still to play?"""
    mine = st[SEAT] & 1
    ls = st[LEAD_SUIT] if st[LEAD_SUIT] >= 0 else card // 13
    for i in range(1, 4 - st[POS]):
        s = (st[SEAT] + i) & 3
        if (s & 1) != mine and may_beat(st, s, card, ls):
            return False
    return True


@njit(cache=True)
def sure(st, sure_t):
    """The seat's sure future takes (knowledge.sure_takes, by the table)."""
    if st[SURE] < 0:
        mine = (st[HAND] >> 39) & 0x1FFF
        theirs = (st[UNSEEN] >> 39) & 0x1FFF
        if not mine:
            st[SURE] = 0
        elif not theirs:
            st[SURE] = popcount(mine)
        else:
            both = mine | theirs
            m = 0
            i = 0
            while both:
                low = both & -both
                if mine & low:
                    m |= 1 << i
                both ^= low
                i += 1
            st[SURE] = sure_t[i, m]
    return st[SURE]


@njit(cache=True)
def is_nil(st, s):
    return st[NIL_ALLOWED] != 0 and st[BIDS + s] == 0


@njit(cache=True)
def nil_set(st, s):
    return is_nil(st, s) and st[WON + s] > 0


@njit(cache=True)
def round_type(st, seat):
    """bots.round_types.round_type for the seat (its integer value)."""
    ours = int(is_nil(st, seat)) + int(is_nil(st, (seat + 2) & 3))
    theirs = int(is_nil(st, (seat + 1) & 3)) + int(is_nil(st, (seat + 3) & 3))
    if ours and theirs:
        return NIL_VS_NIL
    if theirs == 2:
        return DOUBLE_NIL
    if theirs == 1:
        return OPPONENTS_NIL
    if is_nil(st, seat):
        return WE_NIL
    if ours:
        return PARTNER_NIL
    total = st[BIDS] + st[BIDS + 1] + st[BIDS + 2] + st[BIDS + 3]
    if total <= 8:
        return STRONG_UNDER
    if total <= 10:
        return UNDER
    if total <= 13:
        return OVER
    if total == 14:
        return FOURTEEN
    return STRONG_OVER


# ----- the round in play (RoundState.play_card, Knowledge._scan) --------------------


@njit(cache=True)
def play_card(st, card):
    """The seat to act plays ``card``: the engine's state and the public knowledge."""
    pos = st[POS]
    seat = (st[LEADER] + pos) & 3
    bit = np.int64(1) << card
    st[seat] ^= bit
    suit = card // 13
    if card >= 39:
        st[BROKEN] = 1
    if pos == 0:
        st[LEAD_SUIT] = suit
        if suit == SPADES and not st[KBROKEN]:
            st[VOIDS + seat] |= 0b0111  # a spade led unbroken: a hand of spades only
        st[SCAN_BEST] = card
        st[WIN_CARD] = card
        st[WIN_SEAT] = seat
    ls = st[LEAD_SUIT]
    st[PLAYED] |= bit
    if suit != ls:
        st[VOIDS + seat] |= 1 << ls
    elif pos and ls != SPADES:
        rnd = st[ROUNDS + ls]
        if rnd == 0:
            st[FIRST_UNDER + seat * 4 + ls] = card if card < st[SCAN_BEST] else -1
        elif rnd == 1 and 0 <= card < st[FIRST_UNDER + seat * 4 + ls]:
            st[SIGNALS + seat] |= 1 << ls
    if (suit == ls or card >= 39) and card > st[SCAN_BEST]:
        st[SCAN_BEST] = card
    if is_nil(st, seat) and st[WON + seat] == 0:
        # bots.srp.nil_shown: what a nil bidder's play shows it does not hold.
        if pos == 0:
            st[SHOWN + seat] |= _BELOW[card]
        else:
            win = st[WIN_CARD]
            losers = _SUIT[suit] & ~_BEATERS[win]
            if not beats(card, win):
                st[SHOWN + seat] |= _ABOVE[card] & losers
            elif suit == ls:
                st[SHOWN + seat] |= losers | (_BELOW[card] if pos < 3 else _ABOVE[card])
    if pos and beats(card, st[WIN_CARD]):
        st[WIN_CARD] = card
        st[WIN_SEAT] = seat
    st[TRICK + pos] = card
    pos += 1
    if pos == 4:
        st[ROUNDS + ls] += 1
        for i in range(4):
            if st[TRICK + i] >= 39:
                st[KBROKEN] = 1
        winner = st[WIN_SEAT]
        st[WON + winner] += 1
        st[LEADER] = winner
        st[DONE] += 1
        pos = 0
        st[LEAD_SUIT] = -1
        st[WIN_CARD] = -1
        st[WIN_SEAT] = -1
    st[POS] = pos


@njit(cache=True)
def legal_mask(st):
    """The legal cards of the seat to act (legal_play_mask_for)."""
    hand = st[(st[LEADER] + st[POS]) & 3]
    if st[POS]:
        follow = hand & _SUIT[st[LEAD_SUIT]]
        return follow if follow else hand
    if st[TWO_CLUBS] and st[DONE] == 0:
        return np.int64(1)  # the two of clubs leads the round
    if st[BROKEN]:
        return hand
    side = hand & _SIDE
    return side if side else hand


@njit(cache=True)
def begin_decision(st):
    """Fill in the seat-specific fields for the seat to act."""
    seat = (st[LEADER] + st[POS]) & 3
    st[SEAT] = seat
    hand = st[seat]
    st[HAND] = hand
    st[UNSEEN] = _FULL & ~st[PLAYED] & ~hand
    st[SURE] = -1
    count_nil = st[COUNT_NIL] != 0
    for p in range(2):
        contract = max(st[BIDS + p], 0) + max(st[BIDS + p + 2], 0)
        taken = 0
        for s in (p, p + 2):
            if count_nil or not is_nil(st, s):
                taken += st[WON + s]
        st[NEED + p] = max(0, contract - taken)


# ----- SRP (bots.srp.SRP, the same rules under the same names) ------------------------


@njit(cache=True)
def srp_play(st, sure_t):
    """SRP.play for the seat to act."""
    legal = legal_mask(st)
    if not legal & (legal - 1):
        return _lowest(legal)
    begin_decision(st)
    card = choose(st, legal, sure_t)
    if card < 0 or not (legal >> card) & 1:
        card = _lowest(legal)
    return card


@njit(cache=True)
def choose(st, legal, sure_t):
    me = st[SEAT]
    partner = me ^ 2
    if is_nil(st, me) and not nil_set(st, me):
        return nil_play(st, legal)
    if is_nil(st, partner) and not nil_set(st, partner):
        card = cover_play(st, legal)
        if card >= 0:
            return card
    targets = 0
    for s in ((me + 1) & 3, (me + 3) & 3):
        if is_nil(st, s) and not nil_set(st, s):
            targets |= 1 << s
    if targets and setting_niler(st, targets, sure_t):
        card = set_nil_play(st, legal, targets)
        if card >= 0:
            return card
    return contract_play(st, legal, sure_t)


@njit(cache=True)
def desire(st, sure_t):
    side = st[SEAT] & 1
    need_us, need_them = st[NEED + side], st[NEED + 1 - side]
    left = 13 - st[DONE]
    rtype = round_type(st, st[SEAT])
    if need_us > 0:
        if need_us <= sure(st, sure_t) and (rtype in (STRONG_UNDER, UNDER)):
            return LOSE
        return WIN
    if need_them > 0:
        to_set = left - need_them + 1
        if rtype in (FOURTEEN, STRONG_OVER):
            return WIN
        if (rtype in (OVER, FOURTEEN, STRONG_OVER)) and to_set <= 3:
            return WIN
        if (rtype in (OPPONENTS_NIL, DOUBLE_NIL)) and to_set <= 2:
            return WIN
    return LOSE


@njit(cache=True)
def setting_niler(st, targets, sure_t):
    side = st[SEAT] & 1
    need_us, need_them = st[NEED + side], st[NEED + 1 - side]
    left = 13 - st[DONE]
    if need_us > 0 and need_us > sure(st, sure_t) and need_us >= left - 2:
        return False
    if need_them > 0 and left - need_them <= 0:
        return False
    for t in range(4):
        if (targets >> t) & 1:
            for s in range(4):
                if st[HAND] & _SUIT[s] and not void_in(st, t, s):
                    return True
    return False


@njit(cache=True)
def nil_play(st, legal):
    unseen = st[UNSEEN]
    if st[POS] == 0:
        best, best_key = -1, -1
        for s in range(4):
            cards = legal & _SUIT[s]
            if not cards:
                continue
            c = _lowest(cards)
            over = popcount(unseen & _ABOVE[c])
            under = popcount(unseen & _BELOW[c])
            # (over == 0, under, -over, s == SPADES)
            key = ((int(over == 0) * 16 + under) * 16 + (15 - over)) * 2 + int(s == SPADES)
            if best_key < 0 or key < best_key:
                best, best_key = c, key
        return best
    wc = st[WIN_CARD]
    after = st[POS] < 3
    follow = legal & _SUIT[st[LEAD_SUIT]]
    if follow:
        losers = follow & ~_BEATERS[wc]
        if losers:
            return _highest(losers)
        return _lowest(follow) if after else _highest(follow)
    candidates = legal & ~_BEATERS[wc]
    if candidates:
        return most_dangerous(st, candidates)
    return _lowest(legal) if after else _highest(legal)


@njit(cache=True)
def most_dangerous(st, cards):
    best, best_key = -1, -1
    m = cards
    unseen = st[UNSEEN]
    while m:
        c = _lowest(m)
        m &= m - 1
        # (over - 2 if a spade, -rank)
        over = popcount(unseen & _ABOVE[c]) - (2 if c >= 39 else 0)
        key = (over + 2) * 16 + (12 - c % 13)
        if best_key < 0 or key < best_key:
            best, best_key = c, key
    return best


@njit(cache=True)
def cover_play(st, legal):
    p = st[SEAT] ^ 2
    pos = st[POS]
    if pos == 0:
        return lead_cover(st, legal)
    partner_index = (p - st[LEADER]) & 3
    wc = st[WIN_CARD]
    if partner_index < pos:
        if st[WIN_SEAT] == p:
            win = legal & _BEATERS[wc]
            if win:
                return _lowest(win)
        return -1
    follow = legal & _SUIT[st[LEAD_SUIT]]
    if follow:
        top = _highest(follow)
        if beats(top, wc) and not is_boss(st, wc):
            return top
        return -1
    if not is_boss(st, wc):
        trumps = legal & _SPADE & _BEATERS[wc]
        if trumps:
            return _lowest(trumps)
    return -1


@njit(cache=True)
def lead_cover(st, legal):
    best, best_key, best_risk = -1, -1, 2.0
    partner = st[SEAT] ^ 2
    for s in range(4):
        cards = legal & _SUIT[s]
        if not cards:
            continue
        top = _highest(cards)
        over = popcount(st[UNSEEN] & _ABOVE[top])
        risk = cover_risk(st, top)
        # (risk, over, not partner_void, s == SPADES, -rank)
        key = ((over * 2 + int(not void_in(st, partner, s))) * 2 + int(s == SPADES)) * 16 + (
            12 - top % 13
        )
        if best_key < 0 or risk < best_risk or (risk == best_risk and key < best_key):
            best, best_key, best_risk = top, key, risk
    return best


@njit(cache=True)
def hand_count(st, seat):
    """Cards ``seat`` still holds (the view's hand_counts)."""
    played_now = 1 if ((seat - st[LEADER]) & 3) < st[POS] else 0
    return 13 - st[DONE] - played_now


@njit(cache=True)
def partner_share(st, suit):
    me = st[SEAT]
    total = 0
    for o in range(4):
        if o != me and not void_in(st, o, suit):
            total += hand_count(st, o)
    return hand_count(st, me ^ 2) / total if total else 0.0


@njit(cache=True)
def none_of(st, cards, opponents, scale):
    p = 1.0
    while cards:
        c = _lowest(cards)
        cards &= cards - 1
        if not (opponents >> c) & 1:
            return 0.0
        p *= 1.0 - min(1.0, partner_share(st, c // 13) * _NILER_HOLDS[c] * scale)
    return p


@njit(cache=True)
def cover_risk(st, card):
    suit = card // 13
    me = st[SEAT]
    partner = me ^ 2
    opponents = possible(st, (me + 1) & 3) | possible(st, (me + 3) & 3)
    mine = possible(st, partner) & ~(st[SHOWN + partner] & opponents)
    weight = 0.0
    m = mine & opponents
    while m:
        c = _lowest(m)
        m &= m - 1
        weight += partner_share(st, c // 13) * _NILER_HOLDS[c]
    left = max(0.0, float(hand_count(st, partner) - popcount(mine & ~opponents)))
    scale = left / weight if weight > 0.0 else 1.0
    if void_in(st, partner, suit) or not mine & _SUIT[suit]:
        if suit == SPADES or not mine & _SPADE:
            return 0.0
        return none_of(st, mine & _SIDE, opponents, scale) * (
            1.0 - none_of(st, mine & _SPADE, opponents, scale)
        )
    unseen = mine & _SUIT[suit]
    return (1.0 - none_of(st, unseen & _ABOVE[card], opponents, scale)) * none_of(
        st, unseen & _BELOW[card], opponents, scale
    )


@njit(cache=True)
def set_nil_play(st, legal, targets):
    pos = st[POS]
    unseen = st[UNSEEN]
    if pos == 0:
        best, best_key = -1, -1
        for s in range(4):
            cards = legal & _SUIT[s]
            if not cards:
                continue
            all_void = True
            coverer_void = False
            for t in range(4):
                if (targets >> t) & 1:
                    if not void_in(st, t, s):
                        all_void = False
                    if void_in(st, t ^ 2, s):
                        coverer_void = True
            if all_void:
                continue
            c = _lowest(cards)
            under = popcount(unseen & _BELOW[c])
            over = popcount(unseen & _ABOVE[c])
            # (over == 0, coverer_void, under, -over)
            key = ((int(over == 0) * 2 + int(coverer_void)) * 16 + under) * 16 + (15 - over)
            if best_key < 0 or key < best_key:
                best, best_key = c, key
        return best
    wc = st[WIN_CARD]
    ls = st[LEAD_SUIT]
    follow = legal & _SUIT[ls]
    if (targets >> st[WIN_SEAT]) & 1:
        under_cards = legal & ~_BEATERS[wc]
        if under_cards:
            if follow:
                return _highest(under_cards)
            return discard_keep_low(st, under_cards)
        return _lowest(legal)
    live = targets & still_mask(st)
    if live:
        if follow:
            return _lowest(follow)
        side = legal & _SIDE
        all_void = True
        for t in range(4):
            if (live >> t) & 1 and not void_in(st, t, ls):
                all_void = False
        if side and not all_void:
            return discard_keep_low(st, side)
        return -1
    return -1


@njit(cache=True)
def discard_keep_low(st, cards):
    side = cards & _SIDE
    pool = side if side else cards
    best, best_key = -1, -1
    m = pool
    while m:
        c = _lowest(m)
        m &= m - 1
        # (-rank, cards held in its suit)
        key = (12 - c % 13) * 16 + popcount(st[HAND] & _SUIT[c // 13])
        if best_key < 0 or key < best_key:
            best, best_key = c, key
    return best


@njit(cache=True)
def contract_play(st, legal, sure_t):
    want = desire(st, sure_t)
    side = st[SEAT] & 1
    if want == LOSE and st[NEED + side] > 0 and not legal & _SIDE:
        want = WIN
    if st[POS] == 0:
        return lead_win(st, legal, sure_t) if want == WIN else lead_lose(st, legal)
    return follow_win(st, legal) if want == WIN else follow_lose(st, legal)


@njit(cache=True)
def ruff_risk(st, suit):
    seat = st[SEAT]
    for o in ((seat + 1) & 3, (seat + 3) & 3):
        if void_in(st, o, suit) and possible(st, o) & _SPADE:
            return True
    return False


@njit(cache=True)
def lead_win(st, legal, sure_t):
    p = st[SEAT] ^ 2
    hand = st[HAND]
    unseen = st[UNSEEN]
    side_legal = legal & _SIDE
    # 1. Partner's signal or void: lead the suit for partner to trump.
    partner_cuts = (signalled(st, p) | st[VOIDS + p]) & 0b0111
    if partner_cuts and not void_in(st, p, SPADES) and possible(st, p) & _SPADE:
        for s in range(3):
            cards = legal & _SUIT[s]
            if (
                (partner_cuts >> s) & 1
                and cards
                and not ruff_risk(st, s)
                and not is_boss(st, _highest(cards))
            ):
                return _lowest(cards)
    # 2. Cash side-suit bosses, the suit with the most unseen cards first.
    best, best_key = -1, 1
    for s in range(3):
        cards = legal & _SUIT[s]
        if not cards:
            continue
        top = _highest(cards)
        if is_boss(st, top) and not ruff_risk(st, s):
            key = -popcount(unseen & _SUIT[s])
            if best_key > 0 or key < best_key:
                best, best_key = top, key
    if best >= 0:
        return best
    # 3. Draw trumps with a boss spade.
    spades = legal & _SPADE
    if spades:
        top = _highest(spades)
        unseen_spades = popcount(unseen & _SPADE)
        if (
            is_boss(st, top)
            and unseen_spades
            and (popcount(hand & _SPADE) >= unseen_spades or not side_legal)
        ):
            return top
    if not side_legal:
        top = _highest(spades)
        return top if is_boss(st, top) else _lowest(spades)
    # 4. A short suit to ruff later.
    my_spades = popcount(hand & _SPADE)
    if my_spades >= 2 and my_spades > sure(st, sure_t):
        for s in range(3):
            cards = side_legal & _SUIT[s]
            if (
                cards
                and not cards & (cards - 1)
                and not is_boss(st, _highest(cards))
                and not ruff_risk(st, s)
            ):
                return _lowest(cards)
    # 5. A safe lead.
    best, best_key = -1, -1
    for s in range(3):
        cards = side_legal & _SUIT[s]
        if not cards:
            continue
        top = _highest(cards)
        n = popcount(cards)
        over = popcount(unseen & _ABOVE[top])
        rank = top % 13
        unguarded = rank >= JACK and over > 0 and n <= over + 1
        touching = n >= 2 and over > 0 and (hand >> (top - 1)) & 1 != 0 and rank >= JACK
        # (ruff risk, unguarded and not touching, -n)
        key = (int(ruff_risk(st, s)) * 2 + int(unguarded and not touching)) * 16 + (15 - n)
        card = top if touching else _lowest(cards)
        if best_key < 0 or key < best_key:
            best, best_key = card, key
    return best


@njit(cache=True)
def lead_lose(st, legal):
    best, best_key = -1, -1
    unseen = st[UNSEEN]
    for s in range(4):
        cards = legal & _SUIT[s]
        if not cards:
            continue
        c = _lowest(cards)
        over = popcount(unseen & _ABOVE[c])
        under = popcount(unseen & _BELOW[c])
        # (over == 0, s == SPADES, under, -over)
        key = ((int(over == 0) * 2 + int(s == SPADES)) * 16 + under) * 16 + (15 - over)
        if best_key < 0 or key < best_key:
            best, best_key = c, key
    return best


@njit(cache=True)
def _first_holding(st, win):
    """The lowest card of ``win`` that holds, or -1."""
    m = win
    while m:
        c = _lowest(m)
        m &= m - 1
        if holds(st, c):
            return c
    return -1


@njit(cache=True)
def follow_win(st, legal):
    ls, wc = st[LEAD_SUIT], st[WIN_CARD]
    partner = st[SEAT] ^ 2
    follow = legal & _SUIT[ls]
    if st[WIN_SEAT] == partner and holds(st, wc):
        if follow:
            return low_or_signal(st, follow)
        return discard_win(st, legal)
    win = legal & _BEATERS[wc]
    if follow:
        if not win:
            return low_or_signal(st, follow)
        if st[WIN_SEAT] == partner:
            c = _first_holding(st, win)
            return c if c >= 0 else low_or_signal(st, follow)
        if st[POS] == 1:
            return low_or_signal(st, follow)
        return _lowest(win)
    if not win:
        return discard_win(st, legal)
    if st[WIN_SEAT] == partner:
        c = _first_holding(st, win)
        return c if c >= 0 else discard_win(st, legal)
    cheapest = _lowest(win)
    if holds(st, cheapest):
        return cheapest
    c = _first_holding(st, win)
    return c if c >= 0 else cheapest


@njit(cache=True)
def low_or_signal(st, follow):
    ls, wc = st[LEAD_SUIT], st[WIN_CARD]
    if (
        ls != SPADES
        and popcount(follow) == 2
        and st[ROUNDS + ls] == 0
        and st[HAND] & _SPADE
        and is_boss(st, wc)
    ):
        high = _highest(follow)
        if not beats(high, wc) and st[UNSEEN] & _ABOVE[high]:
            return high
    return _lowest(follow)


@njit(cache=True)
def discard_win(st, legal):
    side = legal & _SIDE
    if not side:
        return _lowest(legal)
    best, best_key = -1, -1
    m = side
    while m:
        c = _lowest(m)
        m &= m - 1
        # (is_boss, rank, cards held in its suit)
        key = (int(is_boss(st, c)) * 16 + c % 13) * 16 + popcount(st[HAND] & _SUIT[c // 13])
        if best_key < 0 or key < best_key:
            best, best_key = c, key
    return best


@njit(cache=True)
def follow_lose(st, legal):
    wc = st[WIN_CARD]
    last = st[POS] == 3
    follow = legal & _SUIT[st[LEAD_SUIT]]
    if follow:
        losers = follow & ~_BEATERS[wc]
        if losers:
            return _highest(losers)
        return _highest(follow) if last else _lowest(follow)
    losers = legal & ~_BEATERS[wc]
    if losers:
        side = losers & _SIDE
        return most_dangerous(st, side if side else losers)
    return _highest(legal) if last else _lowest(legal)


# ----- UCT's playout ---------------------------------------------------------------------


@njit(cache=True)
def play_out(template, hands, card, solver_k, st, sure_t):
    """From ``template`` (a state at the search's root) with ``hands`` dealt, play
    ``card``, then SRP until every hand holds at most ``solver_k`` cards (or the
    round ends: returns False). ``st`` is left at that point."""
    st[:] = template
    for s in range(4):
        st[s] = hands[s]
    play_card(st, card)
    while st[DONE] < 13:
        top = 0
        for s in range(4):
            top = max(top, popcount(st[s]))
        if top <= solver_k:
            return True
        play_card(st, srp_play(st, sure_t))
    return False


@njit(cache=True)
def play_out_all(template, hands, cards, solver_k, out, sure_t):
    """:func:`play_out` for each of ``cards`` on the same deal, into ``out``'s rows."""
    for i in range(cards.shape[0]):
        play_out(template, hands, cards[i], solver_k, out[i], sure_t)


@njit(cache=True)
def replay(st, cards, n):
    for i in range(n):
        play_card(st, cards[i])


def state_from(
    rules: Rules,
    bids: Sequence[int | None],
    tricks: Sequence[Trick],
    trick: Sequence[Card],
    leader: Seat,
    tricks_won: Sequence[int],
    spades_broken: bool,
    hands: Sequence[Hand] = (0, 0, 0, 0),
) -> np.ndarray:
    """The state array of a round in play: what every seat knows from the tricks
    (each replayed from its own leader, as Knowledge reads them) and ``hands``
    (the cards still held)."""
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    st[FIRST_UNDER : FIRST_UNDER + 16] = -1
    st[LEAD_SUIT] = st[WIN_CARD] = st[WIN_SEAT] = -1
    st[BIDS : BIDS + 4] = [b if b is not None else -1 for b in bids]
    st[NIL_ALLOWED] = int(rules.nil)
    st[COUNT_NIL] = int(rules.nil_tricks_count_for_team)
    st[TWO_CLUBS] = int(rules.first_lead == "two_of_clubs")
    for first, played in [(t.leader, t.cards) for t in tricks] + [(leader, tuple(trick))]:
        st[LEADER] = first
        for i, c in enumerate(played):
            st[(first + i) & 3] |= 1 << c  # given back, so that playing it takes it
        replay(st, np.array(played, dtype=np.int64), len(played))
    st[:4] = hands
    st[WON : WON + 4] = tricks_won
    st[DONE] = len(tricks)
    st[BROKEN] = int(spades_broken)
    return st


def state_of(r: RoundState) -> np.ndarray:
    """The state array of a round in play."""
    return state_from(
        r.rules, r.bids, r.tricks, r.trick, r.leader, r.tricks_won, r.spades_broken, r.hands
    )


def state_of_view(view: SeatView) -> np.ndarray:
    """The state array at a view's position, every hand empty (a playout's template)."""
    return state_from(
        view.rules,
        view.bids,
        view.tricks,
        view.trick,
        view.leader,
        view.tricks_won,
        view.spades_broken,
    )


def warm_up() -> None:
    """Compile or load the kernels and build the sure-takes table (a searching
    process's start)."""
    from game.engine.deal import deal_hands

    hands = deal_hands("warm-up")
    template = state_from(Rules(), [3, 3, 3, 3], [], [], 1, [0, 0, 0, 0], False)
    card = (hands[1] & -hands[1]).bit_length() - 1
    st = np.zeros(STATE_SIZE, dtype=np.int64)
    play_out(template, np.array(hands, dtype=np.int64), card, 5, st, sure_table())
    # UCT plays out every root card of a deal in one call (bots/uct.py): without
    # this, a fresh process's first search compiled it (about 1 s).
    rows = np.zeros((1, STATE_SIZE), dtype=np.int64)
    cards = np.array([card], dtype=np.int64)
    play_out_all(template, np.array(hands, dtype=np.int64), cards, 5, rows, sure_table())
