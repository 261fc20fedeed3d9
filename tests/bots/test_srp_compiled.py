"""The compiled SRP and playout (bots/srp_compiled.py) against the reference
(bots/srp.py, bots/knowledge.py, RoundState): the same card at every position,
the same knowledge, the same playout end. A change to SRP's rules fails here
until the compiled copy follows it."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bots import srp_compiled as sc
from bots.knowledge import Knowledge
from bots.srp import SRP
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import view_for
from tests.support.srp_positions import RULES, positions


@pytest.mark.parametrize("name", list(RULES))
def test_the_same_card_and_knowledge_as_the_reference(name: str) -> None:
    srp = SRP(cover_deals=0)  # the rule alone: what the compiled SRP plays
    sure_t = sc.sure_table()
    checked = 0
    for r, rng in positions(RULES[name], 60, name):
        view = view_for(r, r.to_act)
        st = sc.state_of(r)
        want = srp.play(view, rng)
        got = sc.srp_play(st, sure_t)
        assert got == want, (name, len(r.tricks), list(r.trick))
        sc.begin_decision(st)
        k = Knowledge(view)
        assert st[sc.UNSEEN] == k.unseen
        assert list(st[sc.VOIDS : sc.VOIDS + 4]) == k.voids
        assert list(st[sc.SIGNALS : sc.SIGNALS + 4]) == k.signals
        assert list(st[sc.ROUNDS : sc.ROUNDS + 4]) == k.suit_led_count
        assert (st[sc.WIN_CARD], st[sc.WIN_SEAT]) == (k.win_card, k.win_seat)
        assert tuple(st[sc.NEED : sc.NEED + 2]) == k.need
        assert sc.sure(st, sure_t) == k.sure
        checked += 1
    assert checked > 3000


def test_a_state_played_on_is_the_state_rebuilt() -> None:
    """play_card from the round's start reaches what state_of rebuilds from the tricks."""
    for r, _ in positions(Rules(), 10, "incremental"):
        if not r.tricks and not r.trick:
            st = sc.state_of(r)
        else:
            last = r.trick[-1] if r.trick else r.tricks[-1].cards[-1]
            sc.play_card(st, last)
        fresh = sc.state_of(r)
        assert list(st[: sc.SEAT]) == list(fresh[: sc.SEAT])


def _reference_play_out(r: RoundState, card: int, solver_k: int) -> RoundState:
    """UCT's Python playout (bots.uct.UCTSearch._play_out) up to the solve."""
    r = r.copy()
    r.play_card(card)
    srp = SRP(cover_deals=0)  # the rule alone: what the compiled SRP plays
    while r.phase is Phase.PLAYING and max(h.bit_count() for h in r.hands) > solver_k:
        r.play_card(srp.play(view_for(r, r.to_act), random.Random(0)))
    return r


def test_playouts_end_where_the_reference_ends() -> None:
    sure_t = sc.sure_table()
    out = np.zeros(sc.STATE_SIZE, dtype=np.int64)
    checked = 0
    for r, rng in positions(Rules(), 40, "playout"):
        legal = r.legal_play_mask()
        card = rng.choice([c for c in range(52) if legal >> c & 1])
        solver_k = rng.randint(1, 6)
        template = sc.state_from(
            r.rules, r.bids, r.tricks, r.trick, r.leader, r.tricks_won, r.spades_broken
        )
        hands = np.array(r.hands, dtype=np.int64)
        solved = sc.play_out(template, hands, card, solver_k, out, sure_t)
        want = _reference_play_out(r, card, solver_k)
        assert solved == (want.phase is Phase.PLAYING)
        assert list(out[:4]) == want.hands
        assert list(out[sc.WON : sc.WON + 4]) == want.tricks_won
        if solved:
            pos = int(out[sc.POS])
            assert out[sc.LEADER] == want.leader
            assert list(out[sc.TRICK : sc.TRICK + pos]) == want.trick
            assert bool(out[sc.BROKEN]) == want.spades_broken
        checked += 1
    assert checked > 1500
