"""QP compiled (lab.training.qp_compiled) against the numpy player (bots.learned.qp):
the same inputs, the same values up to rounding, the same card; and QP as the
roll-out policy of the labelled rounds (lab.training.qp_data), seeded."""

from __future__ import annotations

import random

import numpy as np
import pytest

from bots.learned.features import PLAY_FEATURES, PLAY_SCALE, after_play_states
from bots.learned.mlp import MLP, load_mlp, shipped
from bots.learned.qp import QP, QP_WEIGHTS
from bots.registry import make_bot
from bots.srp_compiled import STATE_SIZE, play_card, state_of
from game.engine.actions import Play
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import view_for
from lab.training.qp_compiled import (
    CompiledQP,
    after_codes,
    card_values,
    expand,
    qp_card,
    values,
)
from lab.training.qp_data import label_chunk

RULES = Rules(winning_goal=200, losing_goal=-100)


def positions(rounds: int, seed: str):
    """Every decision of ``rounds`` rounds bid by BIS and played by SRP with a
    random card a quarter of the time: (view, state array, cards before, bags)."""
    bot = make_bot("BIS+SRP")
    for i in range(rounds):
        rng = random.Random(f"{seed}/{i}")
        bags = (rng.randrange(10), rng.randrange(10))
        r = RoundState(RULES, i % 4, deal_hands(f"{seed}/{i}"), bags_before=bags)
        while r.phase is not Phase.PLAYING:
            r.apply(bot.act(view_for(r, r.to_act), rng))
        order: list[tuple[int, int]] = []
        while r.phase is Phase.PLAYING:
            view = view_for(r, r.to_act)
            yield view, state_of(r), order, np.array(bags, dtype=np.int64)
            legal = [a.card for a in view.legal_actions if isinstance(a, Play)]
            card = rng.choice(legal) if rng.random() < 0.25 else bot.player.play(view, rng)
            order.append((r.to_act, card))
            r.apply(Play(r.to_act, card))


def _orders(order: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    cards, seats = np.zeros(52, dtype=np.int64), np.zeros(52, dtype=np.int64)
    for i, (s, c) in enumerate(order):
        cards[i], seats[i] = c, s
    return cards, seats


def test_the_compiled_inputs_and_values_equal_numpys_on_random_positions() -> None:
    net = load_mlp(shipped(QP_WEIGHTS))
    c = CompiledQP(net)
    x = np.zeros(PLAY_FEATURES, dtype=np.float32)
    worst = compared = 0
    for view, st, order, bags in positions(12, "qpc-values"):
        cards = sorted(a.card for a in view.legal_actions if isinstance(a, Play))
        want_x = after_play_states(view, cards)
        want_v = net(want_x[:, : net.inputs])[:, 0]  # the shipped QP: the first 292
        order_card, order_seat = _orders(order)
        for k, card in enumerate(cards):
            s = st.copy()
            play_card(s, card)
            order_card[len(order)], order_seat[len(order)] = card, view.seat
            after_codes(s, view.seat, order_card, order_seat, len(order) + 1, bags, c.codes[k])
            expand(c.codes[k], PLAY_SCALE, PLAY_FEATURES, x)  # all 300, issue 62's too
            assert np.array_equal(x, want_x[k])
            compared += 1
        got = np.zeros(len(cards), dtype=np.float32)
        values(c.codes, len(cards), c.scale, c.ws, c.bs, c.h_a, c.h_b, got)
        worst = max(worst, float(np.abs(got - want_v).max()))
    assert compared > 12 * 52 and worst < 1e-5


@pytest.mark.parametrize("symmetric", [False, True])
def test_the_compiled_card_is_the_numpy_players_card(symmetric: bool) -> None:
    net = load_mlp(shipped(QP_WEIGHTS))
    c = CompiledQP(net, symmetric)
    player = QP(net, symmetric=symmetric)
    scratch = np.zeros(STATE_SIZE, dtype=np.int64)
    compared = near_ties = 0
    for view, st, order, bags in positions(40, "qpc-cards"):
        cards = sorted(a.card for a in view.legal_actions if isinstance(a, Play))
        want = player.play(view, random.Random(0))
        order_card, order_seat = _orders(order)
        got = qp_card(
            st, order_card, order_seat, len(order), bags, c.scale, c.ws, c.bs, scratch,
            c.codes, c.h_a, c.h_b, c.perms,
        )  # fmt: skip
        if got != want:  # only where numpy's two best values are within rounding
            v = np.sort(player.values(view, cards))
            assert v[-1] - v[-2] < 1e-5, (view.seat, got, want)
            near_ties += 1
        compared += 1
    assert compared == 40 * 52 and near_ties <= 2


def test_the_compiled_symmetric_values_are_the_numpy_players() -> None:
    net = load_mlp(shipped(QP_WEIGHTS))
    c, player = CompiledQP(net, symmetric=True), QP(net, symmetric=True)
    worst = 0.0
    for view, st, order, bags in positions(4, "qpc-sym"):
        cards = sorted(a.card for a in view.legal_actions if isinstance(a, Play))
        order_card, order_seat = _orders(order)
        for k, card in enumerate(cards):
            s = st.copy()
            play_card(s, card)
            order_card[len(order)], order_seat[len(order)] = card, view.seat
            after_codes(s, view.seat, order_card, order_seat, len(order) + 1, bags, c.codes[k])
        got = card_values(c.codes, len(cards), c.perms, c.scale, c.ws, c.bs, c.h_a, c.h_b)
        want = player.values(view, cards)
        worst = max(worst, float(np.abs(got[: len(cards)] - want).max()))
    assert worst < 1e-5


@pytest.mark.parametrize("inputs", [164, PLAY_FEATURES])
def test_a_narrower_network_and_the_plain_inputs_run_compiled(inputs: int) -> None:
    rng = np.random.default_rng(0)
    layers = [
        (rng.normal(size=(inputs, 8)).astype(np.float32), rng.normal(size=8).astype(np.float32)),
        (rng.normal(size=(8, 1)).astype(np.float32), rng.normal(size=1).astype(np.float32)),
    ]
    net = MLP(layers)
    c = CompiledQP(net)
    for view, st, order, bags in positions(1, "qpc-plain"):
        cards = sorted(a.card for a in view.legal_actions if isinstance(a, Play))
        want = net(after_play_states(view, cards, inputs))[:, 0]
        order_card, order_seat = _orders(order)
        for k, card in enumerate(cards):
            s = st.copy()
            play_card(s, card)
            order_card[len(order)], order_seat[len(order)] = card, view.seat
            after_codes(s, view.seat, order_card, order_seat, len(order) + 1, bags, c.codes[k])
        got = np.zeros(len(cards), dtype=np.float32)
        values(c.codes, len(cards), c.scale, c.ws, c.bs, c.h_a, c.h_b, got)
        assert np.abs(got - want).max() < 1e-4


def test_qp_as_the_roll_out_policy_labels_other_deals_the_same_from_the_same_seed() -> None:
    net = load_mlp(shipped(QP_WEIGHTS))
    a, b = label_chunk(1, 0, 2, 0.1, rollout=net), label_chunk(1, 0, 2, 0.1, rollout=net)
    for k in a:
        assert np.array_equal(a[k], b[k])
    srp = label_chunk(1, 0, 2, 0.1)
    assert not np.array_equal(a["x"][:100], srp["x"][:100])  # other deals
    assert len(a["types"]) == a["group"][-1] + 1 > 2 * 20
    # The roll-out policy's card is QP's: its row has the highest value of its decision.
    starts = np.searchsorted(a["group"], np.arange(a["group"][-1] + 2))
    q = net((a["x"] * PLAY_SCALE)[:, : net.inputs])[:, 0]
    for d in range(len(a["types"])):
        lo, hi = starts[d], starts[d + 1]
        assert q[lo + a["srp"][d]] >= q[lo:hi].max() - 1e-5


def test_a_mix_of_qp_and_srp_rolling_out_is_seeded_and_played_on_its_own_deals() -> None:
    net = load_mlp(shipped(QP_WEIGHTS))
    a = label_chunk(1, 0, 2, 0.1, rollout=net, srp_share=0.5)
    b = label_chunk(1, 0, 2, 0.1, rollout=net, srp_share=0.5)
    for k in a:
        assert np.array_equal(a[k], b[k])
    pure = label_chunk(1, 0, 2, 0.1, rollout=net)
    assert not np.array_equal(a["x"][:100], pure["x"][:100])
