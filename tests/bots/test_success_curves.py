"""BIS success curves: the 2955 sequences, the model, the shipped table, the data paths."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bots import success_curves as sc
from bots.base import Bot
from bots.bis import nil_value
from bots.registry import make_bot
from bots.srp import SRP
from game.engine.cards import parse_hand
from game.engine.match import Match
from game.engine.record import record_of
from game.engine.rules import PAPER_RULES
from game.engine.state import Phase
from game.engine.view import view_for
from lab.tournaments.selfplay import (
    NoisyBIS,
)

# ----- sequences --------------------------------------------------------------------


def test_all_2955_sequences_indexed_once() -> None:
    seqs = sc.all_sequences()
    assert len(seqs) == sc.N_SEQUENCES == 2955
    assert len(set(seqs)) == 2955
    assert [sc.sequence_index(s) for s in seqs] == list(range(2955))
    assert seqs[0] == () and seqs[1] == (0,) and seqs[15] == (0, 0) and seqs[-1] == (13, 13, 13)
    with pytest.raises(ValueError):
        sc.sequence_index((1, 2, 3, 4))
    with pytest.raises(ValueError):
        sc.sequence_index((14,))


def test_sequence_features_name_the_seats() -> None:
    f = dict(zip(sc.SEQ_FEATURES, sc.sequence_features((2, 5, 4)), strict=True))
    # (LHO, partner, RHO)
    assert f["pos3"] == 1 and f["partner_bid"] == 5 and f["opp_sum"] == 6 and f["rho_bid"] == 4
    f = dict(zip(sc.SEQ_FEATURES, sc.sequence_features((0, 3)), strict=True))
    assert f["pos2"] == 1 and f["partner_nil"] == 1 and f["partner_bid"] == 0
    assert f["opp_sum"] == 3
    f = dict(zip(sc.SEQ_FEATURES, sc.sequence_features((0,)), strict=True))
    assert f["opp_nils"] == 1 and f["partner_bid"] == 0 and f["partner_nil"] == 0


# ----- the shipped table ------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped() -> sc.CurveSet:
    return sc.read()


def test_shipped_table_covers_every_sequence(shipped: sc.CurveSet) -> None:
    assert shipped.table.shape == (2955, len(sc.GRID))
    assert shipped.single.shape == (len(sc.GRID),)
    assert np.all((shipped.table >= 0) & (shipped.table <= 1))
    meta = shipped.meta
    assert meta["format"] == sc.FORMAT
    assert meta["source"]["config"]["seed"] is not None
    assert meta["stats"]["samples"] > 0 and meta["generated"]
    assert set(meta["model"]["coefficients"]) <= set(sc.FEATURES)
    # The file says how it was made: seed, rounds and nil-sample counts (issue #3: the
    # common previous-bid sequences have thousands of samples).
    source = meta["source"]
    assert source["kind"] == "selfplay" and source["rounds"] >= 100_000
    assert source["natural_nils"] + source["explored_nils"] == meta["stats"]["samples"]
    assert meta["stats"]["sequences_with_at_least"]["2000"] >= 5
    assert meta["stats"]["top_sequences"][0]["samples"] >= 10_000


def test_shipped_curves_monotone_in_nil_value(shipped: sc.CurveSet) -> None:
    assert sc.check_monotone(shipped.table)
    assert sc.check_monotone(shipped.single)
    coef = shipped.meta["model"]["coefficients"]
    assert all(coef.get(f, 0.0) >= 0 for f in sc.VALUE_FEATURES)
    # Between grid points too (linear interpolation).
    curve = sc.load_success_curves()
    for prev in [(), (3,), (1, 3), (8, 3), (0, 13, 2)]:
        ps = [curve(prev, v) for v in np.linspace(0, 1, 301)]
        assert all(b >= a for a, b in zip(ps, ps[1:], strict=False))


def test_loader_callable(shipped: sc.CurveSet) -> None:
    curve = sc.load_success_curves()
    i = sc.sequence_index((1, 3))
    assert curve((1, 3), 0.8) == pytest.approx(shipped.table[i, 40])
    mid = (shipped.table[i, 40] + shipped.table[i, 41]) / 2
    assert curve((1, 3), 0.81) == pytest.approx(mid)
    assert curve((1, 3), -1.0) == pytest.approx(shipped.table[i, 0])
    assert curve((1, 3), 2.0) == pytest.approx(shipped.table[i, -1])
    single = sc.load_success_curves(single=True)
    assert single((1, 3), 0.5) == single((8, 3), 0.5) == single((), 0.5)


def test_registry_variants() -> None:
    bot = make_bot("BIS+SRP")
    assert bot.name == "BIS+SRP"
    assert bot.bidder.success_curves is not None and not bot.bidder.success_curves.single
    one = make_bot("BIS-SC1+SRP").bidder
    assert one.success_curves.single
    no_eg = make_bot("BIS-noEG+SRP").bidder
    assert no_eg.end_game is False and no_eg.success_curves is not None
    assert make_bot("BIS0+SRP").bidder.success_curves is None


# ----- the model --------------------------------------------------------------------


def synthetic(n: int, seed: int, truth) -> list[sc.NilSample]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randrange(4)
        prev = tuple(rng.randrange(1, 9) for _ in range(k))
        v = rng.random()
        p = 1 / (1 + math.exp(-truth(prev, v)))
        out.append(sc.NilSample(prev, v, rng.random() < p))
    return out


def test_training_recovers_a_known_relationship() -> None:
    def truth(prev, v):
        partner = prev[-2] if len(prev) >= 2 else 0
        return -3.0 + 6.0 * v + 0.3 * partner

    samples = synthetic(6000, 1, truth)
    model = sc.fit_model(samples, C=1e4)
    coef = model.coefficients
    assert coef["nil_value"] > 3
    assert coef["partner_bid"] == pytest.approx(0.3, abs=0.12)
    assert abs(coef["opp_sum"]) < 0.12 and abs(coef["rho_bid"]) < 0.12
    table = sc.build_table(model)
    assert sc.check_monotone(table)
    i = lambda s: sc.sequence_index(s)  # noqa: E731
    # Higher partner bid, higher success; and close to the truth.
    assert table[i((1, 3)), 40] < table[i((3, 3)), 40] < table[i((8, 3)), 40]
    for prev, v_index in [((1, 3), 40), ((8, 3), 25), ((), 10)]:
        true_p = 1 / (1 + math.exp(-truth(prev, sc.GRID[v_index])))
        assert table[i(prev), v_index] == pytest.approx(true_p, abs=0.06)


def test_interactions_let_the_curve_shape_differ_by_position() -> None:
    # First to bid the nil value tells a lot (steep), fourth little (flat).
    def truth(prev, v):
        c = min(0.99, max(0.01, v))
        return 0.5 + (2.0 if not prev else 0.8 if len(prev) == 3 else 1.4) * math.log(c / (1 - c))

    samples = synthetic(8000, 4, truth)
    i = lambda s: sc.sequence_index(s)  # noqa: E731
    lo, hi = 10, 40  # nil values 0.2 and 0.8
    for interactions in (False, True):
        table = sc.build_table(sc.fit_model(samples, C=1e3, interactions=interactions))
        assert sc.check_monotone(table)
        first = table[i(()), hi] - table[i(()), lo]
        fourth = table[i((3, 3, 3)), hi] - table[i((3, 3, 3)), lo]
        if interactions:
            assert first - fourth > 0.2  # truth: 0.87 against 0.48
            for prev in ((), (3, 3, 3)):
                for v_index in (lo, hi):
                    true_p = 1 / (1 + math.exp(-truth(prev, sc.GRID[v_index])))
                    assert table[i(prev), v_index] == pytest.approx(true_p, abs=0.06)
        else:
            assert first - fourth < 0.12  # one shape, shifted


def test_curves_stay_monotone_when_the_data_say_otherwise() -> None:
    samples = synthetic(3000, 2, lambda prev, v: 1.0 - 2.0 * v)
    model = sc.fit_model(samples)
    assert all(model.coefficients.get(f, 0.0) >= 0 for f in sc.VALUE_FEATURES)
    assert sc.check_monotone(sc.build_table(model))
    assert sc.check_monotone(sc.build_table(sc.fit_model(samples, single=True), single=True))


def test_train_save_load_round_trip(tmp_path) -> None:
    samples = synthetic(2000, 3, lambda prev, v: -2 + 5 * v - 0.2 * len(prev))
    content = sc.train(samples, {"kind": "synthetic", "config": {"seed": 3}})
    path = tmp_path / "sc.npz"
    sc.save(content, path)
    loaded = sc.read(path)
    assert loaded.meta == json.loads(json.dumps(content["meta"]))
    assert np.allclose(loaded.table, content["table"], atol=1 / 65535)
    assert np.allclose(loaded.single, content["single"], atol=1 / 65535)
    curve = sc.load_success_curves(path)
    assert curve((2, 4), 0.6) == pytest.approx(content["table"][sc.sequence_index((2, 4)), 30],
                                               abs=1e-4)  # fmt: skip
    with pytest.raises(sc.SuccessCurvesError):
        sc.read(tmp_path / "missing.npz")


def test_sample_stats_count_sequences_by_threshold() -> None:
    samples = (
        [sc.NilSample((), 0.5, True)] * 2100
        + [sc.NilSample((3,), 0.5, False)] * 1200
        + [sc.NilSample((3, 4), 0.5, True)] * 600
        + [sc.NilSample((1, 2, 3), 0.5, True)]
    )
    stats = sc.sample_stats(samples, top=2)
    assert stats["samples"] == 3901 and stats["sequences_seen"] == 4
    assert stats["sequences_with_at_least"] == {"100": 3, "500": 3, "1000": 2, "2000": 1,
                                                "5000": 0}  # fmt: skip
    by_pos = stats["sequences_with_at_least_by_position"]
    assert by_pos["0"]["2000"] == 1 and by_pos["1"]["1000"] == 1 and by_pos["1"]["2000"] == 0
    assert by_pos["2"]["500"] == 1 and by_pos["3"]["100"] == 0
    assert [t["prev"] for t in stats["top_sequences"]] == [[], [3]]
    assert stats["top_sequences"][1] == {"prev": [3], "samples": 1200, "made": 0}


def test_report_prints_the_file_source_and_sample_counts(tmp_path) -> None:
    from io import StringIO

    samples = synthetic(2000, 4, lambda prev, v: -2 + 5 * v)
    config = {"seed": 9, "eps": 0.15, "floor": 0.02, "goal": 200, "lose": -100,
              "chunk_rounds": 100}  # fmt: skip
    source = {"kind": "selfplay", "rounds": 7000, "chunks": 70, "explored_nils": 1500,
              "natural_nils": 500, "config": config}  # fmt: skip
    path = tmp_path / "sc.npz"
    sc.save(sc.train(samples, source), path)
    out = StringIO()
    call_command("train_success_curves", "--report", "--output", str(path), stdout=out)
    text = out.getvalue()
    assert "seed 9, 7000 rounds" in text and "nil samples 2000" in text
    assert "sequences with >= 1,000 samples:" in text and "monotone in the nil value: yes" in text
    with pytest.raises(CommandError, match="missing"):
        call_command("train_success_curves", "--report", "--output", str(tmp_path / "no.npz"))


def test_training_needs_both_outcomes() -> None:
    with pytest.raises(sc.SuccessCurvesError):
        sc.fit_model([])
    with pytest.raises(sc.SuccessCurvesError):
        sc.fit_model([sc.NilSample((), 0.5, True)] * 10)


# ----- data: records and self-play ---------------------------------------------------


class _Spy(NoisyBIS):
    """Remembers the nil value BIS computed for each nil bid it made."""

    def __init__(self) -> None:
        super().__init__(eps=0.5, floor=0.0)
        self.seen: dict[tuple[int, int], tuple[tuple[int, ...], float]] = {}

    def bid(self, view, rng):
        action = super().bid(view, rng)
        if action.tricks == 0:
            _, info = self.decide(view)
            prev = tuple(b for s in view.bid_order if (b := view.bids[s]) is not None)
            self.seen[(view.round_number, view.seat)] = (prev, info["nil_value"])
        return action


def test_records_recompute_the_nil_value_bis_used() -> None:
    spy = _Spy()
    bot = Bot(spy, SRP())
    records = []
    for g in range(3):
        match = Match(PAPER_RULES, f"sc-test/{g}")
        rng = random.Random(g)
        spy.seen.clear()
        while not match.is_over and len(match.rounds) <= 12:
            r = match.round
            match.apply(bot.act(view_for(match, r.to_act), rng))
            if r.phase is Phase.DONE:
                rec = record_of(r)
                records.append(rec)
                got = list(sc.nil_bids_of_records([rec]))
                blind = {s for s in range(4) if r.blind[s]}
                want = {k[1]: v for k, v in spy.seen.items() if k[0] == r.round_number}
                assert {seat for seat, _ in got} == set(want) - blind
                for seat, sample in got:
                    prev, value = want[seat]
                    assert sample.prev == prev
                    assert sample.value == value
                    assert sample.value == nil_value(r.hands_dealt[seat])
                    assert sample.made == (r.tricks_won[seat] == 0)
    assert sum(1 for _ in sc.nil_samples_from_records(records)) >= 5
    # A seat filter on bot names.
    rec = dict(records[0], bot_names=[None, None, None, None])
    assert list(sc.nil_samples_from_records([rec], sc.bot_seat_filter())) == []


def test_from_records_matches_hand_values() -> None:
    rec = {
        "rules": {"nil": True},
        "hands": {"N": "2C 3C 4C 5C 2D 3D 4D 5D 2H 3H 4H 2S 3S",
                  "E": "AS KS JS 6S 2S AH QH QD KC 9C 5C 4C 3C", "S": "", "W": ""},
        "bids": [{"seat": "W", "bid": 4, "blind": False}, {"seat": "N", "bid": 0, "blind": False},
                 {"seat": "E", "bid": 0, "blind": False}, {"seat": "S", "bid": 3, "blind": False}],
        "tricks_won": [0, 2, 6, 5],
    }  # fmt: skip
    got = list(sc.nil_samples_from_records([rec]))
    assert got[0] == sc.NilSample((4,), nil_value(parse_hand(rec["hands"]["N"])), True)
    assert got[1].prev == (4, 0) and got[1].value == 0.0 and not got[1].made


def test_every_registered_bot_is_named_by_its_registry_name() -> None:
    from bots.registry import bot_names

    for name in bot_names():
        assert make_bot(name).name == name
