"""The exact solver compiled (numba): the same values as :mod:`bots.solver`, faster.

:mod:`bots.solver` stays the readable reference; this module computes the
same minimax value for the same objectives (``tests/bots/test_solver_compiled.py``
compares the two on thousands of random positions). What differs is how:

* the outcome so far is an index into tables made once per objective and
  number of tricks left: ``idx = w0 + 14 w1 + 196 w2 + 2744 w3`` for the
  tricks each seat took since the position. The objective's leaf value, the
  least and greatest value any split of the remaining tricks can still give
  (a cut at each trick's start, for every objective), the part of the outcome
  the transposition table keys on and the offset its values are stored
  relative to are all looked up by ``idx``;
* the transposition table works on *relative ranks* at a trick's start (which
  seat holds the 1st, 2nd, ... live card of each suit: cards already played
  do not matter) and stores with each bound only what it rests on (partition
  search, as DDS's table): a card that won a trick over another of its suit,
  the cards a quick-trick bound or an entry used. An entry fixes the suits'
  lengths per seat and who holds each suit's cards from its lowest such card
  up, and answers every position that differs only below them (from
  :data:`PARTITION_FROM` tricks left; smaller searches store exact entries,
  cheaper to match: UCT's 5-card solves). A bound read at a node that does
  not narrow its window is left out of the entry stored after its search,
  with the cards it rested on; equal entries merge their bounds. It is a
  fixed-size array in the process, buckets of entries, shared by every
  solver; each solver has its own generation in the key, so it sees only
  its own entries;
* the same cards prune moves (as DDS's move generation does): once a card
  has been searched at a node without a cut, the hand's other cards of its
  suit below the lowest card of the suit that value rests on are not tried
  (they differ from it only in cards no trick or bound compared, so they
  give the same value);
* a full-window call searches by null windows (as DDS does): a binary search
  over the objective's possible values, each step asking only "at least
  this?" (the trick count always; the other objectives from
  :data:`BISECT_FROM` tricks left);
* for the trick count, quick tricks (the top cards the leader can cash, and
  its long cards once they leave the opponents none of the suit, then
  partner's after a lead to them) and the top spades each side holds bound
  the value at each trick's start, and where they leave the window open
  DDS's later tricks for the side not on lead (:func:`_defenders_spades`:
  two top spades split between its hands, a second spade behind the top
  one); for the points (from :data:`SIDE_FROM`
  tricks) through the least and greatest value for each number of tricks
  North/South take (:func:`side_tables`): the tricks taken whatever anyone
  plays (the top spades of each side and of the seat holding the highest: a
  nil bidder holding it is set) bound both ways, the leader's quick tricks
  only its own side's worst (it need not cash them);
* a round's positions can share one points objective from its first lead
  (``value(..., taken=...)``): the entries of one position then serve the
  others (a round's analysis solves all of them);
* leads are ordered (a side suit an opponent can ruff last, the suit's top
  card first, side suits' before spades', low toward partner's top card,
  then low cards first), the table's best lead first (from an entry of the
  same key that does not match when none does), the last lead that cut at
  the same depth second (DDS's best move);
  follows too: a card with which the side surely wins the trick (no opponent
  still to play can beat it) first, cheapest first, then one that leaves the
  side winning for now, then losers low first (second hand: losers before a
  card of its own that wins only for now); a nil bidder whose nil is not
  set yet plays to duck: losers highest first, then winners highest first;
* the search keeps its own stack (``frames``): numba's cache cannot hold a
  recursive function (numba issue 6061); a trick's start takes the owner
  words of the previous one's less the trick's cards.

The first call compiles the kernels (about 4 s); ``cache=True`` keeps the
machine code in ``__pycache__``, and later processes load it in under a
second (:func:`warm_up`). Measured against DDS: ``manage.py bench_solver``
(docs/bots.md, "Compiled search").
"""

from __future__ import annotations

import bisect
import functools
import itertools
import logging
import mmap
import os
import random
import threading
import time

import numpy as np
from numba import njit

from game.engine import kernel_cache  # noqa: F401  (before the kernels: their cache folder)
from game.engine.cards import SUIT_MASKS
from game.engine.tricks import BEATERS, BELOW, winning_card

from .bits import high_bit, low_bit, popcount, prefetch_row
from .solver import NilObjective, Objective, PointsObjective, Position

STRIDE = (1, 14, 196, 2744)  # idx step when each seat takes a trick
IDX_SIZE = 14**4
# Entries in the shared transposition table: 2**bits (48 MB a million).
# The bots' default; a round's analysis uses more (ANALYSIS_TABLE_BITS): its
# longest nil searches refill the table many times over.
TT_BITS = 20
ANALYSIS_TABLE_BITS = 22
TABLE_BITS_RANGE = (16, 24)
BUCKET = 8  # entries a key's bucket holds (positions alike but for low cards' owners)
SMALL_BUCKET = 2  # those a search without partition uses (fewer to scan: UCT's solves)
GEN_SHIFT = 27  # the generation's place in an entry's second key word
# A bucket is a row of the table: the entries' two key words first (2 * BUCKET
# words, the probe's scan), then from ENTRY four words an entry: its owner bits
# (two words), its bounds (lower, upper: 32 bits each) and a word of its best
# lead (16 bits), ranks (4 bits a suit: how many top cards of it the entry
# fixes) and cards left (from bit 32). An entry that matches its key is read
# from one cache line (its fields apart, they took up to five).
ENTRY = 2 * BUCKET
ROW = ENTRY + 4 * BUCKET
# An entry is stored in the bucket of its level: the most top cards of every suit
# (of those listed) whose owners it fixes; a position probes a bucket per level.
LEVELS = (1, 2, 13)  # and 3 too: 1-1.5% more nodes at 13 cards, 2-4% more time
_LEVELS = np.array(LEVELS, dtype=np.int64)
# Tricks left from which a search uses partition search: below, tracking what
# each value rests on costs more than the entries it shares save (UCT's
# 5-card solves: 0.028 ms a solve with it, 0.023 without).
PARTITION_FROM = 7
INF = 1_000_000_000
# Tricks left from which a full-window call searches by null windows for every
# objective (the trick count always): at 10 cards a hand a points search takes
# 35 ms median instead of 49; below 8 one wide window costs about the same.
BISECT_FROM = 8
# A lead's key per card the opponents can play to it (:func:`_lead_key`), against
# 64 a step of the other rules: 100 and 200 gave about the same on seeds 1 and 2
# (15.1M / 21.0M and 14.6M / 21.8M nodes), 1,000 (width alone first) a little more.
LEAD_WIDTH_WEIGHT = 100


# ----- constant tables --------------------------------------------------------------

_SUIT = np.array(SUIT_MASKS, dtype=np.int64)
_BELOW = np.array(BELOW, dtype=np.int64)
# By card: its suit, its suit's cards and its rank (loads, cheaper than the
# divisions with Python's floor rounding in the search's inner loops).
_SUIT_OF = np.array([c // 13 for c in range(52)], dtype=np.int64)
_CARD_SUIT = np.array([SUIT_MASKS[c // 13] for c in range(52)], dtype=np.int64)
_RANK_OF = np.array([c % 13 for c in range(52)], dtype=np.int64)
_ALL = (1 << 52) - 1
_TOPS = sum(1 << (13 * s + 12) for s in range(4))  # each suit's ace
_BOTTOMS = sum(1 << (13 * s) for s in range(4))  # each suit's two
_BEATERS = np.array(BEATERS, dtype=np.int64)
# Order of the top cards a leader may cash: side suits' high to low, then spades'
# (spades first, as the reference, cost 2-3% more nodes at 13 cards: a top spade
# kept keeps control of the later tricks).
_LEAD_KEY = np.array([-(c % 13) - (0 if c >= 39 else 20) for c in range(52)], dtype=np.int64)


# ----- the search --------------------------------------------------------------------


@njit(cache=True)
def _owner(h, c):
    return 0 if (h[0] >> c) & 1 else (1 if (h[1] >> c) & 1 else (2 if (h[2] >> c) & 1 else 3))


@njit(cache=True, inline="always")
def _lengths(h):
    """The table's first key word: each seat's length in each suit (4 bits each;
    West's spades follow from the others, all hands being as long)."""
    k = 0
    for i in range(4):
        for s in range(4):
            if i < 3 or s < 3:
                k |= popcount(h[i] & _SUIT[s]) << (4 * (4 * i + s))
    return k


@njit(cache=True)
def _owners(h, live):
    """Who holds each suit's live cards from the top, 2 bits a card: suits 0 and 1
    in the first word, 2 and 3 in the second, 32 bits apart."""
    pa = 0
    pb = 0
    for s in range(4):
        m = live & _SUIT[s]
        word = 0
        j = 0
        while m:
            c = high_bit(m)
            m ^= np.int64(1) << c
            word |= _owner(h, c) << (2 * j)
            j += 1
        if s < 2:
            pa |= word << (32 * s)
        else:
            pb |= word << (32 * (s - 2))
    return pa, pb


@njit(cache=True, inline="always")
def _drop(pa, pb, live, c):
    """:func:`_owners` with card ``c`` (live) gone: its field removed, the suit's
    lower cards' fields moved up one place."""
    s = _SUIT_OF[c]
    j = popcount(live & _SUIT[s] & ~((np.int64(2) << c) - 1))  # live cards above it
    base = 32 * (s & 1)
    region_mask = np.int64(0xFFFFFFFF) << base
    below = (np.int64(1) << (base + 2 * j)) - 1
    w = pa if s < 2 else pb
    region = w & region_mask
    region = (region & below) | ((region >> 2) & ~below & region_mask)
    w = (w & ~region_mask) | region
    if s < 2:
        return w, pb
    return pa, w


@njit(cache=True)
def _field(s, r):
    """The owner bits of suit ``s``'s top ``r`` live cards in its word."""
    return ((np.int64(1) << (2 * r)) - 1) << (32 * (s & 1))


@njit(cache=True)
def _nth_from_top(m, r):
    """The ``r``-th highest card of ``m`` (r >= 1, at most popcount(m))."""
    for _ in range(r - 1):
        m ^= np.int64(1) << high_bit(m)
    return high_bit(m)


@njit(cache=True, inline="always")
def _masks(ranks):
    """The owner bits an entry fixes from its ``ranks`` (4 bits a suit: how many of
    the suit's top live cards): those of suits 0 and 1, those of 2 and 3."""
    ma = ((np.int64(1) << (2 * (ranks & 15))) - 1) | (
        ((np.int64(1) << (2 * ((ranks >> 4) & 15))) - 1) << 32
    )
    mb = ((np.int64(1) << (2 * ((ranks >> 8) & 15))) - 1) | (
        ((np.int64(1) << (2 * ((ranks >> 12) & 15))) - 1) << 32
    )
    return ma, mb


@njit(cache=True)
def _entry_cards(live, ranks):
    """An entry's ranks as cards of this position: per suit, the lowest card
    whose owner the entry fixed (every live card above it is fixed too)."""
    rel = 0
    for s in range(4):
        r = (ranks >> (4 * s)) & 15
        if r:
            rel |= np.int64(1) << _nth_from_top(live & _SUIT[s], r)
    return rel


@njit(cache=True)
def _all_ranks(live):
    """The ranks of an entry fixing every live card (a search without partition)."""
    ranks = 0
    for s in range(4):
        ranks |= popcount(live & _SUIT[s]) << (4 * s)
    return ranks


@njit(cache=True)
def _ranks_needed(h, live, rel):
    """The owner bits an entry must fix for the value found with the relevant
    cards ``rel`` (per suit every live card from its lowest relevant card up):
    returns (ranks, rel): how many top cards of each suit (4 bits a suit) and
    ``rel`` the cards to pass up, one a suit.

    A run of touching cards in one hand is searched by its lowest card only,
    so a run reaching the lowest relevant card is taken in whole (closure):
    in a position matching the entry a higher card of the run must still be
    equivalent to the searched one."""
    ranks = 0
    out = 0
    for s in range(4):
        m = rel & live & _SUIT[s]
        if not m:
            continue
        c = low_bit(m)
        seat = _owner(h, c)
        while True:
            below = live & _BELOW[c]
            if not below:
                break
            nxt = high_bit(below)
            if _owner(h, nxt) != seat:
                break
            c = nxt
        ranks |= popcount(live & _SUIT[s] & ~_BELOW[c]) << (4 * s)
        out |= np.int64(1) << c
    return ranks, out


@njit(cache=True)
def _run(hand, m, cap):
    """The run of ``hand``'s cards at the top of the live cards ``m`` (one suit), at
    most ``cap`` long, and its cards."""
    run = 0
    rel = 0
    while m and run < cap:
        top = high_bit(m)
        if not (hand >> top) & 1:
            break
        run += 1
        rel |= np.int64(1) << top
        m ^= np.int64(1) << top
    return run, rel


@njit(cache=True)
def _cashed(hand, pard, o1, o2, s, run, lim):
    """The tricks ``hand`` takes in suit ``s`` by cashing its ``run`` of top cards
    (at most ``lim``: the cap): when the run leaves the opponents none of the
    suit, its other cards of the suit win too (partner's fell under the run,
    or are all lower: then that rests on its lowest card too), as far as the
    cap allows. Returns the count and the cards it rests on besides the run."""
    if run >= lim or run < max(popcount(o1 & _SUIT[s]), popcount(o2 & _SUIT[s])):
        return run, 0
    mine = hand & _SUIT[s]
    theirs = pard & _SUIT[s]
    if popcount(theirs) <= run:
        return min(popcount(mine), lim), 0
    if high_bit(theirs) < low_bit(mine):
        return min(popcount(mine), lim), np.int64(1) << low_bit(mine)
    return run, 0


@njit(cache=True)
def _quick_tricks(h, leader, broken):
    """Tricks the leader's side takes for sure by cashing top cards: in each suit
    the run of the highest live cards one hand holds (and its long cards once
    the run leaves the opponents none: :func:`_cashed`), in a side suit no longer
    than the shortest holding of an opponent who could ruff (holds a spade),
    so the opponents only follow suit and the suits add up. The leader cashes
    its own runs; then, if it can lead low to a suit partner tops, partner
    takes the lead and cashes its runs (spades only once broken), provided
    it holds besides them a card to play to each trick the leader cashed
    (following suit or not: counting only the discards overcounted). When
    the leader's top spades outnumber each opponent's spades, it draws them
    first and its side's runs are not capped (but for a lead to
    partner straight away). Returns the count (a lower bound for the side)
    and the cards it rests on."""
    hand = h[leader]
    pard = h[(leader + 2) & 3]
    o1 = h[(leader + 1) & 3]
    o2 = h[(leader + 3) & 3]
    live = h[0] | h[1] | h[2] | h[3]
    spades = live & _SUIT[3]
    draws = False  # the leader's spade run leaves the opponents none
    if spades and (hand >> high_bit(spades)) & 1 and (broken or not hand & ~_SUIT[3]):
        run, _ = _run(hand, spades, 13)
        draws = run >= max(popcount(o1 & _SUIT[3]), popcount(o2 & _SUIT[3]))
    own = partner = capped = 0  # the leader's runs, partner's (capped: not drawn first)
    own_rel = partner_rel = capped_rel = 0
    entry = False  # the leader can lead to one of partner's runs
    for s in range(4):
        m = live & _SUIT[s]
        if not m:
            continue
        cap = 13
        if s != 3:
            if o1 & _SUIT[3]:
                cap = min(cap, popcount(o1 & _SUIT[s]))
            if o2 & _SUIT[3]:
                cap = min(cap, popcount(o2 & _SUIT[s]))
        may_lead = s != 3 or broken or not hand & ~_SUIT[3]
        if (hand >> high_bit(m)) & 1:
            if may_lead:
                lim = 13 if draws else cap
                run, rel = _run(hand, m, lim)
                run, low = _cashed(hand, pard, o1, o2, s, run, lim)
                own += run
                own_rel |= rel | low
        elif (pard >> high_bit(m)) & 1 and (s != 3 or broken):
            lim = 13 if draws else cap
            run, rel = _run(pard, m, lim)
            more, low = _cashed(pard, hand, o1, o2, s, run, lim)
            partner += more
            partner_rel |= rel | low
            if draws:
                run, rel = _run(pard, m, cap)
            more, low = _cashed(pard, hand, o1, o2, s, run, cap)
            capped += more
            capped_rel |= rel | low
            if run and may_lead and hand & m:
                entry = True
    if entry and popcount(pard) - partner >= own and partner:  # partner keeps its runs
        return own + partner, own_rel | partner_rel
    if entry and capped > own:
        return capped, capped_rel
    return own, own_rel


@njit(cache=True)
def _top_spades(h, side):
    """Tricks ``side`` (0 North/South, 1 East/West) takes for sure with spades: the
    most spades one of its hands holds above every spade of the other side
    (each wins the trick it is played to, or partner's higher one does, and a
    hand plays one card a trick, all of them by the end). Returns the count
    and the cards it rests on: that hand's lowest such spade (none when the
    other side has no spade: the suits' lengths, in every key, fix that)."""
    them = (h[(side + 1) & 3] | h[(side + 3) & 3]) & _SUIT[3]
    above = _SUIT[3] & ~((2 << high_bit(them)) - 1) if them else _SUIT[3]
    best = 0
    rel = 0
    for seat in (side, side + 2):
        m = h[seat] & above
        q = popcount(m)
        if q > best:
            best = q
            rel = (np.int64(1) << low_bit(m)) if them else 0
    return best, rel


@njit(cache=True)
def _split_top_spades(h, side):
    """:func:`_top_spades`, or two tricks when the side holds the two top spades
    split between its hands, one of which holds another spade (DDS's later
    tricks: the two are never forced onto one trick)."""
    best, rel = _top_spades(h, side)
    spades = (h[0] | h[1] | h[2] | h[3]) & _SUIT[3]
    if best != 1 or popcount(spades) < 2:
        return best, rel
    a = high_bit(spades)
    k = high_bit(spades & ~(np.int64(1) << a))
    sa = _owner(h, a)
    sk = _owner(h, k)
    split = (sa & 1) == side and (sk & 1) == side and sa != sk
    if split and (popcount(h[sa] & _SUIT[3]) > 1 or popcount(h[sk] & _SUIT[3]) > 1):
        return 2, np.int64(1) << k
    return best, rel


@njit(cache=True)
def _defenders_spades(h, side):
    """:func:`_split_top_spades` for the side not on lead, with DDS's later
    tricks when the other side holds the top spade: a hand with the second
    spade and another, the top one in the hand that plays just before it (it
    never has to play the second under the top one: the side not on lead
    leads only after winning a trick), or in the hand after it with the third
    spade the side's: one trick."""
    best, rel = _split_top_spades(h, side)
    spades = (h[0] | h[1] | h[2] | h[3]) & _SUIT[3]
    if best or popcount(spades) < 2:
        return best, rel
    a = high_bit(spades)
    k = high_bit(spades & ~(np.int64(1) << a))
    sa = _owner(h, a)
    sk = _owner(h, k)
    if (sk & 1) != side or (sa & 1) == side or popcount(h[sk] & _SUIT[3]) < 2:
        return best, rel
    if sa == ((sk + 3) & 3):
        return 1, np.int64(1) << k
    if popcount(spades) >= 3:
        q = high_bit(spades & ~(np.int64(1) << a) & ~(np.int64(1) << k))
        if (_owner(h, q) & 1) == side:
            return 1, np.int64(1) << q
    return best, rel


@njit(cache=True, inline="always")
def _trick_bounds(q, qrel, sq, srel, them, orel, n, off, leader):
    """The trick count's bounds at a trick's start from the leader's quick
    tricks ``q``, its side's sure spade tricks ``sq`` and the other side's
    ``them`` (each with the cards it rests on): (lower, its cards, upper,
    its cards) for North/South, ``off`` their tricks so far."""
    if sq > q:
        q, qrel = sq, srel
    q = min(q, n)
    if them > n - q:
        them = n - q
        orel |= qrel
    if leader & 1:
        return off + them, orel, off + n - q, qrel
    return off + q, qrel, off + n - them, orel


@njit(cache=True)
def _master_spades(h):
    """(seat, count, cards): the seat holding the highest live spade and how many
    of its spades are above every other seat's, each a trick it takes itself
    whatever is played; the cards that rests on (its lowest such spade). (-1, 0, 0)
    when no spade is left."""
    spades = (h[0] | h[1] | h[2] | h[3]) & _SUIT[3]
    if not spades:
        return -1, 0, 0
    top = high_bit(spades)
    seat = _owner(h, top)
    others = spades & ~h[seat]
    m = h[seat] & _SUIT[3] & ~((2 << high_bit(others)) - 1) if others else h[seat] & _SUIT[3]
    return seat, popcount(m), (np.int64(1) << low_bit(m)) if others else 0


@njit(cache=True)
def _sort_by_key(mv, d, n):
    """Insertion sort of frame ``d``'s cards by their keys (row 64 + d), stable."""
    for i in range(1, n):
        c = mv[d, i]
        kc = mv[64 + d, i]
        j = i - 1
        while j >= 0 and mv[64 + d, j] > kc:
            mv[d, j + 1] = mv[d, j]
            mv[64 + d, j + 1] = mv[64 + d, j]
            j -= 1
        mv[d, j + 1] = c
        mv[64 + d, j + 1] = kc


@njit(cache=True, inline="always")
def _can_beat(hand, lead_suit, w):
    """Can a seat still to play, holding ``hand``, beat the card ``w``?"""
    follow = hand & _SUIT[lead_suit]
    if follow:
        return _SUIT_OF[w] == lead_suit and (follow & _BEATERS[w]) != 0
    return (hand & _BEATERS[w] & _SUIT[3]) != 0


@njit(cache=True, inline="always")
def _follow_key(h, seat, pos, leader, lead_suit, best, winner, c):
    """Follow order, lowest key first: a card with which the side wins the trick
    for sure (no opponent still to play can beat the winning card), the
    cheapest first; then one that leaves the side winning for now; then
    losers, low first."""
    if (_BEATERS[best] >> c) & 1:
        w = c
        ws = seat
    else:
        w = best
        ws = winner
    sure = True
    for p in range(pos + 1, 4):
        other = (leader + p) & 3
        if (other ^ ws) & 1 and _can_beat(h[other], lead_suit, w):
            sure = False
    rank = _RANK_OF[c] + (13 if c >= 39 and lead_suit != 3 else 0)  # a ruff costs a spade
    if (ws ^ seat) & 1:
        return 64 + rank
    if sure:
        return rank
    return 96 + rank if pos == 1 and ws == seat else 32 + rank  # second hand low


@njit(cache=True)
def _lead_key(h, leader, c, live):
    """Lead order, lowest key first. A suit's leads come later the more cards
    the opponents can play to them (a void opponent: any of its cards), so
    that the replies to refute are fewest (DDS weighs a suit by its
    opponents' lengths too; seed 1's 50 deals at 13 cards: 19.8M nodes to
    15.1M, seed 2's 28.8M to 21.0M): :data:`LEAD_WIDTH_WEIGHT` a card, where
    each step of the rules that follow weighs 64. A side suit an opponent can ruff last;
    the suit's top live card (a winner, side suits' first) first; then low
    toward partner's top card, or toward partner's second card through the
    top one (second hand holds it); then low in a suit partner ruffs; then
    the lowest cards first (a high card that is not the top one mostly gives
    a trick away), through second hand's top card before the others, a spade
    into the opponents' top spade last."""
    s = c // 13
    suit = _SUIT[s]
    pard = h[(leader + 2) & 3]
    o1 = h[(leader + 1) & 3]
    o2 = h[(leader + 3) & 3]
    score = 0
    if s != 3 and ((not o1 & suit and o1 & _SUIT[3]) or (not o2 & suit and o2 & _SUIT[3])):
        score -= 8
    top = high_bit(live & suit)
    second = high_bit(live & suit & ~(np.int64(1) << top)) if c != top else c
    if c == top:
        score += 4
    elif (pard >> top) & 1 or ((o1 >> top) & 1 and (pard >> second) & 1):
        score += 2
    elif s != 3 and not pard & suit and pard & _SUIT[3]:
        score += 1  # below the leads above: led first, it cost 13x the nodes on a deal
    elif s == 3:
        score -= 2
    elif (o1 >> top) & 1:
        score += 1
    n = popcount(h[leader])
    width = (popcount(o1 & suit) if o1 & suit else n) + (popcount(o2 & suit) if o2 & suit else n)
    return width * LEAD_WIDTH_WEIGHT - score * 64 + (_LEAD_KEY[c] if c == top else c % 13)


@njit(cache=True)
def _nil_follow_key(best, lead_suit, c):
    """Follow order of a nil bidder whose nil is not set yet, lowest key first:
    the cards that lose the trick, highest first (the low ones stay to duck
    later tricks), then those that win it for now, highest first too (a later
    seat may overtake; if none does, the nil is set and a high card is gone).
    On seed 1's nil rounds: 0.64-0.71x the nodes of :func:`_follow_key`'s
    order at 10-11 cards a hand, 0.63x at 12 (docs/replays.md)."""
    rank = c % 13 + (13 if c >= 39 and lead_suit != 3 else 0)
    if (_BEATERS[best] >> c) & 1:
        return 63 - rank
    return 31 - rank


@njit(cache=True)
def _bucket(k0, k1, pa, pb, level, mask):
    """The bucket of the entries of ``level`` (see :data:`LEVELS`); ``mask``: the
    table's rows less one (a power of two)."""
    lm = _field(0, _LEVELS[level]) | _field(1, _LEVELS[level])
    x = k0 * 0x9E3779B97F4A7C15 ^ k1 * 0xC2B2AE3D27D4EB4F
    x ^= (pa & lm) * 0x165667B19E3779F9 ^ (pb & lm) * 0x27D4EB2F165667C5 ^ level
    x ^= x >> 29
    return (x >> 11) & mask


@njit(cache=True)
def _level(live, ranks):
    """The greatest level whose top cards the entry's ``ranks`` all fix."""
    level = 0
    for j in range(1, len(_LEVELS)):
        for s in range(4):
            if (ranks >> (4 * s)) & 15 < min(_LEVELS[j], popcount(live & _SUIT[s])):
                return level
        level = j
    return level


@njit(cache=True)
def _store_in(tt, b, width, k0, k1, pa, pb, ranks, lo, hi, hint, cost):
    """Store an entry in bucket ``b`` (its first ``width`` entries): over the same
    entry, else over one of an older solver (another generation), else over
    the one with fewest cards left (the cheapest to search again)."""
    e = 0
    best = INF
    for i in range(width):
        x = ENTRY + 4 * i
        if tt[b, 2 * i] == k0 and tt[b, 2 * i + 1] == k1:
            if (tt[b, x + 3] >> 16) & 0xFFFF == ranks and tt[b, x] == pa and tt[b, x + 1] == pb:
                e = i
                lo = max(lo, (tt[b, x + 2] << 32) >> 32)  # bounds of one set of positions
                hi = min(hi, tt[b, x + 2] >> 32)
                break
            score = tt[b, x + 3] >> 32
        elif (tt[b, 2 * i + 1] >> GEN_SHIFT) != (k1 >> GEN_SHIFT):
            score = -1
        else:
            score = tt[b, x + 3] >> 32
        if score < best:
            best = score
            e = i
    tt[b, 2 * e] = k0
    tt[b, 2 * e + 1] = k1
    x = ENTRY + 4 * e
    tt[b, x] = pa
    tt[b, x + 1] = pb
    tt[b, x + 2] = (lo & 0xFFFFFFFF) | (hi << 32)
    tt[b, x + 3] = hint | (ranks << 16) | (cost << 32)


@njit(cache=True)
def _store(tt, k0, k1, pa, pb, ranks, live, lo, hi, hint, part):
    """Store the bounds in the position's own bucket (the top level: its exact
    owners) and, if the entry fixes fewer, in its level's bucket too, where
    positions alike but for the cards it does not fix find it."""
    cost = popcount(live)
    top = len(_LEVELS) - 1
    level = _level(live, ranks) if part else top
    width = BUCKET if part else SMALL_BUCKET
    mask = tt.shape[0] - 1
    ma, mb = _masks(ranks)
    b = _bucket(k0, k1, pa, pb, top, mask)
    _store_in(tt, b, width, k0, k1, pa & ma, pb & mb, ranks, lo, hi, hint, cost)
    if level < top:
        b = _bucket(k0, k1, pa, pb, level, mask)
        _store_in(tt, b, width, k0, k1, pa & ma, pb & mb, ranks, lo, hi, hint, cost)


STRIDE_A = np.array(STRIDE, dtype=np.int64)

# A frame's fields (one row of ``frames`` per depth: numba's cache cannot hold
# a recursive function, numba issue 6061, so the search keeps its own stack).
LEADER, POS, LEAD_SUIT, BEST, WINNER, BROKEN, IDX, LIVE = range(8)
ALPHA, BETA, VALUE, SEAT, HAND, COUNT, NEXT = range(8, 15)
TRICK_START, K0, K1, PA, PB, OFFSET, ALPHA0, BETA0, LOWER, UPPER, BEST_CARD = range(15, 26)
REL = 26  # the cards the frame's value rests on so far (see _ranks_needed)
OWN_REL = 27  # those its own bounds (quick tricks, entries) rest on
SKIP = 28  # cards not to try: as good as one tried (see _solve)
# Rows of ``frames`` holding by depth the last lead that cut there (plus one;
# 0: none), tried first at that depth (DDS's best move: siblings often share it).
KILLERS = 56


@njit(cache=True, inline="always")
def _decided(lo, hi, lrel, hrel, alpha, beta):
    """Whether bounds [lo, hi] (resting on the cards ``lrel`` / ``hrel``) decide
    the window (alpha, beta): (decided, value, the cards the value rests on)."""
    if lo >= beta:
        return True, lo, lrel
    if hi <= alpha or lo == hi:
        return True, hi, hrel if hi <= alpha else lrel | hrel
    return False, 0, lrel | hrel


@njit(cache=True)
def _solve(
    h,
    leader,
    pos,
    lead_suit,
    best,
    winner,
    broken,
    live,
    alpha,
    beta,
    quick,
    part,
    t,
    tt,
    f,
    mv,
    idx,
    g,
    nils,
):
    """Fail-soft alpha-beta from the position; returns its value for North/South.

    ``h``: the four hands (changed during the search, restored at its end);
    ``pos`` cards already on the trick (``lead_suit``, the ``best`` card so far
    and its seat ``winner``; ``live``: the cards in the hands and on the
    trick). ``quick``: 1, the objective is the trick count (quick tricks bound
    it); 2, the points, bounded through ``g`` by the top spades and the
    leader's quick tricks (``g[0, x, idx]`` and ``g[1, x, idx]``: the least and
    greatest value once North/South take exactly x of the tricks left); else 0;
    ``part``: partition search (else every entry fixes every card).
    ``t``: the objective's tables by ``idx`` (rows: leaf value, least
    and greatest value still reachable, the key part, the offset);
    ``tt``: the table (rows of entries: see :data:`ENTRY`); ``f``: the
    frames, with the node count at [63, 0], the generation at [63, 1] and
    the node limit at [63, 2]: past it the search stops, sets [63, 3] and
    returns 0 (the entries it stored stand: each is a finished search's);
    ``mv``: the candidate cards of each frame; ``idx``: the outcome at the
    position (the tricks each seat took since the objective's start).

    Each value comes with ``rm``, the cards it rests on: a card that won a
    trick over another of its suit, and the cards a bound or a table entry
    used. A table entry fixes only who holds the cards from each suit's
    lowest such card up (and every suit's length per seat), so it answers
    every position that differs below them (partition search).
    """
    d = 0
    while True:
        # ---- enter a node at depth d (its parameters in the locals) ----
        ready = False  # its value is known without a search: r
        r = 0
        rm = 0  # the cards the node's value rests on
        trick_start = 0
        k0 = k1 = pa = pb = off = lo = hi = 0
        hint = -1  # the table's best lead here: suit * 16 + live cards above it
        if pos == 0:
            n = popcount(h[leader])
            if n == 0:
                r = t[0, idx]
                ready = True
            elif n == 1:  # the last trick plays itself
                w = leader
                bc = high_bit(h[leader])
                cards = np.int64(1) << bc
                for i in range(1, 4):
                    seat = (leader + i) & 3
                    c = high_bit(h[seat])
                    cards |= np.int64(1) << c
                    if (_BEATERS[bc] >> c) & 1:
                        bc = c
                        w = seat
                if part and popcount(cards & _CARD_SUIT[bc]) >= 2:
                    rm = np.int64(1) << bc  # it won by rank
                r = t[0, idx + STRIDE_A[w]]
                ready = True
            else:
                # Whatever is still reachable may already decide the window.
                lo = t[1, idx]
                hi = t[2, idx]
                off = t[4, idx]
                lrel = hrel = 0  # the cards lo and hi rest on
                if lo < beta and hi > alpha and lo < hi:
                    # The table's key, and its buckets asked of memory now: their
                    # loads overlap the bounds counted next.
                    live = h[0] | h[1] | h[2] | h[3]
                    k0 = _lengths((h[0], h[1], h[2], h[3]))
                    k1 = leader | (np.int64(broken) << 2) | (t[3, idx] << 3)
                    k1 |= f[63, 1] << GEN_SHIFT
                    if d >= 4 and f[d - 4, TRICK_START]:
                        # The previous trick's start less its four cards: cheaper
                        # than reading every live card's owner again.
                        pa = f[d - 4, PA]
                        pb = f[d - 4, PB]
                        cur = f[d - 4, LIVE]
                        for i in range(d - 4, d):
                            c = mv[i, f[i, NEXT] - 1]
                            pa, pb = _drop(pa, pb, cur, c)
                            cur ^= np.int64(1) << c
                    else:
                        pa, pb = _owners(h, live)
                    top = len(_LEVELS) - 1
                    for level in range(0 if part else top, top + 1):  # the loads at once
                        prefetch_row(tt, _bucket(k0, k1, pa, pb, level, tt.shape[0] - 1))
                if quick == 2 and lo < beta and hi > alpha and lo < hi:  # undecided yet
                    # Tricks taken whatever anyone plays: the master spades'
                    # holder's k (in ``at``; a nil bidder holding one is set) and
                    # beyond them each side's top spades. The leader's side can
                    # also cash its quick tricks: a bound for its own side only,
                    # since it need not cash them (more tricks are not always
                    # better under the points).
                    seat, k, krel = _master_spades(h)
                    ns_least, nrel = _top_spades(h, 0)
                    ew_least, erel = _top_spades(h, 1)
                    at = idx
                    if k:
                        at = idx + k * STRIDE_A[seat]
                        if seat & 1:
                            ew_least = max(0, ew_least - k)
                        else:
                            ns_least = max(0, ns_least - k)
                    rest = n - k
                    urel = krel | nrel | erel
                    q, qrel = _quick_tricks(h, leader, broken)
                    if k and (seat & 1) == (leader & 1):
                        q -= k  # some of the side's quick tricks may be those
                    ns_lo, ns_hi = ns_least, rest - ew_least  # the range for lo
                    ns_lo2, ns_hi2 = ns_least, rest - ew_least  # the range for hi
                    qlrel = qhrel = urel
                    if leader & 1:
                        if q > ew_least:
                            ns_hi2 = rest - q
                            qhrel |= qrel
                    elif q > ns_least:
                        ns_lo = q
                        qlrel |= qrel
                    if ns_lo <= ns_hi and ns_lo2 <= ns_hi2:
                        qlo = INF
                        qhi = -INF
                        for x in range(ns_lo, ns_hi + 1):
                            qlo = min(qlo, g[0, x, at])
                        for x in range(ns_lo2, ns_hi2 + 1):
                            qhi = max(qhi, g[1, x, at])
                        if qlo > lo:
                            lo = qlo
                            lrel = qlrel
                        if qhi < hi:
                            hi = qhi
                            hrel = qhrel
                elif quick and lo < beta and hi > alpha and lo < hi:  # undecided yet
                    # Quick tricks and top spades: each bound rests only on the
                    # cards it counted.
                    q, qrel = _quick_tricks(h, leader, broken)
                    sq, srel = _top_spades(h, leader & 1)
                    them, orel = _top_spades(h, 1 - (leader & 1))
                    qlo, qlrel, qhi, qhrel = _trick_bounds(
                        q, qrel, sq, srel, them, orel, n, off, leader
                    )
                    if max(lo, qlo) < beta and min(hi, qhi) > alpha:
                        # undecided: the later tricks (dearer to count) too
                        # the hands as a tuple: numba counts an array's references
                        # at these calls (atomic adds)
                        hq = (h[0], h[1], h[2], h[3])
                        them, orel = _defenders_spades(hq, 1 - (leader & 1))
                        qlo, qlrel, qhi, qhrel = _trick_bounds(
                            q, qrel, sq, srel, them, orel, n, off, leader
                        )
                    if qlo > lo:
                        lo = qlo
                        lrel = qlrel
                    if qhi < hi:
                        hi = qhi
                        hrel = qhrel
                ready, r, rm = _decided(lo, hi, lrel, hrel, alpha, beta)
                if not ready:
                    # The table's entries that match tighten (lo, hi); lrel and hrel
                    # gather the cards the tightened bounds rest on; hint: the best
                    # lead of the first match, else of the entry of the same key
                    # that does not match (a position alike in its top cards: only
                    # 14% of the leads searched at 13 cards found a match) with the
                    # best bound for the side to lead. Without ``part`` only the
                    # top level (every entry then fixes every card). Written here,
                    # not in a function: numba counted the table's references at
                    # each call (two atomic adds a probe, 5-8% of the time).
                    near = -1
                    near_v = -INF
                    lranks = hranks = -1  # the ranks of the entries lo and hi came from
                    sign = -1 if k1 & 1 else 1  # East/West minimize
                    top = len(_LEVELS) - 1
                    for level in range(0 if part else top, top + 1):
                        if lo >= beta or hi <= alpha or lo == hi:
                            break  # decided: no further probe
                        b = _bucket(k0, k1, pa, pb, level, tt.shape[0] - 1)
                        for i in range(BUCKET if part else SMALL_BUCKET):
                            if tt[b, 2 * i] != k0 or tt[b, 2 * i + 1] != k1:
                                continue
                            x = ENTRY + 4 * i
                            misc = tt[b, x + 3]
                            ranks = (misc >> 16) & 0xFFFF
                            ma, mb = _masks(ranks)
                            e = tt[b, x + 2]
                            if (pa & ma) != tt[b, x] or (pb & mb) != tt[b, x + 1]:
                                nv = ((e << 32) >> 32) if sign > 0 else -(e >> 32)
                                if nv > near_v:
                                    near_v = nv
                                    near = misc & 0xFFFF
                                continue
                            if hint < 0:
                                hint = misc & 0xFFFF
                            elo = ((e << 32) >> 32) + off
                            ehi = (e >> 32) + off
                            if elo > lo:
                                lo = elo
                                lranks = ranks
                            if ehi < hi:
                                hi = ehi
                                hranks = ranks
                            if lo >= beta or hi <= alpha or lo == hi:
                                break  # decided: the bucket's other entries unread
                    # A bound an entry gave rests on that entry's cards alone.
                    if part and lranks >= 0:
                        lrel = _entry_cards(live, lranks)
                    if part and hranks >= 0:
                        hrel = _entry_cards(live, hranks)
                    if hint < 0:
                        hint = near
                    ready, r, rm = _decided(lo, hi, lrel, hrel, alpha, beta)
                    if not ready:
                        # A bound that does not narrow the window plays no part
                        # in the search: neither it nor its cards go into the
                        # entry stored after it (an entry fixing fewer cards
                        # serves more positions; the table merges equal ones).
                        rm = 0
                        if lo > alpha:
                            alpha = lo
                            rm |= lrel
                        else:
                            lo = t[1, idx]
                        if hi < beta:
                            beta = hi
                            rm |= hrel
                        else:
                            hi = t[2, idx]
                    trick_start = 1
        if ready:
            if d == 0:
                return r
            d -= 1
        else:
            f[63, 0] += 1
            if f[63, 0] > f[63, 2]:  # over the node limit: give up, hands restored
                f[63, 3] = 1
                for i in range(d - 1, -1, -1):
                    h[f[i, SEAT]] = f[i, HAND]
                return 0
            seat = (leader + pos) & 3
            hand = h[seat]
            if pos:
                legal = hand & _SUIT[lead_suit]
                if legal == 0:
                    legal = hand
            elif broken:
                legal = hand
            else:
                legal = hand & ~_SUIT[3]
                if legal == 0:
                    legal = hand
            # Equivalent cards: keep the lowest of each run (no live card
            # between). A mark one above each legal card carries up through the
            # cards no longer live (an addition) and lands on the next live
            # card of the suit: a legal card a mark lands on is not the lowest
            # of its run. (Bit-parallel: the loop over cards was 6% of the time.)
            dead = ~live & _ALL & ~_TOPS
            n = 0
            m = legal & ~((dead + ((legal << 1) & ~_BOTTOMS & _ALL)) & ~dead)
            while m:
                mv[d, n] = low_bit(m)
                m &= m - 1
                n += 1
            # Move ordering.
            if n == 1:
                pass  # nothing to order
            elif pos == 0:
                for i in range(n):
                    mv[64 + d, i] = _lead_key(h, leader, mv[d, i], live)
                _sort_by_key(mv, d, n)
                if hint >= 0:  # the best lead found before, first
                    above = hint & 15
                    m = live & _SUIT[hint >> 4]
                    for _ in range(above):
                        m ^= np.int64(1) << high_bit(m)
                    if m:
                        c = high_bit(m)
                        if not (legal >> c) & 1:  # another seat's: our lowest of the suit
                            m = legal & _SUIT[hint >> 4]
                            c = low_bit(m) if m else c
                        while (legal >> c) & 1:  # its run's lowest card stands for it
                            below = live & _BELOW[c]
                            if not below or not (legal >> high_bit(below)) & 1:
                                break
                            c = high_bit(below)
                        for i in range(n):
                            if mv[d, i] == c:
                                for j in range(i, 0, -1):
                                    mv[d, j] = mv[d, j - 1]
                                mv[d, 0] = c
                                break
                c = f[KILLERS + d // 32, d % 32] - 1
                if c >= 0 and (legal >> c) & 1:
                    while True:  # its run's lowest card stands for it
                        below = live & _BELOW[c]
                        if not below or not (legal >> high_bit(below)) & 1:
                            break
                        c = high_bit(below)
                    at = 1  # second: first, it cost 17% more nodes at 13 cards
                    for i in range(at + 1, n):
                        if mv[d, i] == c:
                            for j in range(i, at, -1):
                                mv[d, j] = mv[d, j - 1]
                            mv[d, at] = c
                            break
            else:
                # a nil bidder without a trick yet plays to duck
                hq = (h[0], h[1], h[2], h[3])  # a tuple: no references counted
                nil = (nils >> seat) & 1 and (idx // STRIDE_A[seat]) % 14 == 0
                for i in range(n):
                    if nil:
                        mv[64 + d, i] = _nil_follow_key(best, lead_suit, mv[d, i])
                    else:
                        mv[64 + d, i] = _follow_key(
                            hq, seat, pos, leader, lead_suit, best, winner, mv[d, i]
                        )
                _sort_by_key(mv, d, n)
            f[d, LEADER] = leader
            f[d, POS] = pos
            f[d, LEAD_SUIT] = lead_suit
            f[d, BEST] = best
            f[d, WINNER] = winner
            f[d, BROKEN] = broken
            f[d, IDX] = idx
            f[d, LIVE] = live
            f[d, ALPHA] = alpha
            f[d, BETA] = beta
            f[d, VALUE] = INF if seat & 1 else -INF
            f[d, SEAT] = seat
            f[d, HAND] = hand
            f[d, COUNT] = n
            f[d, NEXT] = 0
            f[d, TRICK_START] = trick_start
            f[d, BEST_CARD] = mv[d, 0]
            f[d, REL] = rm
            f[d, OWN_REL] = rm
            f[d, SKIP] = 0
            if trick_start:
                f[d, K0] = k0
                f[d, K1] = k1
                f[d, PA] = pa
                f[d, PB] = pb
                f[d, OFFSET] = off
                f[d, ALPHA0] = alpha
                f[d, BETA0] = beta
                f[d, LOWER] = lo
                f[d, UPPER] = hi
        # ---- frame d: take the child's value r (unless just entered), then the next card ----
        fresh = not ready
        while True:
            if not fresh:
                if part and f[d, POS] == 3:  # the child starts the next trick: won by rank?
                    c = mv[d, f[d, NEXT] - 1]
                    bc = c if (_BEATERS[f[d, BEST]] >> c) & 1 else f[d, BEST]
                    trick = f[d, LIVE] & ~(h[0] | h[1] | h[2] | h[3])
                    if popcount(trick & _CARD_SUIT[bc]) >= 2:
                        rm |= np.int64(1) << bc
                if f[d, SEAT] & 1:
                    if r < f[d, VALUE]:
                        f[d, VALUE] = r
                        f[d, BEST_CARD] = mv[d, f[d, NEXT] - 1]
                        if r < f[d, BETA]:
                            f[d, BETA] = r
                elif r > f[d, VALUE]:
                    f[d, VALUE] = r
                    f[d, BEST_CARD] = mv[d, f[d, NEXT] - 1]
                    if r > f[d, ALPHA]:
                        f[d, ALPHA] = r
                if f[d, POS] == 0 and f[d, ALPHA] >= f[d, BETA]:
                    f[KILLERS + d // 32, d % 32] = mv[d, f[d, NEXT] - 1] + 1
                if not part:
                    pass
                elif f[d, ALPHA] >= f[d, BETA]:  # a cut rests on this card's search alone
                    f[d, REL] = f[d, OWN_REL] | rm
                else:
                    f[d, REL] |= rm
                    # The value rests on no card of the suit below the lowest one
                    # in rm: a lower card of the suit in this hand gives the same
                    # (the two differ only in cards no trick or bound compared).
                    c = mv[d, f[d, NEXT] - 1]
                    m = rm & _CARD_SUIT[c]
                    top = low_bit(m) if m else _SUIT_OF[c] * 13 + 13
                    if c < top:
                        f[d, SKIP] |= _CARD_SUIT[c] & ((np.int64(1) << top) - 1)
            fresh = False
            while f[d, NEXT] < f[d, COUNT] and (f[d, SKIP] >> mv[d, f[d, NEXT]]) & 1:
                f[d, NEXT] += 1
            if f[d, NEXT] < f[d, COUNT] and f[d, ALPHA] < f[d, BETA]:
                c = mv[d, f[d, NEXT]]
                f[d, NEXT] += 1
                seat = f[d, SEAT]
                h[seat] = f[d, HAND] ^ (np.int64(1) << c)
                p = f[d, POS]
                alpha = f[d, ALPHA]
                beta = f[d, BETA]
                broken = f[d, BROKEN] | (c >= 39)
                if p == 0:
                    best = c
                    winner = seat
                    lead_suit = _SUIT_OF[c]
                else:
                    lead_suit = f[d, LEAD_SUIT]
                    if (_BEATERS[f[d, BEST]] >> c) & 1:
                        best = c
                        winner = seat
                    else:
                        best = f[d, BEST]
                        winner = f[d, WINNER]
                if p == 3:  # the trick is complete: its winner leads the next
                    leader = winner
                    pos = 0
                    idx = f[d, IDX] + STRIDE_A[winner]
                else:
                    leader = f[d, LEADER]
                    pos = p + 1
                    idx = f[d, IDX]
                    live = f[d, LIVE]
                d += 1
                break
            # Every card tried (or a cut): the frame's value.
            h[f[d, SEAT]] = f[d, HAND]
            r = f[d, VALUE]
            rm = f[d, REL]
            if f[d, TRICK_START]:
                lo = f[d, LOWER]
                hi = f[d, UPPER]
                if r <= f[d, ALPHA0]:
                    hi = min(hi, r)
                elif r >= f[d, BETA0]:
                    lo = max(lo, r)
                else:
                    lo = hi = r
                live = f[d, LIVE]
                if part:
                    ranks, rm = _ranks_needed(h, live, rm)
                else:
                    ranks = _all_ranks(live)
                c = f[d, BEST_CARD]
                hint = _SUIT_OF[c] << 4 | popcount(live & _CARD_SUIT[c] & ~((2 << c) - 1))
                off = f[d, OFFSET]
                _store(
                    tt,
                    f[d, K0],
                    f[d, K1],
                    f[d, PA],
                    f[d, PB],
                    ranks,
                    live,
                    lo - off,
                    hi - off,
                    hint,
                    part,
                )
            if d == 0:
                return r
            d -= 1


# ----- the objective's tables -----------------------------------------------------------


def _splits(total: int):
    """Every (w0, w1, w2, w3) of tricks taken per seat with a sum of at most ``total``,
    by sum, greatest sum first."""
    for n in range(total, -1, -1):
        for w0 in range(n + 1):
            for w1 in range(n - w0 + 1):
                for w2 in range(n - w0 - w1 + 1):
                    yield n, (w0, w1, w2, n - w0 - w1 - w2)


def objective_tables(objective: Objective, tricks_left: int) -> np.ndarray:
    """The rows the kernel reads by ``idx`` for ``tricks_left`` tricks from the
    position: the leaf value (when every trick is taken), the least and the
    greatest value still reachable, the table's key part and the offset."""
    t = np.zeros((5, IDX_SIZE), dtype=np.int64)
    if isinstance(objective, PointsObjective):
        objective._remaining_total = tricks_left
    tracked = objective.tracked
    for n, w in _splits(tricks_left):
        idx = w[0] + 14 * w[1] + 196 * w[2] + 2744 * w[3]
        ns = w[0] + w[2]
        if n == tricks_left:
            marks = [w[s] if objective.count_tracked else int(w[s] > 0) for s in tracked]
            v = objective.value(ns, marks)
            t[0, idx] = t[1, idx] = t[2, idx] = v
        else:
            nxt = [idx + STRIDE[s] for s in range(4)]
            t[1, idx] = min(t[1, j] for j in nxt)
            t[2, idx] = max(t[2, j] for j in nxt)
        if objective.separable:
            t[3, idx] = sum(int(w[s] > 0) << j for j, s in enumerate(tracked))
            t[4, idx] = ns
        else:
            t[3, idx] = ns | sum(w[s] << (4 + 4 * j) for j, s in enumerate(tracked))
    if not objective.separable:
        _class_keys(t, tricks_left)
    return t


def side_tables(t: np.ndarray, tricks_left: int) -> np.ndarray:
    """``g`` of :func:`_solve` from an objective's tables ``t``: by ``idx`` and the
    number x of the tricks left that North/South take, the least (``g[0]``) and
    the greatest (``g[1]``) leaf value over every way the seats share them
    (INF and -INF where x is more than the tricks left)."""
    g = np.empty((2, 14, IDX_SIZE), dtype=np.int32)
    _fill_side_tables(t, tricks_left, g)
    return g


@njit(cache=True)
def _fill_side_tables(t, tricks_left, g):
    for n in range(tricks_left, -1, -1):  # the leaves first, then back to the start
        for w0 in range(n + 1):
            for w1 in range(n - w0 + 1):
                for w2 in range(n - w0 - w1 + 1):
                    idx = w0 + 14 * w1 + 196 * w2 + 2744 * (n - w0 - w1 - w2)
                    for x in range(14):
                        g[0, x, idx] = INF
                        g[1, x, idx] = -INF
                    if n == tricks_left:
                        g[0, 0, idx] = g[1, 0, idx] = t[0, idx]
                        continue
                    for seat in range(4):
                        child = idx + STRIDE_A[seat]
                        more = 1 - (seat & 1)  # a trick to North/South: one more of theirs
                        for x in range(more, 14):
                            g[0, x, idx] = min(g[0, x, idx], g[0, x - more, child])
                            g[1, x, idx] = max(g[1, x, idx], g[1, x - more, child])


def _class_keys(t: np.ndarray, tricks_left: int) -> None:
    """Key the outcomes so far by what the rest of the round can still make of
    them: two outcomes whose leaf values over every split of the remaining
    tricks differ by one constant share table entries (values stored relative
    to that constant, the offset), as the trick count's do. (A nil round's
    slowest 13-card points searches: 30-40% fewer nodes.)"""
    classes = 0
    for n in range(tricks_left + 1):
        so_far = np.array([_idx(w) for m, w in _splits(n) if m == n], dtype=np.int64)
        rest = np.array(
            [_idx(w) for m, w in _splits(tricks_left - n) if m == tricks_left - n],
            dtype=np.int64,
        )
        leaves = t[0][so_far[:, None] + rest[None, :]]
        base = leaves[:, 0]
        _, shape = np.unique(leaves - base[:, None], axis=0, return_inverse=True)
        t[3, so_far] = classes + shape.reshape(-1)
        t[4, so_far] = base
        classes += int(shape.max()) + 1


def _idx(w: tuple[int, ...]) -> int:
    return w[0] + 14 * w[1] + 196 * w[2] + 2744 * w[3]


_TABLES: dict[tuple, np.ndarray] = {}
# Bytes of objectives' tables kept in the process (1.5 MB each; a round's analysis
# uses 14, about 21 MB): a replays worker analysing rounds one after another could
# hold 3 GB when the cap was 2,048 tables.
MAX_TABLE_BYTES = 128 * 2**20


def _objective_key(objective: Objective) -> tuple | None:
    """What an objective's tables depend on, or None for an unknown kind."""
    from .solver import TricksObjective

    kind = type(objective)
    if kind is TricksObjective:
        return ("tricks",)
    if kind is NilObjective:
        return ("nil", objective.tracked)
    if kind is PointsObjective:
        o = objective
        return ("points", o.rules, o.bids, o.blind, o.tricks_won, o.scores, o.bags)
    return None


_SIDE_TABLES: dict[tuple, np.ndarray] = {}
MAX_SIDE_TABLE_BYTES = 64 * 2**20  # 4.3 MB each, made only for searches of SIDE_FROM tricks+
# Tricks from the objective's start from which a points search is bounded by
# side_tables: below, searches are small (UCT's 5-card solves take about 0.03 ms)
# and a table takes 1-5 ms to make (not measured against them: the line where
# the bounds pay is a guess).
SIDE_FROM = 8
_NO_SIDE_TABLE = np.zeros((2, 14, 1), dtype=np.int32)


def _kept(
    cache: dict, limit_bytes: int, objective: Objective, tricks_left: int, make
) -> np.ndarray:
    """``make()``, kept in ``cache`` for equal objectives; the cache is emptied before it
    would pass ``limit_bytes``."""
    key = _objective_key(objective)
    if key is None:
        return make()
    key = (*key, tricks_left)
    found = cache.get(key)
    if found is None:
        found = make()
        if sum(a.nbytes for a in cache.values()) + found.nbytes > limit_bytes:
            cache.clear()
        cache[key] = found
    return found


def shared_side_tables(objective: Objective, tricks_left: int, t: np.ndarray) -> np.ndarray:
    """:func:`side_tables`, made once per process for equal objectives."""
    make = functools.partial(side_tables, t, tricks_left)
    return _kept(_SIDE_TABLES, MAX_SIDE_TABLE_BYTES, objective, tricks_left, make)


def shared_tables(objective: Objective, tricks_left: int) -> np.ndarray:
    """:func:`objective_tables`, made once per process for equal objectives (the
    bench's and UCT's many solvers of one objective share them)."""
    make = functools.partial(objective_tables, objective, tricks_left)
    return _kept(_TABLES, MAX_TABLE_BYTES, objective, tricks_left, make)


# ----- the shared transposition table and the solver ----------------------------------

_table: tuple[np.ndarray] | None = None
NO_LIMIT = 1 << 62  # the node limit of a search without one


class SearchOverBudget(RuntimeError):
    """A search stopped at its node limit (``CompiledSolver.value(node_limit=...)``)."""


_generation = itertools.count(1)
MAX_GENERATION = 1 << (63 - GEN_SHIFT)  # fits the key; the table is wiped if it ever wraps


_table_bits = TT_BITS


def use_table_bits(bits: int) -> None:
    """Give the process's shared table 2**bits entries (from its next search; the
    entries it held are dropped). A round's analysis calls it with
    :data:`ANALYSIS_TABLE_BITS`."""
    global _table, _table_bits
    low, high = TABLE_BITS_RANGE
    if not low <= bits <= high:
        raise ValueError(f"table bits must be from {low} to {high}, not {bits}")
    if bits != _table_bits:
        _table_bits = bits
        _table = None


def _shared_table() -> tuple[np.ndarray]:
    """The process's table, one row a bucket (:data:`ENTRY`), its rows on cache
    lines (an entry's four words then share one), in a tuple."""
    global _table
    if _table is None:
        rows = (1 << _table_bits) // BUCKET
        flat = _huge_pages(rows * ROW + 8)
        # written here: its pages are touched by the warm-up, not by the first
        # search that stores there (25 ms at 7 cards)
        flat.fill(-1)
        skip = (-flat.ctypes.data % 64) // 8
        _table = (flat[skip : skip + rows * ROW].reshape(rows, ROW),)
    return _table


def _huge_pages(words: int) -> np.ndarray:
    """An int64 array on memory the kernel is asked to back with huge pages (2 MB:
    each probe of the table then finds its page in the TLB, where 4 kB pages
    made most of them walk the page tables), else an ordinary one."""
    size = words * 8
    try:
        buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        buf.madvise(mmap.MADV_HUGEPAGE)
    except (AttributeError, OSError, ValueError):  # no madvise here: 4 kB pages
        return np.empty(words, dtype=np.int64)
    return np.frombuffer(buf, dtype=np.int64)


def _new_generation() -> int:
    global _generation
    g = next(_generation)
    if g >= MAX_GENERATION:
        _shared_table()[0].fill(-1)
        _generation = itertools.count(2)
        g = 1
    return g


class CompiledSolver:
    """The drop-in for :class:`bots.solver.Solver`: the same objectives and values.

    Like the reference it keeps its table entries between calls (positions of
    one sampled deal share many); with the points objective only between
    positions as many tricks from the objective's start: positions with as
    many tricks left, or any of one round when each call says what was
    taken since that start (``value(..., taken=...)``: a round's analysis).
    :meth:`clear` forgets them.
    """

    def __init__(self, objective: Objective | None = None) -> None:
        from .solver import TricksObjective

        self.objective = objective or TricksObjective()
        self.bisect = type(self.objective) is TricksObjective
        self._tables: dict[int, np.ndarray] = {}
        self._values: dict[tuple[int, int], list[int]] = {}
        self._frames = np.zeros((64, 32), dtype=np.int64)
        self._moves = np.zeros((128, 16), dtype=np.int64)  # cards by depth, then lead keys
        self._frames[63, 1] = _new_generation()
        self._tricks_left: int | None = None
        self.nodes = 0  # the last call's
        self.total_nodes = 0  # every call's, stopped ones too

    def clear(self) -> None:
        self._frames[63, 1] = _new_generation()
        self._tricks_left = None

    def outcome_values(
        self, tricks_left: int, span: int | None = None, start: int = 0
    ) -> list[int]:
        """The objective's distinct values over every split of the ``tricks_left``
        tricks left, ``span`` tricks from the objective's start (default: as many)
        with the outcome ``start`` (an ``idx``) so far."""
        span = tricks_left if span is None else span
        values = self._values.get((span, start))
        if values is None:
            t = self.tables(span)
            idx = [start + _idx(w) for n, w in _splits(tricks_left) if n == tricks_left]
            values = self._values[(span, start)] = sorted({int(x) for x in t[0, idx]})
        return values

    def tables(self, tricks_left: int) -> np.ndarray:
        t = self._tables.get(tricks_left)
        if t is None:
            t = self._tables[tricks_left] = shared_tables(self.objective, tricks_left)
        return t

    def value(
        self,
        position: Position,
        alpha: int = -(10**9),
        beta: int = 10**9,
        taken: tuple[int, ...] | None = None,
        node_limit: int | None = None,
    ) -> int:
        """The minimax value (for North/South) of the objective from ``position``.

        ``taken``: the tricks each seat took between the objective's start (its
        ``tricks_won``) and the position. Without it the position is the start.
        With it, every position of a round is searched in the same outcomes
        from the same start, so their table entries serve each other.
        ``node_limit``: past that many nodes the search stops and raises
        :class:`SearchOverBudget` (the solver stays usable: what its table
        holds is right)."""
        left = position.hands[position.leader].bit_count() + (1 if position.trick else 0)
        start = _idx(taken) if taken else 0
        span = left + (sum(taken) if taken else 0)  # tricks from the objective's start
        if span != self._tricks_left:
            if not self.objective.separable:  # keys count the outcome since the start
                self.clear()
            self._tricks_left = span
        t = self.tables(span)
        tt = _shared_table()[0]
        frames, moves = self._frames, self._moves
        frames[63, 0] = 0
        frames[63, 2] = NO_LIMIT if node_limit is None else node_limit
        frames[63, 3] = 0
        h = np.array(position.hands, dtype=np.int64)
        trick = position.trick
        alpha = max(alpha, -INF + 1)
        beta = min(beta, INF - 1)
        broken = int(position.spades_broken)
        if trick:
            best, winner = winning_card(position.leader, trick)
            live = int(h[0] | h[1] | h[2] | h[3])
            for c in trick:
                live |= 1 << c
            node = (position.leader, len(trick), trick[0] // 13, best, winner, broken, live)
        else:
            node = (position.leader, 0, 0, -1, position.leader, broken, 0)
        quick = int(self.bisect)
        g = _NO_SIDE_TABLE
        if not quick and isinstance(self.objective, PointsObjective) and span >= SIDE_FROM:
            quick = 2
            g = shared_side_tables(self.objective, span, t)
        part = int(left >= PARTITION_FROM)
        nils = 0  # nil bidders without a trick at the objective's start: they follow to duck
        if isinstance(self.objective, PointsObjective | NilObjective):
            won = getattr(self.objective, "tricks_won", (0, 0, 0, 0))
            for seat in self.objective.tracked:
                if not won[seat]:
                    nils |= 1 << seat
        if (self.bisect or left >= BISECT_FROM) and alpha <= t[1, start] and beta > t[2, start]:
            # Null windows: each search only asks "at least this value?", and the
            # value is one of the outcomes' values: a binary search over them.
            values = self.outcome_values(left, span, start)
            lo, hi = 0, len(values) - 1
            while lo < hi:
                m = values[(lo + hi + 1) // 2]
                v = _solve(h, *node, m - 1, m, quick, part, t, tt, frames, moves, start, g, nils)
                self._check(frames)
                if v >= m:
                    lo = bisect.bisect_left(values, v)
                else:
                    hi = bisect.bisect_right(values, v) - 1
            v = values[lo]
        else:
            v = _solve(h, *node, alpha, beta, quick, part, t, tt, frames, moves, start, g, nils)
            self._check(frames)
        self.nodes = int(frames[63, 0])
        self.total_nodes += self.nodes
        return int(v)

    def _check(self, frames: np.ndarray) -> None:
        if frames[63, 3]:
            self.nodes = int(frames[63, 0])
            self.total_nodes += self.nodes
            raise SearchOverBudget(f"the search passed its limit of {frames[63, 2]:,} nodes")


def warm_up() -> None:
    """Compile the kernels, or load them from numba's cache, and allocate the shared
    table (about 0.8 s from the cache): a process that searches under a time
    budget calls it once at its start, so its first move does not pay for it."""
    from .solver import random_position

    started = time.perf_counter()
    CompiledSolver().value(random_position(random.Random(0), 3))
    # UCT's playout, deal and remembered-deal kernels (SRP's sampled cover uses
    # the first two)
    from . import sampling_compiled, srp_compiled, uct_compiled

    srp_compiled.warm_up()
    sampling_compiled.warm_up()
    uct_compiled.warm_up()
    _warmed.set()
    logging.getLogger(__name__).info("%s in %.1f s", KERNELS_READY, time.perf_counter() - started)


KERNELS_READY = "compiled search kernels ready"  # the log line a deployment can wait for


_warmed = threading.Event()
_warming_in: int | None = None  # the process whose thread is warming up
_warming_lock = threading.Lock()


def ready() -> bool:
    """Whether this process's kernels are compiled (or loaded) and searches may
    count on their speed."""
    return _warmed.is_set()


def warm_up_in_background() -> None:
    """:func:`warm_up` on a thread of its own, once per process (a forked child
    inherits no thread, so it starts its own)."""
    global _warming_in
    with _warming_lock:
        if _warmed.is_set() or _warming_in == os.getpid():
            return
        _warming_in = os.getpid()
    threading.Thread(target=warm_up, name="solver-warm-up", daemon=True).start()


def max_tricks(position: Position, partnership: int) -> int:
    """:func:`bots.solver.max_tricks`, compiled."""
    ns = CompiledSolver().value(position)
    left = position.hands[position.leader].bit_count() + (1 if position.trick else 0)
    return ns if partnership == 0 else left - ns


__all__ = [
    "CompiledSolver",
    "NilObjective",
    "PointsObjective",
    "SearchOverBudget",
    "max_tricks",
    "objective_tables",
    "ready",
    "warm_up",
    "warm_up_in_background",
]
