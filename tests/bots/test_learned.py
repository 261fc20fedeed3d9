"""The learned bots (issue 22): features, the numpy forward pass, NNB/SPB/QP decisions.
Their training is tested in tests/lab/test_training.py."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from bots.learned import features
from bots.learned.bidders import NNB, SPB, policy_mask
from bots.learned.mlp import MLP, WeightsError, read_mlp
from bots.learned.qp import QP
from bots.registry import bot_names, make_bot
from game.engine.actions import Bid, Play
from game.engine.cards import parse_hand
from game.engine.deal import deal_hands
from game.engine.state import Phase, RoundState
from game.engine.tricks import winning_card
from game.engine.view import view_for
from tests.support.learned_views import RULES, bid_views, constant_net, play_views

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
        assert row[j] == pytest.approx((view.played.bit_count() + 1) / 52)  # the latest card
    plain = features.after_play_states(view, cards, features.PLAIN_FEATURES)
    assert np.array_equal(plain, rows[:, : features.PLAIN_FEATURES])


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


def test_the_shipped_qp_sees_issue_62s_inputs_and_qp_plain_the_papers_alone() -> None:
    qp, plain = make_bot("BIS+QP").player, make_bot("BIS+QP-plain").player
    assert isinstance(qp, QP) and isinstance(plain, QP)
    assert qp.network.inputs == features.PLAY_FEATURES
    assert make_bot("BIS+QP-self").player.network.inputs == features.SPADES_FEATURES
    assert plain.network.inputs == features.PLAIN_FEATURES
    assert qp.network.meta["bot"] == "QP" and plain.network.meta["bot"] == "QP-plain"
    assert not any(name.endswith("+QP-plain") for name in bot_names())  # tournaments only
    for view in play_views(10):
        legal = {a.card for a in view.legal_actions if isinstance(a, Play)}
        assert {qp.play(view, random.Random(0)), plain.play(view, random.Random(0))} <= legal


def test_qp2_is_qp_srp_refitted_on_its_own_roll_outs_and_for_tournaments_only() -> None:
    qp, qp2 = make_bot("BIS+QP-srp").player, make_bot("BIS+QP2").player
    assert isinstance(qp2, QP) and qp2.network.inputs == features.SPADES_FEATURES
    meta = qp2.network.meta
    assert meta["init"] == qp.network.checksum == meta["rollout"].split()[1]
    assert not any(name.endswith("+QP2") for name in bot_names())
    for view in play_views(10):
        legal = {a.card for a in view.legal_actions if isinstance(a, Play)}
        assert qp2.play(view, random.Random(0)) in legal


def test_qp_trick_is_learned_from_self_play_and_qp_srp_from_srps_roll_outs() -> None:
    qp, srp = make_bot("BIS+QP").player, make_bot("BIS+QP-srp").player
    trick, self_play = make_bot("BIS+QP-trick").player, make_bot("BIS+QP-self").player
    assert trick.network.meta["init"] == self_play.network.checksum
    assert "srp_share" not in self_play.network.meta  # self-play alone
    assert isinstance(qp, QP) and isinstance(srp, QP)
    assert qp.network.meta["kind"] == "qp-selfplay" and srp.network.meta["kind"] == "qp-cards"
    assert trick.network.meta["branch"] == 0 and qp.network.meta["lambda"] == 0.7
    assert srp.network.inputs == features.SPADES_FEATURES and srp.network.meta.get("init") is None
    assert "BIS+QP" in bot_names() and not any(n.endswith("+QP-srp") for n in bot_names())
    for view in play_views(10):
        legal = {a.card for a in view.legal_actions if isinstance(a, Play)}
        assert {qp.play(view, random.Random(0)), srp.play(view, random.Random(0))} <= legal


def test_qp_league_is_qp_trained_on_against_srp_and_for_tournaments_only() -> None:
    qp, league = make_bot("BIS+QP-self").player, make_bot("BIS+QP-league").player
    assert isinstance(league, QP) and league.network.inputs == features.SPADES_FEATURES
    meta = league.network.meta
    assert meta["init"] == qp.network.checksum and meta["league"] == [qp.network.checksum]
    assert meta["srp_share"] == 0.5 and meta["league_share"] == 0.25 and meta["match"] is True
    assert league.network.checksum != qp.network.checksum
    assert not any(name.endswith("+QP-league") for name in bot_names())
    for view in play_views(10):
        legal = {a.card for a in view.legal_actions if isinstance(a, Play)}
        assert league.play(view, random.Random(0)) in legal


def test_issue_62_inputs_say_what_can_beat_the_trick_and_what_each_side_needs() -> None:
    # the round's first lead: our highest card of the led suit against the cards unseen
    bot, rng = make_bot("BIS+SRP"), random.Random(0)
    r = RoundState(RULES, dealer=0, hands=deal_hands("learned-issue62"))
    while r.phase is not Phase.PLAYING:
        r.apply(bot.act(view_for(r, r.to_act), rng))
    view = view_for(r, r.to_act)
    cards = [a.card for a in view.legal_actions if isinstance(a, Play)]
    codes = features.after_play_codes(view, cards)
    spades = sum(1 for c in range(39, 52) if view.hand >> c & 1)
    bids = list(view.bids)
    for row, card in zip(codes, cards, strict=True):
        suit = card // 13
        above_held = sum(1 for c in range(card + 1, 13 * suit + 13) if view.hand >> c & 1)
        assert row[features.BEAT_SUIT] == 12 - card % 13 - above_held
        assert row[features.BEAT_TRUMP] == (13 - spades if suit != 3 else 0)
        assert list(row[features.TO_PLAY : features.PARTNER_TO_PLAY + 1]) == [3, 2, 1]
        us, them = view.seat & 1, 1 - (view.seat & 1)
        assert row[features.NEED] == bids[us] + bids[us + 2] or 0 in bids
        assert row[features.NEED + 1] == bids[them] + bids[them + 2] or 0 in bids
        assert row[features.LEFT] == 13
    # later positions: against a count over the cards themselves
    for view in play_views(30, seed=5):
        cards = [a.card for a in view.legal_actions if isinstance(a, Play)]
        seen = {c for t in view.tricks for c in t.cards} | set(view.trick)
        seen |= {c for c in range(52) if view.hand >> c & 1}
        for row, card in zip(features.after_play_codes(view, cards), cards, strict=True):
            trick = [*view.trick, card]
            if len(trick) == 4:
                assert row[features.BEAT_SUIT : features.PARTNER_TO_PLAY + 1].sum() == 0
                assert row[features.LEFT] == 12 - len(view.tricks)
                continue
            best, _ = winning_card(view.leader, trick)
            unseen = [c for c in range(52) if c not in seen]
            above = sum(c // 13 == best // 13 and c > best for c in unseen)
            assert row[features.BEAT_SUIT] == above
            assert row[features.BEAT_TRUMP] == (sum(c >= 39 for c in unseen) if best < 39 else 0)
            assert row[features.TO_PLAY] == 4 - len(trick)
            assert row[features.LEFT] == 13 - len(view.tricks)


def test_qp_trick_reads_issue_62s_inputs_and_is_for_tournaments_only() -> None:
    qp, trick = make_bot("BIS+QP-self").player, make_bot("BIS+QP-trick").player
    assert isinstance(trick, QP) and trick.network.inputs == features.PLAY_FEATURES
    meta = trick.network.meta
    assert meta["init"] == qp.network.checksum and meta["srp_share"] == 0.5
    assert not any(name.endswith("+QP-trick") for name in bot_names())
    for view in play_views(10):
        legal = {a.card for a in view.legal_actions if isinstance(a, Play)}
        assert trick.play(view, random.Random(0)) in legal


def test_qp_trick292_is_qp_tricks_run_without_its_inputs() -> None:
    trick, ablation = make_bot("BIS+QP-trick").player, make_bot("BIS+QP-trick292").player
    assert ablation.network.inputs == features.SPADES_FEATURES
    assert trick.network.inputs == features.PLAY_FEATURES
    for key in ("init", "srp_share", "lr", "seed", "pool", "match"):
        assert ablation.network.meta[key] == trick.network.meta[key], key
    assert not any(name.endswith("+QP-trick292") for name in bot_names())


def test_qp_cont_is_qp_tricks_training_continued_against_a_league() -> None:
    trick, cont = make_bot("BIS+QP-trick").player, make_bot("BIS+QP-cont").player
    meta = cont.network.meta
    assert cont.network.inputs == features.PLAY_FEATURES
    assert meta["init"] == trick.network.checksum
    assert meta["league"] == [trick.network.checksum]
    assert meta["lr"] < trick.network.meta["lr"] and meta["srp_share"] == 0.6
    assert not any(name.endswith("+QP-cont") for name in bot_names())
    for view in play_views(10):
        legal = {a.card for a in view.legal_actions if isinstance(a, Play)}
        assert cont.play(view, random.Random(0)) in legal


def test_the_shipped_qp_is_qp_branch_qp_tricks_run_on_with_branched_labels() -> None:
    qp, branch = make_bot("BIS+QP").player, make_bot("BIS+QP-branch").player
    trick = make_bot("BIS+QP-trick").player
    assert qp.network.checksum == branch.network.checksum != trick.network.checksum
    meta = branch.network.meta
    assert branch.network.inputs == features.PLAY_FEATURES
    assert meta["branch"] == 0.5 and meta["srp_share"] == 0.5 and meta["advantage"] == 4.0
    assert meta["init"] != trick.network.checksum  # its first stage's weights (make train)
    assert "BIS+QP" in bot_names() and not any(n.endswith("+QP-branch") for n in bot_names())
    for view in play_views(10):
        legal = {a.card for a in view.legal_actions if isinstance(a, Play)}
        assert branch.play(view, random.Random(0)) in legal


def test_qp_third_plays_srps_card_only_where_it_takes_the_trick_at_third_seat() -> None:
    qp, third = make_bot("BIS+QP-trick").player, make_bot("BIS+QP-third").player
    assert third.network.checksum == qp.network.checksum  # the weights it was measured with
    assert not any(name.endswith("+QP-third") for name in bot_names())
    changed = 0
    for view in play_views(400):
        assert view.seat is not None
        own, got = qp.play(view, random.Random(0)), third.play(view, random.Random(0))
        if got == own:
            continue
        changed += 1
        side = view.seat & 1
        assert len(view.trick) == 2 and 0 not in view.bids
        assert winning_card(view.leader, [*view.trick, own])[1] & 1 != side
        assert winning_card(view.leader, [*view.trick, got])[1] & 1 == side
        assert got == third.rule.play(view, random.Random(0))
    assert changed


# ----- the plain suits' relabellings ------------------------------------------------


def _twins(n: int) -> list[tuple[object, object, tuple[int, int, int], int]]:
    """Pairs of views of one position, the second with clubs, diamonds and hearts
    relabelled (suit s becomes order[s]): the same bids, the same cards played,
    relabelled; and the order's number among the six."""
    from itertools import permutations

    orders = list(permutations(range(3)))
    rng, bot = random.Random(5), make_bot("BIS+SRP")
    twins = []
    for i in range(n):
        p = 1 + i % 5
        order = orders[p]

        def relabel(c: int, order: tuple[int, ...] = order) -> int:
            return c if c >= 39 else order[c // 13] * 13 + c % 13

        hands = deal_hands(f"learned-suits/{i}")
        other = [sum(1 << relabel(c) for c in range(52) if h >> c & 1) for h in hands]
        a, b = RoundState(RULES, i % 4, hands), RoundState(RULES, i % 4, other)
        while a.phase is Phase.BIDDING:
            bid = bot.act(view_for(a, a.to_act), rng)
            a.apply(bid)
            b.apply(bid)
        for _ in range(rng.randrange(52)):
            play = bot.act(view_for(a, a.to_act), rng)
            assert isinstance(play, Play)
            a.apply(play)
            b.apply(Play(play.seat, relabel(play.card)))
        if a.phase is Phase.PLAYING:
            twins.append((view_for(a, a.to_act), view_for(b, b.to_act), order, p))
    return twins


def _legal(view) -> list[int]:  # type: ignore[no-untyped-def]
    return sorted(a.card for a in view.legal_actions if isinstance(a, Play))


def test_a_relabelling_of_the_plain_suits_is_a_gather_of_the_inputs() -> None:
    perms = features.SUIT_PERMUTATIONS
    assert perms.shape == (6, features.PLAY_FEATURES)
    assert (perms[0] == np.arange(features.PLAY_FEATURES)).all()
    assert all(sorted(row) == list(range(features.PLAY_FEATURES)) for row in perms)
    twins = _twins(60)
    for view, other, order, p in twins:
        cards = _legal(view)
        moved = [c if c >= 39 else order[c // 13] * 13 + c % 13 for c in cards]
        x, y = features.after_play_codes(view, cards), features.after_play_codes(other, moved)
        assert np.array_equal(y, x[:, perms[p]])
    assert len(twins) > 50


def test_the_shipped_qp_values_a_position_the_same_under_every_relabelling() -> None:
    qp, alone = make_bot("BIS+QP").player, make_bot("BIS+QP-branch").player
    assert isinstance(qp, QP) and isinstance(alone, QP)
    assert qp.symmetric and not alone.symmetric
    assert qp.network.checksum == alone.network.checksum
    worst = worst_alone = 0.0
    for view, other, order, _ in _twins(40):
        cards = _legal(view)
        moved = [c if c >= 39 else order[c // 13] * 13 + c % 13 for c in cards]
        worst = max(worst, float(np.abs(qp.values(view, cards) - qp.values(other, moved)).max()))
        gap = np.abs(alone.values(view, cards) - alone.values(other, moved)).max()
        worst_alone = max(worst_alone, float(gap))
        card = qp.play(view, random.Random(0))
        assert moved[cards.index(card)] == qp.play(other, random.Random(0))
    # The network alone tells the relabellings apart; the mean of the six does not.
    assert worst < 1e-5 < 1e-2 < worst_alone
