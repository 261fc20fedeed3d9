"""SRP, the strong rule-based playing module (the BIS paper, section 5.1 and
appendices D and E).

Each decision starts from what the seat can infer (:mod:`bots.knowledge`),
then chooses a goal (appendix D.2) in this order:

1. we bid nil and are not set yet: lose every trick we can (the highest card
   that still loses, shed dangerous high cards when void);
2. partner bid nil and is not set: cover it, never abandoning it (SRP as in
   the paper): win over partner's card, play high before partner, and lead
   the card least likely to force partner over it (:func:`cover_risk`, from
   the voids shown, the cards partner may still hold and those its nil play
   showed it does not hold; checked on sampled deals, :mod:`bots.nil_cover`),
   high within its suit;
3. an opponent bid nil and is not set: set it (lead low where the niler must
   follow, play under it, never overtake it), unless our own contract is in
   danger or the niler cannot be forced any more: then fight for tricks to set
   the coverer;
4. otherwise our contract, by round type (appendix E): win tricks while we
   need them; once our contract is safe (sure takes, appendix D.1) fight for
   tricks to set the opponents in over, fourteen and strong over rounds, and
   avoid bags (bagging the opponents) otherwise.

Technique throughout: second hand low, third hand high but only the cheapest
winner, never overtake a partner whose card holds, trump with the lowest spade
that wins, cash bosses when tricks are needed, avoid leading from an
unguarded honor (K-x into the ace), lead short suits for ruffs when spades are
to spare, and the high-low doubleton signal (appendix D.3) both given and read.

SRP never plays an illegal card: every choice is made from the legal plays.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from game.engine.actions import Play
from game.engine.cards import JACK, SPADE_MASK, SPADES, SUIT_MASKS, Card, Hand, Seat
from game.engine.round_types import RoundType, round_type
from game.engine.tricks import ABOVE, BEATERS, BELOW, beaters, beats
from game.engine.view import SeatView

from .base import Player
from .knowledge import NILER_HOLDS, Knowledge, highest, lowest

WIN, LOSE = 1, -1
SIDE_MASK = ~SPADE_MASK
FIGHTING_TYPES = (RoundType.OVER, RoundType.FOURTEEN, RoundType.STRONG_OVER)
# Deals SRP samples to choose its lead when covering partner's nil (bots.nil_cover).
COVER_DEALS = 64


def _rank(card: Card) -> int:
    return card % 13


class SRP(Player):
    """The strong rule-based player: stateless, deterministic, fast."""

    name = "SRP"

    def __init__(self, cover_deals: int = COVER_DEALS) -> None:
        # Deals sampled to choose a lead covering partner's nil (bots.nil_cover);
        # 0: the rule alone, as the compiled SRP of the search playouts plays.
        self.cover_deals = cover_deals

    def play(self, view: SeatView, rng: random.Random) -> int:
        legal = 0
        for a in view.legal_actions:
            if isinstance(a, Play):
                legal |= 1 << a.card
        if not legal:
            raise ValueError("SRP was asked to play with no legal card")
        if not legal & (legal - 1):
            return lowest(legal)
        k = Knowledge(view)
        card = self.choose(view, k, legal)
        if card < 0 or not legal >> card & 1:  # defensive: never illegal
            card = lowest(legal)
        return card

    # ----- goal choosing (appendix D.2) ----------------------------------------

    def choose(self, view: SeatView, k: Knowledge, legal: int) -> Card:
        me = k.seat
        if k.nil[me] and not k.nil_set[me]:
            return self.nil_play(k, legal)
        if k.nil[k.partner] and not k.nil_set[k.partner]:
            card = self.cover_play(view, k, legal)
            if card >= 0:
                return card
        targets = [s for s in ((me + 1) & 3, (me + 3) & 3) if k.nil[s] and not k.nil_set[s]]
        if targets and self.setting_niler(k, targets):
            card = self.set_nil_play(view, k, legal, targets)
            if card >= 0:
                return card
        return self.contract_play(view, k, legal)

    def desire(self, view: SeatView, k: Knowledge) -> int:
        """WIN while we need tricks or fight to set them, else LOSE (avoid bags)."""
        side = k.seat & 1
        need_us, need_them = k.need[side], k.need[1 - side]
        left = k.tricks_left
        rtype = round_type(k.bids, k.seat, view.rules.nil)
        if need_us > 0:
            # Contract safe on sure spade takes in a low round: duck, bag them.
            if need_us <= k.sure and rtype in (RoundType.STRONG_UNDER, RoundType.UNDER):
                return LOSE
            return WIN
        if need_them > 0:
            # Tricks we must still take to set them.
            to_set = left - need_them + 1
            if rtype in (RoundType.FOURTEEN, RoundType.STRONG_OVER):
                return WIN
            if rtype in FIGHTING_TYPES and to_set <= 3:
                return WIN
            # Opponents' nil rounds: the coverer's contract is often the weak spot.
            if rtype in (RoundType.OPPONENTS_NIL, RoundType.DOUBLE_NIL) and to_set <= 2:
                return WIN
        return LOSE

    def setting_niler(self, k: Knowledge, targets: list[int]) -> bool:
        """Try to set an opposing niler, or switch to the coverer / our contract?"""
        side = k.seat & 1
        need_us, need_them = k.need[side], k.need[1 - side]
        left = k.tricks_left
        if need_us > 0 and need_us > k.sure and need_us >= left - 2:
            return False  # our own contract is in danger
        if need_them > 0 and left - need_them <= 0:
            return False  # one more trick sets the coverer: take it instead
        # A niler void in every side suit we could lead cannot be forced there.
        forceable = any(
            (k.hand & SUIT_MASKS[s]) and not k.void_in(t, s) for t in targets for s in range(4)
        )
        return forceable

    # ----- we bid nil ----------------------------------------------------------

    def nil_play(self, k: Knowledge, legal: int) -> Card:
        unseen = k.unseen
        if k.position == 0:
            # Lead the card with the fewest unseen cards under it (most over it).
            best, best_key = -1, None
            for s in range(4):
                cards = legal & SUIT_MASKS[s]
                if not cards:
                    continue
                c = lowest(cards)
                over = (unseen & ABOVE[c]).bit_count()
                under = (unseen & BELOW[c]).bit_count()
                key = (over == 0, under, -over, s == SPADES)
                if best_key is None or key < best_key:
                    best, best_key = c, key
            return best
        wc = k.win_card
        after = k.position < 3
        follow = legal & SUIT_MASKS[k.lead_suit]
        if follow:
            losers = follow & ~beaters(follow, wc)
            if losers:
                return highest(losers)  # the highest card that still loses
            # Every card wins for now: a later card may still go over the lowest.
            return lowest(follow) if after else highest(follow)
        # Void: shed the most dangerous card that loses, never trump if avoidable.
        candidates = legal & ~beaters(legal, wc)
        if candidates:
            return self._most_dangerous(k, candidates)
        return lowest(legal) if after else highest(legal)

    def _most_dangerous(self, k: Knowledge, cards: int) -> Card:
        """The card most likely to win a trick later: fewest unseen cards over it,
        spades first (a void makes them win), then the highest."""
        best, best_key = -1, None
        m = cards
        unseen = k.unseen
        while m:
            low = m & -m
            c = low.bit_length() - 1
            m ^= low
            key = ((unseen & ABOVE[c]).bit_count() - (2 if c >= 39 else 0), -_rank(c))
            if best_key is None or key < best_key:
                best, best_key = c, key
        return best

    # ----- partner bid nil: cover ---------------------------------------------------

    def cover_play(self, view: SeatView, k: Knowledge, legal: int) -> Card:
        p = k.partner
        pos = k.position
        if pos == 0:
            return self._lead_cover(view, k, legal)
        partner_index = (p - k.leader) & 3
        wc = k.win_card
        if partner_index < pos:
            if k.win_seat == p:
                # Win over the niler: any card above partner's protects it.
                win = beaters(legal, wc)
                if win:
                    return lowest(win)
            return -1  # partner is safe in this trick: play for the contract
        # Partner plays after us (we are second, partner last): play high.
        follow = legal & SUIT_MASKS[k.lead_suit]
        if follow:
            top = highest(follow)
            if beats(top, wc) and not k.is_boss(wc):
                return top
            return -1
        if not k.is_boss(wc):
            trumps = beaters(legal & SPADE_MASK, wc)
            if trumps:
                return lowest(trumps)
        return -1

    def _lead_cover(self, view: SeatView, k: Knowledge, legal: int) -> Card:
        """Lead so the niling partner can play under, high within the suit. The rule:
        the lead least likely to force partner over it (:func:`cover_risk`, with
        the cards partner's nil play showed it does not hold), then the suit whose
        top card has the fewest unseen cards over it. With ``cover_deals``, the
        lead that set the nil in the fewest sampled deals comes first and the rule
        breaks ties (:mod:`bots.nil_cover`)."""
        counts = view.hand_counts
        shown = nil_shown(view, k.partner)
        leads: dict[Card, tuple] = {}
        for s in range(4):
            cards = legal & SUIT_MASKS[s]
            if not cards:
                continue
            top = highest(cards)
            over = (k.unseen & ABOVE[top]).bit_count()
            partner_void = k.void_in(k.partner, s)
            risk = cover_risk(k, top, counts, shown)
            leads[top] = (risk, over, not partner_void, s == SPADES, -_rank(top))
        if self.cover_deals and len(leads) > 1:
            from .nil_cover import lead_sets  # compiled kernels: loaded when first needed

            cards = list(leads)
            sets = lead_sets(view, k, cards, shown, self.cover_deals)
            for card, n in zip(cards, sets, strict=True):
                leads[card] = (n, *leads[card])
        return min(leads, key=leads.__getitem__)

    # ----- an opponent bid nil: set it ----------------------------------------------

    def set_nil_play(self, view: SeatView, k: Knowledge, legal: int, targets: list[int]) -> Card:
        pos = k.position
        if pos == 0:
            # Lead low where a niler must follow: the card with fewest unseen under it.
            best, best_key = -1, None
            for s in range(4):
                cards = legal & SUIT_MASKS[s]
                if not cards or all(k.void_in(t, s) for t in targets):
                    continue
                c = lowest(cards)
                under = (k.unseen & BELOW[c]).bit_count()
                over = (k.unseen & ABOVE[c]).bit_count()
                coverer_void = any(k.void_in(t ^ 2, s) for t in targets)
                key = (over == 0, coverer_void, under, -over)
                if best_key is None or key < best_key:
                    best, best_key = c, key
            return best
        wc = k.win_card
        follow = legal & SUIT_MASKS[k.lead_suit]
        still = k.still_to_play()
        if k.win_seat in targets:
            # The niler is winning: never overtake, keep under it.
            under = legal & ~beaters(legal, wc)
            if under:
                if follow:
                    return highest(under)
                return self._discard_keep_low(k, under)
            return lowest(legal)
        if any(t in still for t in targets):
            live = [t for t in targets if t in still]
            # Play under: keep the winning card low so the niler must go over it.
            if follow:
                return lowest(follow)
            side = legal & SIDE_MASK
            if side and not all(k.void_in(t, k.lead_suit) for t in live):
                return self._discard_keep_low(k, side)
            return -1
        return -1

    def _discard_keep_low(self, k: Knowledge, cards: int) -> Card:
        """Throw the highest side card, keeping low cards to lead under a niler."""
        side = cards & SIDE_MASK
        pool = side or cards
        best, best_key = -1, None
        m = pool
        while m:
            low = m & -m
            c = low.bit_length() - 1
            m ^= low
            key = (-_rank(c), (k.hand & SUIT_MASKS[c // 13]).bit_count())
            if best_key is None or key < best_key:
                best, best_key = c, key
        return best

    # ----- our contract --------------------------------------------------------------

    def contract_play(self, view: SeatView, k: Knowledge, legal: int) -> Card:
        want = self.desire(view, k)
        side = k.seat & 1
        if want == LOSE and k.need[side] > 0 and not legal & SIDE_MASK:
            want = WIN  # only spades left while we still need tricks: take them
        if k.position == 0:
            return self._lead_win(k, legal) if want == WIN else self._lead_lose(k, legal)
        return self._follow_win(k, legal) if want == WIN else self._follow_lose(k, legal)

    def _ruff_risk(self, k: Knowledge, suit: int) -> bool:
        """Could an opponent trump a lead of ``suit`` (known void, may hold spades)?"""
        for o in ((k.seat + 1) & 3, (k.seat + 3) & 3):
            if k.void_in(o, suit) and k.possible(o) & SPADE_MASK:
                return True
        return False

    def _lead_win(self, k: Knowledge, legal: int) -> Card:
        p = k.partner
        side_legal = legal & SIDE_MASK
        # 1. Partner asked for a suit (high-low doubleton) or shows a void: lead it
        #    for partner to trump.
        partner_cuts = (k.signalled(p) | k.voids[p]) & 0b0111
        if partner_cuts and not k.void_in(p, SPADES) and k.possible(p) & SPADE_MASK:
            for s in range(3):
                cards = legal & SUIT_MASKS[s]
                if (
                    partner_cuts >> s & 1
                    and cards
                    and not self._ruff_risk(k, s)
                    and not k.is_boss(highest(cards))
                ):
                    return lowest(cards)
        # 2. Cash side-suit bosses, the suit with the most unseen cards first.
        best, best_key = -1, None
        for s in range(3):
            cards = legal & SUIT_MASKS[s]
            if not cards:
                continue
            top = highest(cards)
            if k.is_boss(top) and not self._ruff_risk(k, s):
                key = -(k.unseen & SUIT_MASKS[s]).bit_count()
                if best_key is None or key < best_key:
                    best, best_key = top, key
        if best >= 0:
            return best
        # 3. Draw trumps with a boss spade when long in spades or nothing else.
        spades = legal & SPADE_MASK
        if spades:
            top = highest(spades)
            unseen_spades = (k.unseen & SPADE_MASK).bit_count()
            if (
                k.is_boss(top)
                and unseen_spades
                and ((k.hand & SPADE_MASK).bit_count() >= unseen_spades or not side_legal)
            ):
                return top
        if not side_legal:
            return highest(spades) if k.is_boss(highest(spades)) else lowest(spades)
        # 4. A short suit to ruff later, when spades are to spare.
        my_spades = (k.hand & SPADE_MASK).bit_count()
        if my_spades >= 2 and my_spades > k.sure:
            for s in range(3):
                cards = side_legal & SUIT_MASKS[s]
                if (
                    cards
                    and not cards & (cards - 1)
                    and not k.is_boss(cards.bit_length() - 1)
                    and not self._ruff_risk(k, s)
                ):
                    return lowest(cards)
        # 5. A safe lead: not from an unguarded honor, not into a ruff; low card.
        best, best_key = -1, None
        for s in range(3):
            cards = side_legal & SUIT_MASKS[s]
            if not cards:
                continue
            top = highest(cards)
            n = cards.bit_count()
            over = (k.unseen & ABOVE[top]).bit_count()
            unguarded = _rank(top) >= JACK and over > 0 and n <= over + 1
            touching = n >= 2 and over > 0 and (k.hand >> (top - 1) & 1) and _rank(top) >= JACK
            key = (self._ruff_risk(k, s), unguarded and not touching, -n)
            card = top if touching else lowest(cards)
            if best_key is None or key < best_key:
                best, best_key = card, key
        return best

    def _lead_lose(self, k: Knowledge, legal: int) -> Card:
        """Lead the card least likely to win: many unseen over it, few under."""
        best, best_key = -1, None
        for s in range(4):
            cards = legal & SUIT_MASKS[s]
            if not cards:
                continue
            c = lowest(cards)
            over = (k.unseen & ABOVE[c]).bit_count()
            under = (k.unseen & BELOW[c]).bit_count()
            key = (over == 0, s == SPADES, under, -over)
            if best_key is None or key < best_key:
                best, best_key = c, key
        return best

    def _follow_win(self, k: Knowledge, legal: int) -> Card:
        ls, wc = k.lead_suit, k.win_card
        still = k.still_to_play()
        follow = legal & SUIT_MASKS[ls]
        if k.win_seat == k.partner and k.holds(wc, still):
            # Partner's card holds: do not overtake.
            if follow:
                return self._low_or_signal(k, follow)
            return self._discard_win(k, legal)
        win = beaters(legal, wc)
        if follow:
            if not win:
                return self._low_or_signal(k, follow)
            if k.win_seat == k.partner:
                # Partner's card may be beaten: overtake only with a card that holds.
                holding = [c for c in _cards(win) if k.holds(c, still)]
                return holding[0] if holding else self._low_or_signal(k, follow)
            if k.position == 1:
                return self._low_or_signal(k, follow)  # second hand low
            return lowest(win)  # third / fourth hand: the cheapest winner
        # Void in the led suit.
        if not win:
            return self._discard_win(k, legal)
        if k.win_seat == k.partner:
            holding = [c for c in _cards(win) if k.holds(c, still)]
            return holding[0] if holding else self._discard_win(k, legal)
        # Trump economically: the lowest spade that wins; go higher only to hold.
        cheapest = lowest(win)
        if k.holds(cheapest, still):
            return cheapest
        holding = [c for c in _cards(win) if k.holds(c, still)]
        return holding[0] if holding else cheapest

    def _low_or_signal(self, k: Knowledge, follow: int) -> Card:
        """The lowest card, or the high-low doubleton signal (appendix D.3):
        first round of the suit, a doubleton under a boss, and spades to cut."""
        ls, wc = k.lead_suit, k.win_card
        if (
            ls != SPADES
            and follow.bit_count() == 2
            and k.suit_led_count[ls] == 0
            and k.hand & SPADE_MASK
            and k.is_boss(wc)
        ):
            high = highest(follow)
            if not beats(high, wc) and k.unseen & ABOVE[high]:
                return high
        return lowest(follow)

    def _discard_win(self, k: Knowledge, legal: int) -> Card:
        """Discard a loser: keep bosses and spades, throw the lowest side card,
        from the shortest suit (to make a void)."""
        side = legal & SIDE_MASK
        if not side:
            return lowest(legal)
        best, best_key = -1, None
        m = side
        while m:
            low = m & -m
            c = low.bit_length() - 1
            m ^= low
            key = (k.is_boss(c), _rank(c), (k.hand & SUIT_MASKS[c // 13]).bit_count())
            if best_key is None or key < best_key:
                best, best_key = c, key
        return best

    def _follow_lose(self, k: Knowledge, legal: int) -> Card:
        wc = k.win_card
        last = k.position == 3
        follow = legal & SUIT_MASKS[k.lead_suit]
        if follow:
            losers = follow & ~beaters(follow, wc)
            if losers:
                return highest(losers)  # duck with the highest card that loses
            # We win for now: last, shed the highest; else hope to be overtaken.
            return highest(follow) if last else lowest(follow)
        losers = legal & ~beaters(legal, wc)
        if losers:
            return self._most_dangerous(k, losers & SIDE_MASK or losers)
        return highest(legal) if last else lowest(legal)


def nil_shown(view: SeatView, seat: Seat) -> Hand:
    """The cards ``seat``, a nil bidder playing SRP's nil play (:meth:`SRP.nil_play`),
    showed it does not hold before it took a trick. It leads the lowest card of
    a suit (so none lower); following or discarding, it plays the highest card
    that still loses (so none of its suit over it that would also lose); and
    when every card of the led suit wins, it plays the lowest (the highest when
    last), none of which would have lost."""
    shown = 0
    tricks = [(t.leader, t.cards, t.winner) for t in view.tricks]
    for leader, cards, winner in [*tricks, (view.leader, tuple(view.trick), -1)]:
        i = (seat - leader) & 3
        if i < len(cards):
            card = cards[i]
            suit = SUIT_MASKS[card // 13]
            win = cards[0]
            for c in cards[1:i]:
                if beats(c, win):
                    win = c
            losers = suit & ~BEATERS[win]
            if i == 0:
                shown |= BELOW[card]
            elif not beats(card, win):
                shown |= ABOVE[card] & losers
            elif card // 13 == cards[0] // 13:
                shown |= losers | (BELOW[card] if i < 3 else ABOVE[card])
        if winner == seat:
            break
    return shown


def cover_risk(k: Knowledge, card: Card, counts: Sequence[int], shown: Hand = 0) -> float:
    """The chance that a lead of ``card`` forces the niling partner over it: partner
    holds a higher card of the suit and no lower one.

    Each unseen card partner may hold (not in a suit it showed void, not one
    its nil play showed it does not hold: ``shown``, :func:`nil_shown`) is
    taken to be partner's independently, with partner's share of the cards of
    the seats that may hold it (a seat known void in the suit holds none of
    it), weighted by ``NILER_HOLDS`` and scaled so that partner's cards add up
    to the number it holds. So a card whose higher cards are all known to be
    partner's (both opponents showed void) and with no lower card partner may
    hold scores 1: it can only win the trick for partner; a boss, or a suit
    partner cannot follow, scores 0.
    """
    suit = card // 13
    partner = k.partner
    opponents = k.possible((k.seat + 1) & 3) | k.possible((k.seat + 3) & 3)
    # A card only partner can hold stays partner's whatever its play showed.
    mine = k.possible(partner) & ~(shown & opponents)

    def share(s: int) -> float:
        """Partner's share of the unseen cards of suit ``s``."""
        total = sum(counts[o] for o in range(4) if o != k.seat and not k.void_in(o, s))
        return counts[partner] / total if total else 0.0

    # Scale the weights so that partner's cards add up to its hand.
    weight = 0.0
    m = mine & opponents
    while m:
        low = m & -m
        m ^= low
        c = low.bit_length() - 1
        weight += share(c // 13) * NILER_HOLDS[c]
    sure = (mine & ~opponents).bit_count()
    scale = max(0.0, counts[partner] - sure) / weight if weight > 0.0 else 1.0

    def none_of(cards: int) -> float:
        """P(partner holds none of ``cards``)."""
        p = 1.0
        while cards:
            low = cards & -cards
            cards ^= low
            c = low.bit_length() - 1
            if not low & opponents:
                return 0.0  # a card only partner can hold
            p *= 1.0 - min(1.0, share(c // 13) * NILER_HOLDS[c] * scale)
        return p

    if k.void_in(partner, suit) or not mine & SUIT_MASKS[suit]:
        # Partner holds none of the suit (shown void, or no card of it is left
        # that partner may hold): it discards, unless it holds nothing but
        # spades: then it must trump.
        if suit == SPADES or not mine & SPADE_MASK:
            return 0.0
        return none_of(mine & SIDE_MASK) * (1.0 - none_of(mine & SPADE_MASK))
    unseen = mine & SUIT_MASKS[suit]
    return (1.0 - none_of(unseen & ABOVE[card])) * none_of(unseen & BELOW[card])


def _cards(mask: int) -> list[Card]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
