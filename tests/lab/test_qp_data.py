"""QP's compiled training data (lab.training.qp_data): the same feature codes as the
numpy player's, labels that are the Spades score of a played-out round, determinism."""

from __future__ import annotations

import random

import numpy as np

from bots.learned.features import after_play_codes
from bots.registry import make_bot
from bots.srp_compiled import BIDS, DONE, play_card, state_of, sure_table
from game.engine.actions import Play
from game.engine.deal import deal_hands
from game.engine.fast_compiled import rules_array
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import view_for
from lab.training.qp_data import _outcome, after_codes, label_chunk

RULES = Rules(winning_goal=200, losing_goal=-100)


def test_the_compiled_codes_equal_the_players_codes_at_every_card_of_whole_rounds() -> None:
    bot = make_bot("BIS+SRP")
    compared = completed = 0
    for i in range(6):
        rng = random.Random(i)
        bags = (rng.randrange(10), rng.randrange(10))
        r = RoundState(RULES, i % 4, deal_hands(f"qp-codes/{i}"), bags_before=bags)
        while r.phase is not Phase.PLAYING:
            r.apply(bot.act(view_for(r, r.to_act), rng))
        order: list[tuple[int, int]] = []
        while r.phase is Phase.PLAYING:
            seat = r.to_act
            view = view_for(r, seat)
            cards = sorted(a.card for a in view.legal_actions if isinstance(a, Play))
            expected = after_play_codes(view, cards)
            for card, want in zip(cards, expected, strict=True):
                st = state_of(r)
                play_card(st, card)
                got = np.zeros_like(want)
                seq = [*order, (seat, card)]
                after_codes(
                    st, seat, np.array([c for _, c in seq]), np.array([s for s, _ in seq]),
                    len(seq), np.array(bags), got,
                )  # fmt: skip
                assert np.array_equal(got, want), (i, len(order), card)
                compared += 1
                completed += len(r.trick) == 3
            card = bot.act(view, rng).card
            order.append((seat, card))
            r.apply(Play(seat, card))
    assert compared > 6 * 52 and completed > 0


def test_a_label_is_the_score_of_the_round_played_out_by_srp_in_the_python_engine() -> None:
    bot = make_bot("BIS+SRP")
    rng = random.Random(3)
    r = RoundState(RULES, 1, deal_hands("qp-label"), bags_before=(8, 2))
    while r.phase is not Phase.PLAYING:
        r.apply(bot.act(view_for(r, r.to_act), rng))
    st, seat = state_of(r), r.to_act
    got = _outcome(
        st, seat, st[BIDS : BIDS + 4].copy(), np.zeros(4, dtype=np.int64), rules_array(RULES),
        np.array([8, 2]), np.zeros(4, dtype=np.int64), sure_table(),
    )  # fmt: skip
    assert st[DONE] == 13
    while r.phase is Phase.PLAYING:
        r.apply(Play(r.to_act, bot.player.play(view_for(r, r.to_act), rng)))
    assert r.result is not None
    p = seat & 1
    assert got == (r.result[p].points - r.result[1 - p].points) / 100


def test_a_chunk_is_the_same_from_the_same_seed_and_covers_its_decisions() -> None:
    a, b = label_chunk(1, 0, 4, 0.2), label_chunk(1, 0, 4, 0.2)
    for k in a:
        assert np.array_equal(a[k], b[k])
    assert len(a["types"]) == a["group"][-1] + 1 > 4 * 20
    assert (np.bincount(a["group"]) >= 2).all()  # only decisions with a choice
    assert not np.array_equal(a["x"], label_chunk(2, 0, 4, 0.2)["x"][: len(a["x"])])
