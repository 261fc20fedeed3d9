"""The dashboard's analyses against figures worked out by hand.

The rounds and the sums are in tests/support/analytics_fixtures.py.
"""

from __future__ import annotations

import importlib
import random
from datetime import date

import pytest
from django.apps import apps as django_apps

from game.engine import Match, Rules, view_for
from game.models import Action, MatchResult, RoundRecordRow, Table
from game.moves import matches
from game.research import analytics
from game.research.analytics import Filters, wilson_interval
from game.research.round_columns import rules_key
from game.research.storage import StorageError, store_match
from tests.support import analytics_fixtures

pytestmark = pytest.mark.django_db

approx = pytest.approx


@pytest.fixture
def tables() -> dict[str, Table]:
    return analytics_fixtures.build()


def test_wilson_interval_by_hand() -> None:
    # p = 1/2, n = 2: centre 0.5, half-width 1.96 * sqrt(0.125 + z^2/16) / (1 + z^2/2)
    lo, hi = wilson_interval(1, 2)
    assert lo == approx(0.09453, abs=1e-4) and hi == approx(0.90547, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0


def test_win_rates(tables: dict[str, Table]) -> None:
    w = analytics.win_rates(Filters())
    assert w["matches"] == 3  # D, a match with a stand-in round, is left out
    by = {r["makeup"]: r for r in w["by_makeup"]}
    # BB: A (lost), C (won); HB: A (won), C (lost); HH: both sides of B, N/S won.
    assert {m: (r["partnership_matches"], r["wins"]) for m, r in by.items()} == {
        "BB": (2, 1),
        "HB": (2, 1),
        "HH": (2, 1),
    }
    assert by["BB"]["ci95"] == approx(list(wilson_interval(1, 2)))
    # Pairings name who played: the measured partnership's wins against its opponents.
    pairings = {(p["measured"], p["opponents"]): p for p in w["pairings"]}
    assert set(pairings) == {
        ("BIS+SRP x2", "human & RB+SRP"),
        ("human & RB+SRP", "BIS+SRP x2"),
        ("human+human", "human+human"),
    }
    bis = pairings["BIS+SRP x2", "human & RB+SRP"]
    assert (bis["matches"], bis["wins"], bis["win_rate"]) == (2, 1, 0.5)
    hh = pairings["human+human", "human+human"]
    assert (hh["matches"], hh["wins"]) == (2, 1)  # B from each side
    with_d = analytics.win_rates(Filters(stand_ins=True))
    assert with_d["matches"] == 4
    assert {r["makeup"]: r["wins"] for r in with_d["by_makeup"]} == {"BB": 1, "HB": 2, "HH": 1}


def test_nil_positions_table_3(tables: dict[str, Table]) -> None:
    t = analytics.nil_positions(Filters())
    assert t["rounds"] == 7
    rows = {r["position"]: r for r in t["rows"]}
    assert [r["position"] for r in t["rows"]] == [
        "bot+bot nil", "human nil", "partner of human nil", "nil vs nil", "double nil", "no nil",
    ]  # fmt: skip
    assert {k: r["rounds"] for k, r in rows.items()} == {
        "bot+bot nil": 1, "human nil": 1, "partner of human nil": 1, "nil vs nil": 1,
        "double nil": 1, "no nil": 2,
    }  # fmt: skip

    def cell(pos: str, mk: str) -> dict:
        return rows[pos]["by_makeup"][mk]

    assert cell("bot+bot nil", "BB")["points_per_round"] == 140
    assert cell("bot+bot nil", "BB")["nil_success"] == 1.0
    assert cell("bot+bot nil", "HB")["points_per_round"] == 63
    assert cell("bot+bot nil", "HB")["nil_success"] is None
    assert cell("human nil", "BB")["points_per_round"] == 81
    assert cell("human nil", "HB")["points_per_round"] == -69
    assert cell("human nil", "HB")["nil_success"] == 0.0
    assert cell("partner of human nil", "HB")["points_per_round"] == 141
    assert cell("partner of human nil", "HB")["nil_success"] == 1.0
    assert cell("nil vs nil", "BB")["points_per_round"] == -48
    assert cell("nil vs nil", "BB")["nil_success"] == 0.0
    assert cell("nil vs nil", "HB")["nil_success"] == 1.0
    # Both HH partnerships of R6: (101 + 75) / 2; N/S's two nils, one made.
    assert cell("double nil", "HH")["points_per_round"] == 88
    assert cell("double nil", "HH")["partnership_rounds"] == 2
    assert cell("double nil", "HH")["nil_success"] == 0.5
    assert cell("no nil", "BB")["points_per_round"] == 60
    assert cell("no nil", "HB")["points_per_round"] == 61
    assert cell("no nil", "HH")["points_per_round"] == 6.5  # (-50 + 63) / 2
    assert "HH" not in rows["human nil"]["by_makeup"]


def test_points_by_bid_sum_figure_4(tables: dict[str, Table]) -> None:
    f = analytics.points_by_bid_sum(Filters())
    assert f["rounds"] == 2
    assert [(r["bid_sum"], r["rounds"]) for r in f["rows"]] == [(11, 1), (12, 1)]
    assert f["rows"][0]["by_makeup"] == {"HH": {"partnership_rounds": 2, "points_per_round": 6.5}}
    assert f["rows"][1]["by_makeup"]["BB"]["points_per_round"] == 60
    assert f["rows"][1]["by_makeup"]["HB"]["points_per_round"] == 61


def test_bid_sum_distribution_figure_5(tables: dict[str, Table]) -> None:
    f = analytics.bid_sum_distribution(Filters())
    assert f["rounds"] == 7
    assert f["mean"] == approx(10.0)  # (12 + 10 + 11 + 9 + 10 + 7 + 11) / 7
    assert [(r["bid_sum"], r["rounds"]) for r in f["rows"]] == [
        (7, 1), (9, 1), (10, 2), (11, 2), (12, 1),
    ]  # fmt: skip


def test_points_histogram_figure_2(tables: dict[str, Table]) -> None:
    h = analytics.points_histogram(Filters())
    nil = h["nil"]
    assert nil["seat_rounds"] == 7 and h["not_nil"]["seat_rounds"] == 21
    # Nil seats: R2 N 140, R3 E -69, R4 W 141, R5 N -48, R5 E 151, R6 N 101, R6 S 101.
    assert nil["mean"] == approx(517 / 7)
    assert {b["from"]: b["count"] for b in nil["bins"]} == {
        -70: 1, -50: 1, 100: 2, 140: 2, 150: 1,
    }  # fmt: skip
    assert h["edges"][0] == -70 and h["edges"][-1] == 150
    assert len(h["edges"]) == 23  # every bin between, for the chart


def test_round_type_win_rates(tables: dict[str, Table]) -> None:
    t = analytics.round_type_win_rates(Filters())
    assert [k["key"] for k in t["kinds"]] == ["HH", "HB", "BB", "BB:BIS+SRP"]
    rows = {r["label"]: r["by_kind"] for r in t["rows"]}
    assert len(rows) == 10

    def cell(label: str, kind: str) -> tuple[int, int, int, float | None]:
        c = rows[label][kind]
        return c["n"], c["won"], c["made"], c["points_per_round"]

    # over: R1 (N/S BB 60 v E/W HB 61) and R7 (both HH: N/S -50 set, E/W 63).
    assert cell("over", "BB") == (1, 0, 1, 60)
    assert cell("over", "HB") == (1, 1, 1, 61)
    assert cell("over", "HH") == (2, 1, 1, 6.5)
    # we nil: R2 N (BB, 140 v 63), R3 E and R4 W (HB: -69 v 81, 141 v 53), R6 N+S (HH, 101 v 75).
    assert cell("we nil", "BB") == (1, 1, 1, 140)
    assert cell("we nil", "HB") == (2, 1, 2, 36)
    assert cell("we nil", "HH") == (1, 1, 1, 101)
    assert cell("partner nil", "HB") == (2, 1, 2, 36)  # the same partnership-rounds
    assert cell("opponents nil", "BB") == (2, 1, 2, 67)  # R3 81 won, R4 53 lost
    assert cell("opponents nil", "HB") == (1, 0, 1, 63)  # R2
    assert cell("nil vs nil", "BB") == (1, 0, 1, -48) and cell("nil vs nil", "HB")[1] == 1
    assert cell("double nil", "HH") == (1, 0, 1, 75)  # R6 E/W
    assert cell("under", "HB") == (0, 0, 0, None)
    assert rows["we nil"]["BB:BIS+SRP"] == rows["we nil"]["BB"]
    assert rows["over"]["HH"]["win_ci95"] == approx(list(wilson_interval(1, 2)))
    # The gap, human+bot minus bot+bot: we nil 1/2 - 1/1, Newcombe's interval by hand.
    gap = next(r["gap"] for r in t["rows"] if r["label"] == "we nil")
    (l1, u1), (l2, u2) = wilson_interval(1, 2), wilson_interval(1, 1)
    assert gap["difference"] == -0.5
    assert gap["ci95"] == approx([-0.5 - ((0.5 - l1) ** 2 + (u2 - 1) ** 2) ** 0.5,
                                  -0.5 + ((u1 - 0.5) ** 2 + (1 - l2) ** 2) ** 0.5])  # fmt: skip
    assert next(r["gap"] for r in t["rows"] if r["label"] == "double nil") is None
    # R8 (left out unless asked): the stand-in's nil for E, E/W won 132 v 71.
    with_r8 = {r["label"]: r["by_kind"] for r in
               analytics.round_type_win_rates(Filters(stand_ins=True))["rows"]}  # fmt: skip
    assert (with_r8["we nil"]["HB"]["n"], with_r8["we nil"]["HB"]["won"]) == (3, 2)


def test_match_winner_by_the_round_types_it_held(tables: dict[str, Table]) -> None:
    rows = {r["label"]: r for r in analytics.round_type_win_rates(Filters())["rows"]}

    def held(label: str, kind: str) -> tuple[int, int]:
        c = rows[label]["matches_by_kind"][kind]
        return c["n"], c["won"]

    # A (won by E/W, the human+bot side) held over, we/partner/opponents nil, nil vs nil
    # for both sides; B (won by N/S) over for both, we nil for N/S, double nil for E/W.
    # C has no round rows, D is a match with a stand-in round: neither counts.
    assert held("over", "HB") == (1, 1) and held("over", "BB") == (1, 0)
    assert held("over", "HH") == (2, 1)
    assert held("we nil", "HH") == (1, 1) and held("double nil", "HH") == (1, 0)
    assert held("nil vs nil", "BB") == (1, 0) and held("under", "HB") == (0, 0)
    assert rows["we nil"]["match_gap"]["difference"] == 1.0  # HB 1/1 - BB 0/1
    assert rows["over"]["matches_by_kind"]["HH"]["win_ci95"] == approx(
        list(wilson_interval(1, 2)))  # fmt: skip
    with_d = {r["label"]: r["matches_by_kind"] for r in
              analytics.round_type_win_rates(Filters(stand_ins=True))["rows"]}  # fmt: skip
    assert (with_d["we nil"]["HB"]["n"], with_d["we nil"]["HB"]["won"]) == (2, 2)  # and D


def test_a_stand_in_nil_is_left_out_unless_asked_for(tables: dict[str, Table]) -> None:
    # R8: the stand-in bot bid nil for E (a human): not a human nil by default.
    s = analytics.summary(Filters())
    assert (s["rounds"], s["matches"]) == (7, 3)
    assert (s["stand_in_rounds"], s["stand_in_matches"], s["left_out"]) == (1, 1, True)
    human_nil = {r["position"]: r for r in analytics.nil_positions(Filters())["rows"]}["human nil"]
    assert human_nil["rounds"] == 1  # R3 only
    assert human_nil["by_makeup"]["HB"]["nil_bids"] == 1
    humans = {r["player"]: r for r in analytics.nil_bids(Filters())["rows"]}["human"]
    assert humans["positions"][0]["nil_bids"] == 3  # R3 E, R5 E, R6 S (not R8 E)
    asked = Filters(stand_ins=True)
    s = analytics.summary(asked)
    assert (s["rounds"], s["matches"], s["stand_in_rounds"], s["left_out"]) == (8, 4, 1, False)
    human_nil = {r["position"]: r for r in analytics.nil_positions(asked)["rows"]}["human nil"]
    assert human_nil["rounds"] == 2  # R3 and R8
    assert (human_nil["by_makeup"]["HB"]["nil_bids"], human_nil["by_makeup"]["HB"]["nil_made"]) == (
        2,
        1,
    )
    assert human_nil["by_makeup"]["HB"]["points_per_round"] == approx((-69 + 132) / 2)
    humans = {r["player"]: r for r in analytics.nil_bids(asked)["rows"]}["human"]
    assert (humans["positions"][0]["nil_bids"], humans["positions"][0]["nil_made"]) == (4, 2)
    # R1's 2 stand-in cards for E (under a quarter of 13) keep R1 E's.
    assert RoundRecordRow.objects.get(table=tables["A"], round_number=1).stand_in_round is False


def test_bidding_accuracy(tables: dict[str, Table]) -> None:
    rows = {r["player"]: r for r in analytics.bidding_accuracy(Filters())["rows"]}
    human = rows["human"]  # 0, 1, 1, 3, 2, -1, 1, 0, 2
    assert human["bids"] == 9
    assert human["mean"] == approx(1.0)
    assert human["exact"] == approx(2 / 9) and human["under"] == approx(1 / 9)
    assert rows["bot"]["bids"] == 12 and rows["bot"]["mean"] == approx(0.75)
    assert rows["BIS+SRP"]["bids"] == 8 and rows["BIS+SRP"]["mean"] == approx(5 / 8)
    assert rows["RB+SRP"]["bids"] == 4 and rows["RB+SRP"]["exact"] == approx(0.25)
    assert rows["human"]["distribution"] == {"-1": 1, "0": 2, "1": 3, "2": 2, "3": 1}


def test_nil_bids_by_kind_and_position(tables: dict[str, Table]) -> None:
    rows = {r["player"]: {p["position"]: p for p in r["positions"]} for r in
            analytics.nil_bids(Filters())["rows"]}  # fmt: skip
    human = rows["human"]["all"]
    assert human["seat_rounds"] == 13
    assert (human["nil_bids"], human["nil_made"]) == (3, 1)  # R3 E, R5 E, R6 S
    assert human["nil_frequency"] == approx(3 / 13)
    assert (human["blind_nil_bids"], human["blind_nil_made"]) == (1, 1)  # R6 N
    bot = rows["bot"]["all"]
    assert (bot["seat_rounds"], bot["nil_bids"], bot["nil_made"]) == (15, 3, 2)
    first = rows["human"][1]  # bidding first: R1 E, R5 E, R6 S, R7 E
    assert (first["seat_rounds"], first["nil_bids"], first["nil_made"]) == (4, 2, 1)
    assert rows["human"][3]["blind_nil_bids"] == 1  # R6 N, dealer E
    assert rows["RB+SRP"]["all"]["nil_bids"] == 1  # R4 W


def test_filters(tables: dict[str, Table]) -> None:
    def rounds(f: Filters) -> int:
        return analytics.summary(f)["rounds"]

    assert rounds(Filters(date_from=date(2026, 2, 1))) == 2
    assert rounds(Filters(date_to=date(2026, 1, 10))) == 5
    assert rounds(Filters(date_from=date(2026, 1, 11), date_to=date(2026, 2, 9))) == 0
    assert rounds(Filters(date_from=date(2026, 1, 10), date_to=date(2026, 2, 28))) == 7
    assert rounds(Filters(date_from=date(2026, 1, 11), stand_ins=True)) == 3  # R8, R6, R7
    assert rounds(Filters(rules_key=rules_key(analytics_fixtures.RULES_B))) == 2
    assert rounds(Filters(bot="RB+SRP")) == 5  # A's E/W: a human with RB+SRP
    assert rounds(Filters(bot="MS+WRP")) == 0
    assert rounds(Filters(makeups=("HH",))) == 2  # R6, R7: each counted once
    assert rounds(Filters(makeups=("BB", "HH"))) == 7
    assert analytics.summary(Filters(makeups=("BB",)))["matches"] == 2
    t = analytics.nil_positions(Filters(makeups=("HH",)))
    double = {r["position"]: r for r in t["rows"]}["double nil"]
    assert double["rounds"] == 1 and double["by_makeup"]["HH"]["partnership_rounds"] == 2
    assert analytics.win_rates(Filters(date_from=date(2026, 1, 15)))["matches"] == 2


def test_filters_select_the_measured_partnership(tables: dict[str, Table]) -> None:
    # "BIS+SRP, bot+bot": A's N/S only; no human+bot figure is left anywhere.
    f = Filters(bot="BIS+SRP", makeups=("BB",))
    everything = analytics.all_analyses(f)
    assert everything["summary"]["rounds"] == 5 and everything["summary"]["matches"] == 2
    assert [r["makeup"] for r in everything["win_rates"]["by_makeup"]] == ["BB"]
    assert [p["measured"] for p in everything["win_rates"]["pairings"]] == ["BIS+SRP x2"]
    for row in everything["nil_positions"]["rows"]:
        assert set(row["by_makeup"]) <= {"BB"}
    assert everything["nil_positions"]["rows"][0]["by_makeup"]["BB"]["points_per_round"] == 140
    for row in everything["round_type_win_rates"]["rows"]:
        assert row["by_kind"]["HB"]["n"] == 0 and row["by_kind"]["HH"]["n"] == 0
    players = {r["player"] for r in everything["bidding_accuracy"]["rows"]}
    assert players == {"bot", "BIS+SRP"}
    # N's and S's non-nil bids of R1-R5: N 3, 4, 2 (R2 and R5 nil), S 3, 4, 4, 3, 5.
    assert {r["player"]: r["bids"] for r in everything["bidding_accuracy"]["rows"]} == {
        "bot": 8, "BIS+SRP": 8}  # fmt: skip
    # A bot that is not that make-up's: nothing (the old "any seat" filters gave 5).
    assert analytics.summary(Filters(bot="RB+SRP", makeups=("BB",)))["rounds"] == 0
    # Human+bot against bot+bot: A's E/W; against human+human: nothing.
    hb = analytics.all_analyses(Filters(makeups=("HB",), against=("BB",)))
    assert hb["summary"]["rounds"] == 5
    assert {r["player"] for r in hb["nil_bids"]["rows"]} == {"human", "bot", "RB+SRP"}
    assert hb["points_by_bid_sum"]["rows"][0]["by_makeup"] == {
        "HB": {"partnership_rounds": 1, "points_per_round": 61}}  # fmt: skip
    assert analytics.summary(Filters(makeups=("HB",), against=("HH",)))["rounds"] == 0
    # Both partnerships measured: bot+bot or human+bot against either, rounds once.
    both = Filters(makeups=("BB", "HB"), against=("BB", "HB"))
    assert analytics.summary(both)["rounds"] == 5
    assert analytics.bid_sum_distribution(both)["rounds"] == 5
    assert analytics.nil_positions(both)["rows"][-1]["rounds"] == 1  # R1, no nil


def test_rule_sets_and_bot_names(tables: dict[str, Table]) -> None:
    sets = analytics.rule_sets()
    # Rounds stored (stand-in rounds too: R8).
    assert [(s["label"], s["rounds"]) for s in sets] == [("goal 500/-200", 6), ("goal 200/-100", 2)]
    assert analytics.bot_names_in_use() == ["BIS+SRP", "RB+SRP"]


def test_empty_database() -> None:
    data = analytics.all_analyses(Filters())
    assert (data["summary"]["rounds"], data["summary"]["matches"]) == (0, 0)
    assert data["bid_sums"]["mean"] is None
    assert data["points_histogram"]["edges"] == []


# ----- the write paths fill the columns ----------------------------------------------------


def _random_match(seed: str, rules: Rules) -> Match:
    rng = random.Random(seed)
    match = Match(rules, seed)
    while not match.is_over:
        seat = match.round.to_act
        match.apply(rng.choice(view_for(match, seat).legal_actions))
    return match


def test_store_match_writes_an_ordinary_replayable_match() -> None:

    match = _random_match("store-1", Rules(winning_goal=150, losing_goal=-100))
    table = store_match(match, ["RB+SRP", "MS+SRP", "RB+SRP", "MS+SRP"])
    assert table.status == Table.Status.FINISHED
    assert Action.objects.filter(table=table).count() == match.version
    replayed = matches.load_match(table)
    assert replayed.is_over and replayed.scores == match.scores
    rows = RoundRecordRow.objects.filter(table=table).order_by("round_number")
    assert rows.count() == len(match.rounds)
    row = rows.first()
    assert row is not None
    assert (row.seat_kinds, row.makeup_ns, row.bot_e) == ("BBBB", "BB", "MS+SRP")
    assert row.record["format"] == "spades-round/1"
    result = MatchResult.objects.get(table=table)
    assert (result.winner, result.makeup_ew, result.bot_n) == (match.winner, "BB", "RB+SRP")
    assert analytics.summary(Filters(bot="MS+SRP"))["rounds"] == len(match.rounds)


def test_store_match_refuses_unfinished_matches() -> None:
    with pytest.raises(StorageError):
        store_match(Match(Rules(), "x"), ["RB+SRP"] * 4)


def test_migration_backfill_matches_the_write_path() -> None:
    match = _random_match("store-2", Rules(winning_goal=150, losing_goal=-100))
    table = store_match(match, ["RB+SRP", "MS+SRP", "RB+SRP", "MS+SRP"])
    columns = importlib.import_module("game.migrations.0002_analysis_columns").ROUND_FIELDS
    before = list(RoundRecordRow.objects.filter(table=table).values(*columns))
    blank = {c: ("" if isinstance(before[0][c], str) else 0) for c in columns}
    RoundRecordRow.objects.update(**blank)
    MatchResult.objects.update(rules_key="", makeup_ns="", makeup_ew="", bot_n="")
    migration = importlib.import_module("game.migrations.0002_analysis_columns")
    migration.backfill(django_apps, None)
    assert list(RoundRecordRow.objects.filter(table=table).values(*columns)) == before
    result = MatchResult.objects.get(table=table)
    assert (result.makeup_ns, result.bot_n) == ("BB", "RB+SRP")
    assert result.rules_key == rules_key(table.rules)


@pytest.mark.django_db(transaction=True)
def test_side_by_side_queries_give_the_same_analyses(monkeypatch: pytest.MonkeyPatch) -> None:
    # (On PostgreSQL all_analyses runs its queries on several connections at once.)
    analytics_fixtures.build()
    for filters in (Filters(), Filters(makeups=("HB",)), Filters(bot="RB+SRP")):
        monkeypatch.setattr(analytics, "_side_by_side", lambda: False)
        in_turn = analytics.all_analyses(filters)
        monkeypatch.setattr(analytics, "_side_by_side", lambda: True)
        assert analytics.all_analyses(filters) == in_turn
