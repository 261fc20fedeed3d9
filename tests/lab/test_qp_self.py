"""QP by self-play (lab.training.qp_self): the compiled self-play is QP at every
seat of the Python engine, its labels are λ-returns of the round's score, the
gauge is QP against the rule SRP, and training is seeded and resumable."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from bots.learned.features import PLAY_FEATURES, PLAY_SCALE, SPADES_FEATURES, after_play_codes
from bots.learned.mlp import load_mlp, read_mlp, shipped
from bots.learned.qp import QP, QP_SELF_WEIGHTS, QP_WEIGHTS
from bots.srp import SRP
from game.engine.actions import Play
from game.engine.state import Phase
from game.engine.view import view_for
from lab.training.qp_self import (
    RULES_ARRAY,
    bid_rounds,
    duel_round,
    gauge,
    net_arrays,
    selfplay,
)
from tests.support.qp_rounds import engine_round

NET = load_mlp(shipped(QP_SELF_WEIGHTS))  # the issue-46 self-play network


def test_greedy_self_play_is_qp_at_every_seat_and_the_last_labels_are_the_score() -> None:
    rounds = bid_rounds("qpself-test", 0, 4)
    got = selfplay(rounds, net_arrays(NET), explore=0.0, lam=0.5, seed=[1])
    x, y = got["x"], got["y"]
    assert len(got["bx"]) == 0  # nothing branched
    player, rng = QP(NET), random.Random(0)
    for j in range(4):
        r = engine_round("qpself-test", j)
        last: dict[int, int] = {}
        for n in range(52):
            view = view_for(r, r.to_act)
            card = player.play(view, rng)
            assert np.array_equal(x[52 * j + n], after_play_codes(view, [card])[0]), (j, n)
            last[r.to_act] = 52 * j + n
            r.apply(Play(r.to_act, card))
        assert r.result is not None
        for seat, row in last.items():
            p = seat & 1
            assert y[row] == pytest.approx((r.result[p].points - r.result[1 - p].points) / 100)


def test_labels_are_lambda_returns_of_the_seats_next_values() -> None:
    rounds = bid_rounds("qpself-lambda", 0, 2)
    net = net_arrays(NET)
    one, zero = (selfplay(rounds, net, explore=0.0, lam=lam, seed=[1]) for lam in (1.0, 0.0))
    x1, y1, x0, y0 = one["x"], one["y"], zero["x"], zero["y"]
    assert np.array_equal(x0, x1)  # greedy: λ changes the labels only
    values = NET((x0 * PLAY_SCALE)[:, : NET.inputs].astype(np.float32))[:, 0]
    for j in range(2):
        seat_rows: dict[int, list[int]] = {s: [] for s in range(4)}
        # who played each row: the same round in the engine (QP, as the first test holds)
        r = engine_round("qpself-lambda", j)
        player, rng = QP(NET), random.Random(0)
        for n in range(52):
            seat = r.to_act
            seat_rows[seat].append(52 * j + n)
            r.apply(Play(seat, player.play(view_for(r, seat), rng)))
        for rows in seat_rows.values():
            assert len(set(y1[rows].tolist())) == 1  # λ = 1: the round's score everywhere
            assert y0[rows[-1]] == y1[rows[-1]]
            # λ = 0: the value of the seat's next (greedy, so best) after-state
            assert np.allclose(y0[rows[:-1]], values[rows[1:]], atol=1e-4)


def test_exploration_is_seeded_and_changes_the_play() -> None:
    rounds = bid_rounds("qpself-explore", 0, 3)
    net = net_arrays(NET)
    a = selfplay(rounds, net, explore=0.3, lam=0.7, seed=[2])
    b = selfplay(rounds, net, explore=0.3, lam=0.7, seed=[2])
    greedy = selfplay(rounds, net, explore=0.0, lam=0.7, seed=[2])
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["x"], greedy["x"])


@pytest.mark.parametrize("symmetric", [False, True])
def test_the_gauge_is_qp_against_the_rule_srp_with_the_partnerships_swapped(
    symmetric: bool,
) -> None:
    from bots.srp_compiled import sure_table

    rounds = bid_rounds("qpself-gauge-test", 0, 3)
    net, rule = net_arrays(NET, symmetric), SRP(cover_deals=0)
    player = QP(NET, symmetric=symmetric)
    total = 0.0
    for j in range(3):
        for side in (0, 1):
            got = duel_round(
                rounds["states"][j].copy(), rounds["blind"][j], rounds["bags"][j], RULES_ARRAY,
                net, side, sure_table(),
            )  # fmt: skip
            r, rng = engine_round("qpself-gauge-test", j), random.Random(0)
            while r.phase is Phase.PLAYING:
                view = view_for(r, r.to_act)
                who = player if (r.to_act & 1) == side else rule
                r.apply(Play(r.to_act, who.play(view, rng)))
            assert r.result is not None
            assert got == r.result[side].points - r.result[1 - side].points
            total += got / 2
    assert gauge(rounds, net)["gap"] == pytest.approx(total / 3)


@pytest.mark.usefixtures("torch_installed")
def test_training_is_reproducible_and_resumes_to_the_same_weights(tmp_path: Path) -> None:
    from lab.training.qp_self import train
    from lab.training.train import TrainError

    settings = dict(
        seed=3, rounds=6, pool=12, explore=0.1, lam=0.7, steps=3, batch=64, lr=1e-3,
        buffer=2, hidden=(16, 8), gauge_deals=4, gauge_every=2,
    )  # fmt: skip
    deals = tmp_path / "deals"
    a, info = train(deals, tmp_path / "a", iterations=4, checkpoint=tmp_path / "a.pt", **settings)
    b, _ = train(deals, tmp_path / "b", iterations=4, checkpoint=tmp_path / "b.pt", **settings)
    assert a.checksum == b.checksum
    assert info["history"]["gauge_at"] == [2, 4] and len(info["history"]["loss"]) == 4
    train(deals, tmp_path / "c", iterations=1, checkpoint=tmp_path / "c.pt", **settings)
    c, resumed = train(
        deals, tmp_path / "c", iterations=4, checkpoint=tmp_path / "c.pt", **settings
    )
    assert c.checksum == a.checksum and resumed["history"]["loss"] == info["history"]["loss"]
    d, _ = train(
        deals, tmp_path / "d", iterations=4, checkpoint=tmp_path / "d.pt", **{**settings, "seed": 4}
    )
    assert d.checksum != a.checksum
    a.save(tmp_path / "qp_self.npz")
    assert read_mlp(tmp_path / "qp_self.npz").checksum == a.checksum
    # --init: the run starts from those weights (a learning rate of 0 keeps them)
    same, _ = train(
        deals, tmp_path / "f", iterations=1, checkpoint=tmp_path / "f.pt",
        **{**settings, "lr": 0.0}, init=a,
    )  # fmt: skip
    assert same.checksum == a.checksum
    # issue 62: runs read the first 292 inputs unless told (a, the shipped runs'),
    # and one on all 300 from a's weights values the new inputs at nothing at first
    assert a.inputs == SPADES_FEATURES
    narrow = a
    wide, _ = train(
        deals, tmp_path / "w", iterations=1, checkpoint=tmp_path / "w.pt",
        **{**settings, "lr": 0.0}, init=narrow, inputs=PLAY_FEATURES,
    )  # fmt: skip
    assert wide.inputs == PLAY_FEATURES and not wide.layers[0][0][SPADES_FEATURES:].any()
    assert np.array_equal(wide.layers[0][0][:SPADES_FEATURES], narrow.layers[0][0])
    with pytest.raises(TrainError, match="initial weights"):
        train(
            deals, tmp_path / "g", iterations=1, checkpoint=tmp_path / "g.pt",
            **{**settings, "hidden": (8, 8)}, init=a,
        )  # fmt: skip
    with pytest.raises(TrainError, match="between 0 and 1"):
        train(
            deals, tmp_path / "e", iterations=1, checkpoint=tmp_path / "e.pt",
            **{**settings, "lam": 1.5},
        )  # fmt: skip
    with pytest.raises(TrainError, match="at least --rounds"):
        train(
            deals, tmp_path / "e", iterations=1, checkpoint=tmp_path / "e.pt",
            **{**settings, "pool": 4},
        )  # fmt: skip


def test_a_branched_decision_labels_every_legal_card_as_the_played_one_is_labelled() -> None:
    rounds = bid_rounds("qpself-branch", 0, 2)
    net = net_arrays(NET)
    plain = selfplay(rounds, net, explore=0.0, lam=0.0, seed=[1])
    got = selfplay(rounds, net, explore=0.0, lam=0.0, seed=[1], branch=1.0)
    assert np.array_equal(got["x"], plain["x"]) and np.array_equal(got["y"], plain["y"])
    groups = np.split(np.arange(len(got["bg"])), np.flatnonzero(np.diff(got["bg"])) + 1)
    assert 2 * 30 < len(groups) < 2 * 52  # every decision with a choice
    played = {plain["x"][n].tobytes(): n for n in range(len(plain["x"]))}
    for rows in groups:
        assert len(rows) >= 2 and len({got["bx"][r].tobytes() for r in rows}) == len(rows)
        mine = [r for r in rows if got["bx"][r].tobytes() in played]
        assert len(mine) == 1  # the card played is one of them, labelled as λ = 0 labels it
        assert got["by"][mine[0]] == pytest.approx(plain["y"][played[got["bx"][mine[0]].tobytes()]])


@pytest.mark.usefixtures("torch_installed")
def test_the_command_trains_saves_plots_and_refuses_bad_settings(tmp_path: Path) -> None:
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    out, plot = tmp_path / "qp_self.npz", tmp_path / "curve.png"
    tiny = ["--rounds", "4", "--pool", "8", "--steps", "2", "--batch", "32", "--hidden", "8,8",
            "--gauge-deals", "3", "--gauge-every", "1", "--seed", "5",
            "--output", str(out)]  # fmt: skip
    said = StringIO()
    call_command("train_qp_self", "--iterations", "2", *tiny, "--plot", str(plot), stdout=said,
                 stderr=StringIO())  # fmt: skip
    saved = read_mlp(out)
    assert saved.meta["bot"] == "QP" and saved.meta["lambda"] == 0.7
    assert saved.meta["history"]["gauge_at"] == [1, 2] and plot.stat().st_size > 0
    assert f"sha256 {saved.checksum}" in said.getvalue()
    assert (tmp_path / "qp_self.npz.rows").is_dir() and (tmp_path / "qp_self.npz.data").is_dir()
    report = StringIO()
    call_command("train_qp_self", "--report", str(out), stdout=report)
    assert "lambda: 0.7" in report.getvalue()
    with pytest.raises(CommandError, match="between 0 and 1"):
        call_command("train_qp_self", *tiny, "--explore", "2", stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match="--hidden"):
        call_command("train_qp_self", *tiny, "--hidden", "a,b", stdout=StringIO())
    with pytest.raises(CommandError, match="not a network weights file"):
        call_command("train_qp_self", *tiny, "--init", str(plot), stdout=StringIO())


def test_widened_weights_value_the_issue_62_inputs_at_nothing() -> None:
    from lab.training.train import TrainError, widen

    wide = widen(NET, PLAY_FEATURES)
    assert wide.inputs == PLAY_FEATURES and wide.meta["widened_from"] == NET.checksum
    x = np.random.default_rng(0).random((5, PLAY_FEATURES)).astype(np.float32)
    assert np.allclose(wide(x), NET(x[:, : NET.inputs]), atol=1e-5)
    with pytest.raises(TrainError):
        widen(wide, NET.inputs)


def test_the_gauge_command_compares_networks_deal_by_deal(tmp_path) -> None:
    import io

    from django.core.management import call_command

    out, printed = tmp_path / "g.json", io.StringIO()
    trick = shipped(QP_WEIGHTS)
    call_command(
        "qp_gauge", "--weights", trick, "--weights", trick, "--weights", shipped(QP_SELF_WEIGHTS),
        "--deals", "6", "--data", str(tmp_path / "deals"), "--output", str(out), stdout=printed,
    )  # fmt: skip
    got = json.loads(out.read_text())
    first, same, other = got["networks"]
    assert got["deals"] == 6 and first["gap"] == same["gap"]
    assert "less_the_first" not in first and same["less_the_first"] == [0.0, 0.0]
    assert other["sha256"] != first["sha256"]
    assert abs(other["less_the_first"][0] - (other["gap"][0] - first["gap"][0])) < 0.002
    assert printed.getvalue().count("points a round") == 3
    call_command(
        "qp_gauge", "--weights", trick, "--deals", "6", "--data", str(tmp_path / "deals"),
        "--symmetric", "--output", str(out), stdout=printed,
    )  # fmt: skip
    plain, averaged = json.loads(out.read_text())["networks"]
    assert (plain["symmetric"], averaged["symmetric"]) == (False, True)
    assert plain["gap"] == first["gap"] and averaged["sha256"] == first["sha256"]
    assert "(suits averaged)" in printed.getvalue()
