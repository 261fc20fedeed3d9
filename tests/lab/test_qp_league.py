"""QP's league (lab.training.qp_league, issue 62): the learner at one partnership
against SRP or an earlier network is what the Python engine plays, only the
learner's seats give rows, their labels are λ-returns of its side's score, and
the opponents are drawn as the shares say; the match-situation pool has scores
and blind nils."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import numpy as np
import pytest

from bots.learned.features import PLAY_FEATURES, PLAY_SCALE, after_play_codes
from bots.learned.mlp import load_mlp, read_mlp, shipped
from bots.learned.qp import QP, QP_SELF_WEIGHTS, QP_SRP_WEIGHTS
from bots.srp import SRP
from bots.srp_compiled import sure_table
from game.engine.actions import Play
from game.engine.state import Phase, RoundState
from game.engine.view import view_for
from lab.training.qp_league import (
    SELF,
    SRP_OPPONENT,
    League,
    league_play,
    opponents_of,
    versus_round,
)
from lab.training.qp_self import RULES_ARRAY, bid_rounds, net_arrays
from tests.support.qp_rounds import engine_round

NET = load_mlp(shipped(QP_SELF_WEIGHTS))  # the issue-46 self-play network
OTHER = load_mlp(shipped(QP_SRP_WEIGHTS))


def no_branch() -> tuple:
    """Empty branch rows and the first decision's number, for a round not branched."""
    return (np.zeros((0, PLAY_FEATURES), np.uint8), np.zeros(0, np.float32),
            np.zeros(0, np.int64), 0)  # fmt: skip


@pytest.mark.parametrize("opponent", ["SRP", "network"])
def test_the_learner_plays_one_partnership_and_only_its_seats_give_rows(opponent: str) -> None:
    rounds = bid_rounds("qpleague-test", 0, 3)
    me, opp = net_arrays(NET), net_arrays(OTHER)
    rng = np.zeros(1, dtype=np.uint64)
    for j in range(3):
        for side in (0, 1):
            x = np.zeros((52, PLAY_FEATURES), dtype=np.uint8)
            y = np.zeros(52, dtype=np.float32)
            n, branched, _ = versus_round(
                rounds["states"][j].copy(), rounds["blind"][j], rounds["bags"][j], RULES_ARRAY,
                me, opp, opponent == "SRP", side, 0.0, 1.0, rng, x, y, sure_table(),
                0.0, *no_branch(),
            )  # fmt: skip
            assert n == 26 and branched == 0
            r, pick = engine_round("qpleague-test", j), random.Random(0)
            them = SRP(cover_deals=0) if opponent == "SRP" else QP(OTHER)
            learner, k = QP(NET), 0
            while r.phase is Phase.PLAYING:
                view = view_for(r, r.to_act)
                if (r.to_act & 1) == side:
                    card = learner.play(view, pick)
                    assert np.array_equal(x[k], after_play_codes(view, [card])[0]), (j, side, k)
                    k += 1
                else:
                    card = them.play(view, pick)
                r.apply(Play(r.to_act, card))
            assert r.result is not None and k == 26
            # λ = 1: every row carries the learner's side's score
            score = (r.result[side].points - r.result[1 - side].points) / 100
            assert np.allclose(y[:26], score)


def test_the_labels_are_lambda_returns_of_the_learner_seats_next_values() -> None:
    rounds = bid_rounds("qpleague-lambda", 0, 2)
    who = np.array([SRP_OPPONENT, SRP_OPPONENT])
    me = net_arrays(NET)
    one = league_play(rounds, me, [], who, 0.0, 1.0, [1])
    zero = league_play(rounds, me, [], who, 0.0, 0.0, [1])
    assert len(one["x"]) == 52 and np.array_equal(one["x"], zero["x"])
    v = NET((zero["x"] * PLAY_SCALE)[:, : NET.inputs].astype(np.float32))[:, 0]
    for j in range(2):
        r = engine_round("qpleague-lambda", j)
        side, learner, them, pick = j & 1, QP(NET), SRP(cover_deals=0), random.Random(0)
        seat_rows: dict[int, list[int]] = {side: [], side + 2: []}
        k = 26 * j
        while r.phase is Phase.PLAYING:
            seat = r.to_act
            view = view_for(r, seat)
            if (seat & 1) == side:
                seat_rows[seat].append(k)
                k += 1
                r.apply(Play(seat, learner.play(view, pick)))
            else:
                r.apply(Play(seat, them.play(view, pick)))
        for rows in seat_rows.values():
            assert len(rows) == 13 and zero["y"][rows[-1]] == one["y"][rows[-1]]
            assert np.allclose(zero["y"][rows[:-1]], v[rows[1:]], atol=1e-4)


@pytest.mark.parametrize("opponent", ["SRP", "network"])
def test_a_branched_decision_labels_every_legal_card_by_its_round_played_out(
    opponent: str,
) -> None:
    """Every legal card of a learner's decision, played on the true deal and the round
    played on by the learner and the opponent (the Python players), ends with the
    score its row is labelled with; the rounds' own rows are those of a run
    without branching."""
    rounds = bid_rounds("qpleague-branch", 0, 2)
    me, opp = net_arrays(NET), net_arrays(OTHER)
    who = np.full(2, SRP_OPPONENT if opponent == "SRP" else 0)
    plain = league_play(rounds, me, [opp], who, 0.0, 0.7, [1])
    got = league_play(rounds, me, [opp], who, 0.0, 0.7, [1], branch=1.0)
    assert np.array_equal(got["x"], plain["x"]) and np.array_equal(got["y"], plain["y"])
    groups = np.split(np.arange(len(got["bg"])), np.flatnonzero(np.diff(got["bg"])) + 1)
    assert np.array_equal(np.unique(got["bg"]), np.arange(len(groups)))

    def them() -> object:
        return SRP(cover_deals=0) if opponent == "SRP" else QP(OTHER)

    def finish(r: RoundState, side: int) -> float:
        learner, other, pick = QP(NET), them(), random.Random(0)
        while r.phase is Phase.PLAYING:
            view = view_for(r, r.to_act)
            player = learner if (r.to_act & 1) == side else other
            r.apply(Play(r.to_act, player.play(view, pick)))
        assert r.result is not None
        return (r.result[side].points - r.result[1 - side].points) / 100

    g = 0
    for j in range(2):
        r, side = engine_round("qpleague-branch", j), j & 1
        learner, other, pick = QP(NET), them(), random.Random(0)
        while r.phase is Phase.PLAYING:
            seat, view = r.to_act, view_for(r, r.to_act)
            if (seat & 1) != side:
                r.apply(Play(seat, other.play(view, pick)))
                continue
            cards = sorted(a.card for a in view.legal_actions if isinstance(a, Play))
            if len(cards) > 1:
                rows = groups[g]
                g += 1
                assert len(rows) == len(cards)
                for row, card in zip(rows, cards, strict=True):
                    assert np.array_equal(got["bx"][row], after_play_codes(view, [card])[0])
                    branch = copy.deepcopy(r)
                    branch.apply(Play(seat, card))
                    assert got["by"][row] == pytest.approx(finish(branch, side), abs=1e-6)
            r.apply(Play(seat, learner.play(view, pick)))
    assert g == len(groups) > 2 * 15


def test_opponents_are_drawn_by_the_shares_and_seeded() -> None:
    who = opponents_of(20_000, 0.3, 0.5, 3, [1, 2])
    assert np.array_equal(who, opponents_of(20_000, 0.3, 0.5, 3, [1, 2]))
    assert abs((who == SRP_OPPONENT).mean() - 0.3) < 0.02
    assert abs((who >= 0).mean() - 0.5) < 0.02 and set(who[who >= 0].tolist()) == {0, 1, 2}
    assert abs((who == SELF).mean() - 0.2) < 0.02
    alone = opponents_of(1000, 0.3, 0.5, 0, [1])  # an empty league: self-play instead
    assert not (alone >= 0).any() and (alone == SELF).any()
    mixed = league_play(bid_rounds("qpleague-mix", 0, 4), net_arrays(NET),
                        [net_arrays(OTHER)], np.array([SELF, SRP_OPPONENT, 0, SELF]),
                        0.05, 0.7, [3])  # fmt: skip
    assert len(mixed["x"]) == 52 + 26 + 26 + 52 and len(mixed["bx"]) == 0
    both = league_play(bid_rounds("qpleague-mix", 0, 4), net_arrays(NET),
                       [net_arrays(OTHER)], np.array([SELF, SRP_OPPONENT, 0, SELF]),
                       0.05, 0.7, [3], branch=0.5)  # fmt: skip
    decisions = np.unique(both["bg"])  # numbered in order over the rounds of both kinds
    assert np.array_equal(decisions, np.arange(len(decisions))) and len(decisions) > 20


def test_match_situations_draw_scores_and_bring_blind_nils() -> None:
    plain = bid_rounds("qpleague-match", 0, 60)
    match = bid_rounds("qpleague-match", 0, 60, match=True)
    assert not plain["blind"].any()
    # the same deals and bags, other bids: BIS sees the scores
    assert np.array_equal(plain["bags"], match["bags"])
    assert match["blind"].any()


@pytest.mark.usefixtures("torch_installed")
def test_league_training_is_reproducible_resumes_and_keeps_snapshots(tmp_path: Path) -> None:
    from lab.training.qp_self import train
    from lab.training.train import TrainError

    settings = dict(
        seed=3, rounds=6, pool=12, explore=0.1, lam=0.7, steps=3, batch=64, lr=1e-3,
        buffer=2, hidden=(16, 8), gauge_deals=2, gauge_every=2, match=True,
    )  # fmt: skip

    def league() -> League:  # a fresh one a run: a resumed run reads its snapshots back
        return League(0.4, 0.4, 1)

    deals = tmp_path / "deals"
    a, info = train(deals, tmp_path / "a", iterations=3, checkpoint=tmp_path / "a.pt",
                    opponents=league(), **settings)  # fmt: skip
    assert info["league_every"] == 1 and (tmp_path / "a" / "snap_2.npz").exists()
    train(deals, tmp_path / "c", iterations=1, checkpoint=tmp_path / "c.pt",
          opponents=league(), **settings)  # fmt: skip
    c, _ = train(deals, tmp_path / "c", iterations=3, checkpoint=tmp_path / "c.pt",
                 opponents=league(), **settings)  # fmt: skip
    assert c.checksum == a.checksum
    plain, _ = train(deals, tmp_path / "p", iterations=3, checkpoint=tmp_path / "p.pt", **settings)
    assert plain.checksum != a.checksum
    assert read_mlp(tmp_path / "a" / "snap_1.npz").checksum != a.checksum
    with pytest.raises(TrainError, match="shares"):
        League(0.7, 0.4, 1)
    branched, _ = train(deals, tmp_path / "b", iterations=2, checkpoint=tmp_path / "b.pt",
                        opponents=league(), **{**settings, "branch": 0.5})  # fmt: skip
    assert branched.checksum != a.checksum
    with np.load(tmp_path / "b" / "iter_1.npz") as rows:
        assert len(rows["bx"]) > 0 and len(rows["bx"]) == len(rows["by"]) == len(rows["bg"])
