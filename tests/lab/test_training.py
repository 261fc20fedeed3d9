"""Training the learned bots (with the train extra: short runs of train_nnb, train_spb and
train_qp), the games-log report (bid_stats) and the learned bots in a tournament and in
bench_bots."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command

from bots.learned import features
from bots.learned.bidders import NNB, SPB
from bots.learned.mlp import MLP, read_mlp
from bots.learned.qp import QP
from lab.training.analysis import bid_stats
from tests.support.learned_views import bid_views, play_views


def test_bid_stats_count_sets_and_tricks_minus_bid_by_side() -> None:
    rounds = [{"bids": [3, 2, 4, 0], "tricks": [2, 5, 4, 2]}]
    games = [{"swapped": False, "rounds": rounds}, {"swapped": True, "rounds": rounds}]
    a, b = bid_stats(games)
    # N/S (3, 4) took 6 of 7: set; E/W bid 2 with a nil, the 2-bidder took 5: made.
    assert a["contracts"] == 2 and a["set_rate"] == 0.5
    assert a["histogram"] == {"-1": 1, "0": 1, "3": 1}
    assert b["histogram"] == a["histogram"] and b["set_rate"] == 0.5


@pytest.mark.usefixtures("torch_installed")
def test_train_nnb_lowers_the_loss_resumes_and_reloads_with_identical_bids(
    tmp_path: Path,
) -> None:
    data = tmp_path / "nnb.samples.jsonl"
    common = ["--rounds", "40", "--chunk-rounds", "20", "--workers", "1", "--seed", "3",
              "--data", str(data)]  # fmt: skip
    out = tmp_path / "nnb.npz"
    call_command("train_nnb", *common, "--epochs", "3", "--output", str(out))
    call_command("train_nnb", *common, "--epochs", "6", "--output", str(out))  # resumed
    straight = tmp_path / "straight.npz"
    call_command("train_nnb", *common, "--epochs", "6", "--output", str(straight), "--plot",
                 str(tmp_path / "loss.png"))  # fmt: skip
    net = read_mlp(out)
    hist = net.meta["history"]
    assert net.meta["seed"] == 3 and net.meta["rounds"] == 40 and len(hist["train"]) == 6
    assert hist["train"][-1] < hist["train"][0]
    assert net.checksum == read_mlp(straight).checksum  # a resumed run ends where one run does
    assert (tmp_path / "loss.png").stat().st_size > 1000
    # The numpy forward pass of the file equals PyTorch's on the trained weights.
    from lab.training.train import make_net, torch

    t = torch()
    state = t.load(out.with_name(out.name + ".ckpt.pt"), weights_only=False)
    model = make_net((features.BID_FEATURES, 64, 32, 1), 0)
    model.load_state_dict(state["model"])
    views = bid_views(15)
    x = np.stack([features.view_bid_features(v) for v in views])
    with t.no_grad():
        expected = model(t.from_numpy(x)).numpy()
    assert np.allclose(net(x), expected, atol=1e-5)
    loaded, again = NNB(str(out)), NNB(MLP(net.layers))
    for view in views:
        assert loaded.bid(view, random.Random(0)) == again.bid(view, random.Random(0))


@pytest.mark.usefixtures("torch_installed")
def test_train_spb_learns_to_beat_its_first_version_and_reloads_with_identical_bids(
    tmp_path: Path,
) -> None:
    from lab.training.train import train_spb

    # The same 16 deals every step and no snapshot into the pool: the opponent stays
    # the untrained policy, so the loss (minus the reward) must fall.
    net, info = train_spb(
        seed=3, iterations=10, batch=16, lr=1e-2, snapshot_every=100, same_deals=True,
        checkpoint=tmp_path / "spb.ckpt",
    )  # fmt: skip
    reward = info["history"]["reward"]
    assert len(reward) == 10
    assert np.mean(reward[-3:]) > np.mean(reward[:3]) + 0.3
    net.save(tmp_path / "spb.npz")
    a, b = SPB(net), SPB(str(tmp_path / "spb.npz"))
    for view in bid_views(15):
        assert a.bid(view, random.Random(0)) == b.bid(view, random.Random(0))


@pytest.mark.usefixtures("torch_installed")
def test_train_qp_is_reproducible_resumes_from_its_data_and_reloads_with_identical_plays(
    tmp_path: Path,
) -> None:
    args = ["--rounds", "8", "--chunk", "4", "--batch", "16", "--hidden", "16,8", "--seed", "2"]
    call_command("train_qp", *args, "--epochs", "3", "--data", str(tmp_path / "d1"),
                 "--output", str(tmp_path / "a.npz"))  # fmt: skip
    assert len(list((tmp_path / "d1").iterdir())) == 2  # two chunks of labelled rounds
    # Other data folder (the rounds made again), and a run stopped after 2 epochs, resumed.
    for epochs in ("2", "3"):
        call_command("train_qp", *args, "--epochs", epochs, "--data", str(tmp_path / "d2"),
                     "--output", str(tmp_path / "b.npz"))  # fmt: skip
    a, b = read_mlp(tmp_path / "a.npz"), read_mlp(tmp_path / "b.npz")
    assert a.checksum == b.checksum
    h = a.meta["history"]
    assert len(h["loss"]) == 3 and h["loss"][-1] < h["loss"][0]
    assert sum(a.meta["situations"].values()) == a.meta["decisions"] + a.meta["held_out"]
    assert a.meta["held_out"] > 0 and len(h["held_gain"]) == 3
    qa, qb = QP(MLP(a.layers)), QP(str(tmp_path / "a.npz"))
    for view in play_views(20):
        assert qa.play(view, random.Random(0)) == qb.play(view, random.Random(0))
    call_command("train_qp", *args, "--features", "plain", "--data", str(tmp_path / "d1"),
                 "--output", str(tmp_path / "p.npz"))  # fmt: skip
    plain = read_mlp(tmp_path / "p.npz")
    assert plain.inputs == features.PLAIN_FEATURES and plain.meta["bot"] == "QP-plain"
    QP(plain).play(play_views(1)[0], random.Random(0))


@pytest.mark.usefixtures("torch_installed")
def test_train_qp_with_qp_rolling_out_from_the_shipped_weights_is_seeded_and_resumes(
    tmp_path: Path,
) -> None:
    from bots.learned.mlp import load_mlp, shipped

    args = ["--rounds", "4", "--chunk", "2", "--batch", "16", "--seed", "3", "--advantage", "4",
            "--rollout", "qp", "--init", shipped("qp.npz")]  # fmt: skip
    call_command("train_qp", *args, "--epochs", "2", "--data", str(tmp_path / "d1"),
                 "--output", str(tmp_path / "a.npz"))  # fmt: skip
    names = sorted(p.name for p in (tmp_path / "d1").iterdir())
    qp = load_mlp(shipped("qp.npz"))
    assert len(names) == 2 and all(n.endswith(f"_qp-{qp.checksum[:12]}.npz") for n in names)
    # The rounds made again in another folder, and a run stopped after 1 epoch, resumed.
    for epochs in ("1", "2"):
        call_command("train_qp", *args, "--epochs", epochs, "--data", str(tmp_path / "d2"),
                     "--output", str(tmp_path / "b.npz"))  # fmt: skip
    a, b = read_mlp(tmp_path / "a.npz"), read_mlp(tmp_path / "b.npz")
    assert a.checksum == b.checksum != qp.checksum
    assert a.meta["init"] == qp.checksum and a.meta["rollout"] == f"qp {qp.checksum}"
    assert len(a.meta["history"]["held_gain"]) == 2
    # From the shipped weights, not from seeded ones: one epoch moves them a little.
    w0, w1 = qp.layers[0][0], a.layers[0][0]
    assert np.abs(w1 - w0).max() < 0.05 < np.abs(w0).max()


def test_the_shipped_learned_bots_play_a_duplicate_pair_and_bid_stats_reads_its_log(
    tmp_path: Path,
) -> None:
    import json

    from lab.tournaments.tournament import TournamentConfig, run_tournament

    config = TournamentConfig(ns="NNB+QP", ew="SPB+SRP", games=2, seed=5, duplicate=True)
    log = tmp_path / "t.games.jsonl"
    summary = run_tournament(config, log=log)
    assert summary["games"] == 2 and summary["rounds"] > 0
    out = tmp_path / "stats.json"
    call_command("bid_stats", str(log), "--json", str(out))
    stats = json.loads(out.read_text())
    assert [s["bot"] for s in stats["sides"]] == ["NNB+QP", "SPB+SRP"]
    assert sum(stats["sides"][0]["histogram"].values()) == stats["sides"][0]["regular_bids"] > 0


def test_bench_bots_times_the_learned_bots_on_request(tmp_path: Path) -> None:
    import json

    out = tmp_path / "bench.json"
    call_command("bench_bots", "--bids", "6", "--plays", "6", "--tournament-games", "0",
                 "--learned", "--json", str(out))  # fmt: skip
    names = [t["name"] for t in json.loads(out.read_text())["timings"]]
    assert {"NNB bid", "NNB-sym bid", "SPB bid", "QP play"} <= set(names)
