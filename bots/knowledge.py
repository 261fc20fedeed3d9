"""What one seat can infer from its view: the bookkeeping behind SRP.

Bots are stateless, so everything here is recomputed from a
:class:`~game.engine.view.SeatView` alone (one pass over the public tricks,
then bit operations on 52-bit card masks):

* the cards played and the cards this seat has not seen (``unseen``);
* the voids each seat has shown (failing to follow a lead, spades included;
  leading a spade before spades were broken shows a hand of only spades);
* the card and seat winning the current trick, the boss of each suit;
* the nil bidders and whether each was already set (took a trick);
* the tricks each partnership still needs for its contract;
* the sure future takes of this seat's hand (the BIS paper, appendix D.1);
* the high-low doubleton signal (appendix D.3) shown by each seat.

>>> from game.engine.cards import parse_hand, SPADES
>>> sure_takes(parse_hand("AS"), parse_hand("KS QS JS"))
1
>>> sure_takes(parse_hand("KS QS"), parse_hand("AS JS"))
1
"""

from __future__ import annotations

from functools import lru_cache

from game.engine.cards import FULL_DECK, SPADE_MASK, SPADES, SUIT_MASKS, Card, Hand, Seat
from game.engine.tricks import ABOVE, beaters, winning_card
from game.engine.view import SeatView

# SUITSET_MASK[bits]: the cards of every suit whose bit is set in ``bits``.
SUITSET_MASK: tuple[int, ...] = tuple(
    sum(SUIT_MASKS[s] for s in range(4) if bits >> s & 1) for bits in range(16)
)
# How much likelier a nil bidder is to hold a card than a seat chosen at random,
# by card (a side suit's 2..A, then the spades' 2..A): nil hands are low and
# short in spades. Rounded from the dealt hands of 8,750 nils of BIS (with
# Big 5 / Big 6 and the calibrated curves) against RB, seed 5 (docs/bots.md,
# "SRP's nil cover").
_SIDE_NILER = (1.3, 1.3, 1.35, 1.3, 1.3, 1.25, 1.2, 1.15, 1.1, 1.0, 0.9, 0.8, 0.7)
_SPADE_NILER = (0.85, 0.85, 0.85, 0.85, 0.8, 0.8, 0.8, 0.75, 0.65, 0.55, 0.35, 0.1, 0.0)
NILER_HOLDS = _SIDE_NILER * 3 + _SPADE_NILER

SIDE_SUITS_VOID = 0b0111  # a seat void in clubs, diamonds and hearts


def lowest(mask: int) -> Card:
    """The lowest-numbered card of a non-empty mask."""
    return (mask & -mask).bit_length() - 1


def highest(mask: int) -> Card:
    """The highest-numbered card of a non-empty mask."""
    return mask.bit_length() - 1


# ----- sure future takes (appendix D.1) ---------------------------------------


def _compress(mine: int, theirs: int) -> tuple[int, int, int]:
    """Drop ranks nobody holds: only the order of the cards matters."""
    both = mine | theirs
    m = t = 0
    i = 0
    while both:
        low = both & -both
        if mine & low:
            m |= 1 << i
        else:
            t |= 1 << i
        both ^= low
        i += 1
    return m, t, i


def _runs(mask: int, n: int) -> list[int]:
    """One representative (the lowest) of each run of adjacent held ranks."""
    reps = []
    prev = False
    for i in range(n):
        held = bool(mask >> i & 1)
        if held and not prev:
            reps.append(i)
        prev = held
    return reps


@lru_cache(maxsize=1 << 16)
def _one_suit_whist(mine: int, theirs: int, n: int) -> int:
    """Tricks the leader surely wins in 1-suit 2-player whist, leading every trick."""
    if not mine:
        return 0
    if not theirs:
        return mine.bit_count()
    best = 0
    mine_reps = _runs(mine, n)
    their_reps = _runs(theirs, n)
    for a in mine_reps:
        worst = 13
        for b in their_reps:
            rest = _one_suit_whist(*_compress(mine ^ (1 << a), theirs ^ (1 << b)))
            worst = min(worst, rest + (a > b))
            if worst <= best:
                break
        best = max(best, worst)
    return best


def sure_takes(hand: Hand, unseen: Hand) -> int:
    """Tricks ``hand`` is sure to take, whoever holds the ``unseen`` cards.

    Worst case (appendix D.1): only spades can be sure winners, every unseen
    spade is held by one opponent and every spade trick is led by us. That is
    one-suit, two-player whist, solved exactly (cached by the order of the
    cards). A spade is sure by being the boss, or by outnumbering the
    opponent's spades, and a boss led forces out an opponent's spade.

    >>> from game.engine.cards import parse_hand
    >>> sure_takes(parse_hand("5S 4S 3S 2S"), parse_hand("AS KS"))
    2
    """
    mine = (hand & SPADE_MASK) >> 39
    theirs = (unseen & SPADE_MASK) >> 39
    if not mine:
        return 0
    if not theirs:
        return mine.bit_count()
    return _one_suit_whist(*_compress(mine, theirs))


# ----- the knowledge of one seat -----------------------------------------------


class Knowledge:
    """Everything one seat can infer from its view; computed once per decision."""

    __slots__ = (
        "seat", "partner", "hand", "played", "unseen", "voids", "signals",
        "lead_suit", "win_card", "win_seat", "trick", "leader", "position",
        "bids", "nil", "nil_set", "need", "tricks_left", "suit_led_count",
        "_sure",
    )  # fmt: skip

    def __init__(self, view: SeatView) -> None:
        seat = view.seat
        if seat is None:
            raise ValueError("knowledge is a seat's: a spectator has none")
        self.seat: Seat = seat
        self.partner: Seat = seat ^ 2
        self.hand: Hand = view.hand or 0
        voids = [0, 0, 0, 0]
        signals = [0, 0, 0, 0]
        # Per seat and suit: the card followed on the first round of the suit
        # when it was played under a higher card (-1: none yet / not under).
        first_under = [[-1] * 4 for _ in range(4)]
        rounds = [0, 0, 0, 0]  # how many tricks each suit was led in
        played = 0
        broken = False
        for t in view.tricks:
            played |= self._scan(t.leader, t.cards, broken, voids, signals, first_under, rounds)
            if not broken and any(c >= 39 for c in t.cards):
                broken = True
        trick = view.trick
        self.trick = trick
        self.leader: Seat = view.leader
        self.position = len(trick)
        if trick:
            played |= self._scan(view.leader, trick, broken, voids, signals, first_under, rounds)
            self.lead_suit = trick[0] // 13
            self.win_card: Card
            self.win_seat: Seat
            self.win_card, self.win_seat = winning_card(view.leader, trick)
        else:
            self.lead_suit = -1
            self.win_card = -1
            self.win_seat = -1
        self.played: Hand = played
        self.unseen: Hand = FULL_DECK & ~played & ~self.hand
        self.voids = voids
        self.signals = signals
        self.suit_led_count = rounds
        # Bids, nils and contracts.
        bids = tuple(b if b is not None else -1 for b in view.bids)
        self.bids = bids
        nil_allowed = view.rules.nil
        nil = tuple(nil_allowed and b == 0 for b in bids)
        self.nil = nil
        won = view.tricks_won
        self.nil_set = tuple(nil[s] and won[s] > 0 for s in range(4))
        count_nil = view.rules.nil_tricks_count_for_team
        need = []
        for p in (0, 1):
            contract = max(bids[p], 0) + max(bids[p + 2], 0)
            taken = sum(won[s] for s in (p, p + 2) if count_nil or not nil[s])
            need.append(max(0, contract - taken))
        self.need = (need[0], need[1])
        self.tricks_left = 13 - len(view.tricks)
        self._sure = -1

    @staticmethod
    def _scan(
        leader: Seat,
        cards: tuple[Card, ...],
        broken: bool,
        voids: list[int],
        signals: list[int],
        first_under: list[list[int]],
        rounds: list[int],
    ) -> int:
        """Record one trick's voids and signals; return its cards as a mask."""
        lead_suit = cards[0] // 13
        mask = 0
        if lead_suit == SPADES and not broken:
            # Spades may be led before they are broken only from a hand of spades.
            voids[leader] |= SIDE_SUITS_VOID
        rnd = rounds[lead_suit]
        best = cards[0]
        for i, c in enumerate(cards):
            mask |= 1 << c
            s = (leader + i) & 3
            if c // 13 != lead_suit:
                voids[s] |= 1 << lead_suit
            elif i and lead_suit != SPADES:
                if rnd == 0:
                    # Followed under a higher card already on the trick?
                    first_under[s][lead_suit] = c if c < best else -1
                elif rnd == 1 and 0 <= c < first_under[s][lead_suit]:
                    signals[s] |= 1 << lead_suit  # high-low: a doubleton
            if (c // 13 == lead_suit or c >= 39) and c > best:
                best = c
        if len(cards) == 4:
            rounds[lead_suit] = rnd + 1
        return mask

    # ----- derived facts --------------------------------------------------------

    @property
    def sure(self) -> int:
        """This seat's sure future takes (appendix D.1)."""
        if self._sure < 0:
            self._sure = sure_takes(self.hand, self.unseen)
        return self._sure

    def void_in(self, seat: Seat, suit: int) -> bool:
        return bool(self.voids[seat] >> suit & 1)

    def possible(self, seat: Seat) -> Hand:
        """The unseen cards ``seat`` may hold (not in a suit it showed void)."""
        if seat == self.seat:
            return self.hand
        return self.unseen & ~SUITSET_MASK[self.voids[seat]]

    def boss(self, suit: int) -> Card:
        """The highest card of ``suit`` not yet played (-1 when all are played)."""
        rest = (self.hand | self.unseen) & SUIT_MASKS[suit]
        return rest.bit_length() - 1 if rest else -1

    def is_boss(self, card: Card) -> bool:
        """No unseen card of its suit is higher (so only a trump can beat it)."""
        return not self.unseen & ABOVE[card]

    def we_lead_partner_void(self, suit: int) -> bool:
        return self.void_in(self.partner, suit)

    def signalled(self, seat: Seat) -> int:
        """Suits (bits) in which ``seat`` showed the high-low doubleton signal and
        may now be cut, that is, it is not known to be void in spades."""
        if self.voids[seat] >> SPADES & 1:
            return 0
        return self.signals[seat]

    def may_beat(self, seat: Seat, card: Card, lead_suit: int) -> bool:
        """Could ``seat``, still to play to this trick, beat ``card``?

        A seat not known void in the led suit is taken to follow it; a seat
        known void may trump (any spade it may hold that beats ``card``).
        """
        poss = self.possible(seat)
        if not self.voids[seat] >> lead_suit & 1:
            if card // 13 != lead_suit:
                return False  # following suit cannot beat a trump
            return bool(poss & ABOVE[card])
        return bool(beaters(poss & SPADE_MASK, card))

    def holds(self, card: Card, after: tuple[Seat, ...] | list[Seat]) -> bool:
        """Will ``card`` (now winning) hold against the opponents still to play?"""
        mine = self.seat & 1
        ls = self.lead_suit if self.lead_suit >= 0 else card // 13
        return not any((s & 1) != mine and self.may_beat(s, card, ls) for s in after)

    def still_to_play(self) -> list[Seat]:
        """The seats after this one in the current trick."""
        return [(self.seat + i) & 3 for i in range(1, 4 - self.position)]
