"""QP's decisions against SRP's card (lab.training.qp_diagnose): the rounds replayed
as the gauge plays them, every differing decision branched on the true deal."""

from __future__ import annotations

import json

import numpy as np

from bots.learned.mlp import load_mlp, shipped
from bots.learned.qp import QP_WEIGHTS
from bots.srp_compiled import BIDS, sure_table
from lab.training.qp_diagnose import diagnose, made, play_on, side_points, tally
from lab.training.qp_self import RULES_ARRAY, bid_rounds, duel_round, net_arrays

NET = net_arrays(load_mlp(shipped(QP_WEIGHTS)))


def test_a_round_played_on_is_the_gauges_round_and_forcing_qps_own_card_changes_nothing() -> None:
    rounds, sure_t = bid_rounds("qpdiag-test", 0, 4), sure_table()
    for i in range(4):
        st0, blind, bags = rounds["states"][i], rounds["blind"][i], rounds["bags"][i]
        for side in (0, 1):
            played = play_on(
                st0.copy(), 0, np.empty(52, np.int64), np.empty(52, np.int64), bags, NET,
                side, sure_t, record=True,
            )  # fmt: skip
            bids = st0[BIDS : BIDS + 4]
            gap = duel_round(st0.copy(), blind, bags, RULES_ARRAY, NET, side, sure_t)
            assert side_points(bids, blind, played.won, bags, side) == gap
            assert len(played.winners) == 13 and played.won.sum() == 13
            for d in played.decisions[:5]:
                again = play_on(
                    d.st.copy(), d.n, d.order_card.copy(), d.order_seat.copy(), bags, NET,
                    side, sure_t, force=d.qp_card,
                )  # fmt: skip
                assert np.array_equal(again.won, played.won)
                assert again.winners == played.winners[13 - len(again.winners) :]
                assert d.qp_value >= d.srp_value


def test_the_diagnosis_counts_each_side_and_branches_every_differing_decision() -> None:
    rounds = bid_rounds("qpdiag-test", 0, 12)
    got = diagnose(rounds, NET, sure_table())
    c, rows = got["counts"], got["decisions"]
    no_nil = sum(int((r[BIDS : BIDS + 4] > 0).all()) for r in rounds["states"])
    assert c["contracts"] == 2 * no_nil > 0
    assert c["QP set"] - c["SRP set"] == c["QP set, SRP made"] - c["SRP set, QP made"]
    assert c["QP decisions"] >= len(rows) > 0
    assert all(not (r["saves"] and r["loses"]) for r in rows)
    by_place = tally(rows, "place")
    assert sum(v["n"] for v in by_place.values()) == len(rows)
    assert made(np.array([3, 2, 4, 1]), np.array([4, 1, 7, 1]), 0)
    assert not made(np.array([3, 2, 4, 1]), np.array([4, 1, 7, 1]), 1)
    selfplay = diagnose(rounds, NET, sure_table(), selfplay=True)["counts"]
    assert selfplay["QP set"] == selfplay["SRP set"]  # both sides QP: the twins are one round


def test_the_command_writes_the_summary(tmp_path) -> None:
    import io

    from django.core.management import call_command

    out = tmp_path / "d.json"
    call_command(
        "qp_diagnose", "--weights", shipped(QP_WEIGHTS), "--deals", "6",
        "--data", str(tmp_path / "deals"), "--output", str(out), stdout=io.StringIO(),
    )  # fmt: skip
    got = json.loads(out.read_text())
    assert got["run"]["deals"] == 6 and got["counts"]["contracts"] % 2 == 0
    if got["all differing"]["n"]:
        assert sum(v["n"] for v in got["place"].values()) == got["all differing"]["n"]
