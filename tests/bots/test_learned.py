"""The learned bots (issue 22): features, the numpy forward pass, NNB/SPB/QP decisions,
and (with the train extra) short training runs of train_nnb, train_spb and train_qp."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command

from bots.learned import features
from bots.learned.bidders import NNB, SPB, policy_mask
from bots.learned.mlp import MLP, WeightsError, read_mlp
from bots.learned.qp import QP
from bots.registry import make_bot
from game.engine.actions import Bid, Play, SeeCards
from game.engine.cards import parse_hand
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import SeatView, view_for
from lab.training.analysis import bid_stats
from tests import services

RULES = Rules(winning_goal=200, losing_goal=-100)


def constant_net(inputs: int, outputs: np.ndarray) -> MLP:
    """A network whose output is ``outputs`` whatever the input."""
    w = np.zeros((inputs, len(outputs)), np.float32)
    return MLP([(w, np.asarray(outputs, np.float32))])


def bid_views(n: int, seed: int = 1) -> list[SeatView]:
    rng = random.Random(seed)
    bot = make_bot("BIS+SRP")
    views = []
    for i in range(n):
        r = RoundState(RULES, dealer=i % 4, hands=deal_hands(f"learned/{seed}/{i}"))
        for _ in range(rng.randrange(4)):
            r.apply(bot.act(view_for(r, r.to_act), rng))
        view = view_for(r, r.to_act)
        if view.hand is None:
            r.apply(SeeCards(r.to_act))
            view = view_for(r, r.to_act)
        views.append(view)
    return views


def play_views(n: int, seed: int = 1) -> list[SeatView]:
    rng = random.Random(seed)
    bot = make_bot("RB+SRP")
    views = []
    for i in range(n):
        r = RoundState(RULES, dealer=i % 4, hands=deal_hands(f"learned-play/{seed}/{i}"))
        for _ in range(4 + rng.randrange(52)):
            r.apply(bot.act(view_for(r, r.to_act), rng))
        while r.phase is not Phase.PLAYING:
            r.apply(bot.act(view_for(r, r.to_act), rng))
        views.append(view_for(r, r.to_act))
    return views


# ----- features and the forward pass ----------------------------------------------


def test_the_hand_matrix_puts_spades_first() -> None:
    bits = features.hand_bits(parse_hand("AS 2C KH"))
    assert bits.sum() == 3
    assert bits[12] == 1  # ace of spades: row 0, the ace's column
    assert bits[13] == 1  # two of clubs: row 1, first column
    assert bits[3 * 13 + 11] == 1  # king of hearts: row 3


def test_bid_features_show_position_and_earlier_bids_relative_to_the_seat() -> None:
    hand = deal_hands("f")[0]
    x = features.bid_features(hand, 0, [None, 4, 0, None], 2)
    assert x.shape == (features.BID_FEATURES,) and x[:52].sum() == 13
    assert x[52 + 2] == 1 and x[52:56].sum() == 1
    # partner (seat 2) bid nil; left (1) bid 4; right (3) not yet
    assert list(x[56:59]) == [1, 1, 0]
    assert list(x[59:62]) == pytest.approx([1, 0, 4 / 13])
    assert list(x[62:65]) == [0, 0, 0]


def test_after_play_states_differ_only_by_the_card() -> None:
    view = play_views(1, seed=3)[0]
    cards = [a.card for a in view.legal_actions if isinstance(a, Play)]
    rows = features.after_play_states(view, cards)
    assert rows.shape == (len(cards), features.PLAY_FEATURES)
    for row, card in zip(rows, cards, strict=True):
        j = features.CARD_INDEX[card]
        assert row[104 + j] == 0  # no longer in the hand
        assert row[164 + j] == 1  # in the trick
        assert row[52 + j] == 0.25  # played by us


def test_a_saved_network_reloads_with_the_same_outputs_and_a_checked_checksum(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(0)
    net = MLP([(rng.normal(size=(5, 4)), rng.normal(size=4)), (rng.normal(size=(4, 2)), [0, 1])])
    net.meta["seed"] = 7
    path = tmp_path / "n.npz"
    net.save(path)
    loaded = read_mlp(path)
    x = rng.normal(size=(3, 5)).astype(np.float32)
    assert np.array_equal(net(x), loaded(x))
    assert loaded.meta["seed"] == 7 and loaded.meta["sha256"] == net.checksum
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["b1"] = arrays["b1"] + 1
    with open(tmp_path / "bad.npz", "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(WeightsError, match="checksum"):
        read_mlp(tmp_path / "bad.npz")


# ----- decisions ------------------------------------------------------------------------


def test_nnb_bids_its_rounded_prediction_where_bis_bids_a_regular_contract() -> None:
    bis = make_bot("BIS+SRP").bidder
    seen = 0
    for prediction, expected in ((4.4, 4), (4.6, 5), (-3.0, 1)):
        nnb = NNB(constant_net(features.BID_FEATURES, np.array([prediction])))
        for view in bid_views(30):
            wanted_bis, info = bis.decide(view)
            wanted, _ = nnb.decide(view)
            assert (wanted == 0) == (wanted_bis == 0)  # nil is BIS's decision
            if wanted_bis != 0 and not info.get("end_game"):
                assert wanted == expected
                seen += 1
    assert seen > 10


def test_spb_bids_the_legal_bid_its_policy_rates_highest() -> None:
    logits = np.zeros(14)
    logits[13] = 5.0  # 13 is best, then 2
    logits[2] = 4.0
    spb = SPB(constant_net(features.BID_FEATURES, logits))
    for view in bid_views(20):
        bid = spb.bid(view, random.Random(0))
        mask = policy_mask(view)
        expected = 13 if mask[13] else 2 if mask[2] else int(np.flatnonzero(mask)[0])
        assert isinstance(bid, Bid) and not bid.blind and bid.tricks == expected


def test_qp_plays_the_legal_card_of_highest_value() -> None:
    # Value = the trick bit of the ace of spades, minus a little per card in the trick:
    # QP plays the ace of spades when it may, else the lowest legal card (first of ties).
    w = np.zeros((features.PLAY_FEATURES, 1), np.float32)
    w[164 + features.CARD_INDEX[51], 0] = 1.0
    qp = QP(MLP([(w, np.zeros(1, np.float32))]))
    for view in play_views(40):
        legal = sorted(a.card for a in view.legal_actions if isinstance(a, Play))
        card = qp.play(view, random.Random(0))
        assert card == (51 if 51 in legal else legal[0])


def test_bid_stats_count_sets_and_tricks_minus_bid_by_side() -> None:
    rounds = [{"bids": [3, 2, 4, 0], "tricks": [2, 5, 4, 2]}]
    games = [{"swapped": False, "rounds": rounds}, {"swapped": True, "rounds": rounds}]
    a, b = bid_stats(games)
    # N/S (3, 4) took 6 of 7: set; E/W bid 2 with a nil, the 2-bidder took 5: made.
    assert a["contracts"] == 2 and a["set_rate"] == 0.5
    assert a["histogram"] == {"-1": 1, "0": 1, "3": 1}
    assert b["histogram"] == a["histogram"] and b["set_rate"] == 0.5


# ----- training (the train extra) ---------------------------------------------------------


@pytest.fixture
def torch_installed() -> None:
    try:
        import torch  # noqa: F401
    except ImportError:
        services.unavailable("PyTorch is not installed: pip install -e '.[train]'")


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
def test_train_qp_lowers_the_loss_in_each_iteration_and_reloads_with_identical_plays(
    tmp_path: Path,
) -> None:
    out = tmp_path / "qp.npz"
    call_command("train_qp", "--iterations", "2", "--rounds", "6", "--against-srp", "1",
                 "--epochs", "4", "--batch", "32", "--seed", "2", "--output", str(out))  # fmt: skip
    net = read_mlp(out)
    h = net.meta["history"]
    assert net.meta["schedule"] == ["srp", "one"] and len(h["train"]) == 8
    assert all(last < first for first, last in zip(h["first_epoch"], h["last_epoch"], strict=True))
    a, b = QP(MLP(net.layers)), QP(str(out))
    for view in play_views(20):
        assert a.play(view, random.Random(0)) == b.play(view, random.Random(0))


# ----- the shipped bots, the bench and the games-log report ---------------------------------


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
