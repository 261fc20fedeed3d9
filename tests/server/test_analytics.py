"""The dashboard's analyses against figures worked out by hand.

The rounds and the sums are in tests/server/analytics_fixtures.py.
"""

from __future__ import annotations

import importlib
import random
from datetime import date

import pytest
from django.apps import apps as django_apps

from game import analytics, matches
from game.analytics import Filters, wilson_interval
from game.engine import Match, Rules, view_for
from game.models import Action, MatchResult, RoundRecordRow, Table
from game.round_columns import rules_key
from game.storage import StorageError, store_match
from tests.server import analytics_fixtures

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
    assert w["matches"] == 3
    by = {r["makeup"]: r for r in w["by_makeup"]}
    # BB: A (lost), C (won); HB: A (won), C (lost); HH: both sides of B, N/S won.
    assert {m: (r["partnership_matches"], r["wins"]) for m, r in by.items()} == {
        "BB": (2, 1),
        "HB": (2, 1),
        "HH": (2, 1),
    }
    assert by["BB"]["ci95"] == approx(list(wilson_interval(1, 2)))
    pairings = {(p["first"], p["second"]): p for p in w["pairings"]}
    assert pairings["BB", "HB"]["matches"] == 2 and pairings["BB", "HB"]["first_wins"] == 1
    assert pairings["HH", "HH"]["matches"] == 1 and pairings["HH", "HH"]["win_rate"] == 1.0


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


def test_round_types(tables: dict[str, Table]) -> None:
    rt = {r["label"]: r for r in analytics.round_types(Filters())["rows"]}
    assert len(rt) == 10
    over = rt["over"]  # R1 (sum 12) and R7 (11), all four seats
    assert over["all"]["seat_rounds"] == 8
    assert over["all"]["points_per_round"] == approx(268 / 8)
    assert over["all"]["make_rate"] == 0.75 and over["all"]["set_rate"] == 0.25
    assert over["by_kind"]["H"]["seat_rounds"] == 5
    assert over["by_kind"]["H"]["points_per_round"] == approx(87 / 5)
    assert over["by_kind"]["H"]["make_rate"] == approx(0.6)
    assert over["by_kind"]["B"]["points_per_round"] == approx(181 / 3)
    we_nil = rt["we nil"]  # R5's nils are "nil vs nil" for every seat
    assert we_nil["by_kind"]["H"]["seat_rounds"] == 3  # R3 E, R6 N, R6 S
    assert we_nil["by_kind"]["H"]["points_per_round"] == approx((-69 + 101 + 101) / 3)
    assert we_nil["by_kind"]["B"]["points_per_round"] == approx((140 + 141) / 2)
    assert rt["nil vs nil"]["all"]["seat_rounds"] == 4
    assert rt["under"]["all"]["seat_rounds"] == 0
    assert rt["double nil"]["all"]["seat_rounds"] == 2  # R6: E and W see both opponents nil


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
    assert rounds(Filters(rules_key=rules_key(analytics_fixtures.RULES_B))) == 2
    assert rounds(Filters(bots=("RB+SRP",))) == 5
    assert rounds(Filters(bots=("MS+WRP",))) == 0
    assert rounds(Filters(makeups=("HH",))) == 2
    assert rounds(Filters(makeups=("BB", "HH"))) == 7
    assert analytics.summary(Filters(makeups=("BB",)))["matches"] == 2
    t = analytics.nil_positions(Filters(makeups=("HH",)))
    assert {r["position"]: r["rounds"] for r in t["rows"]}["double nil"] == 1
    assert analytics.win_rates(Filters(date_from=date(2026, 1, 15)))["matches"] == 2
    everything = analytics.all_analyses(Filters(makeups=("HB",), bots=("BIS+SRP",)))
    assert everything["summary"] == {"rounds": 5, "matches": 2}


def test_rule_sets_and_bot_names(tables: dict[str, Table]) -> None:
    sets = analytics.rule_sets()
    assert [(s["label"], s["rounds"]) for s in sets] == [("goal 500/-200", 5), ("goal 200/-100", 2)]
    assert analytics.bot_names_in_use() == ["BIS+SRP", "RB+SRP"]


def test_empty_database() -> None:
    data = analytics.all_analyses(Filters())
    assert data["summary"] == {"rounds": 0, "matches": 0}
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
    assert analytics.summary(Filters(bots=("MS+SRP",)))["rounds"] == len(match.rounds)


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


def test_tournament_store_option_stores_the_tournaments_games() -> None:
    import argparse
    import io

    from bots.tournament import add_arguments, run_from_options
    from game.storage import add_store_option, store_if_asked

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    add_store_option(parser)
    argv = ["--ns", "RB+SRP", "--ew", "MS+SRP", "--games", "4", "--seed", "9", "--store",
            "--no-progress"]  # fmt: skip
    opts = vars(parser.parse_args(argv))
    summary = run_from_options(opts, None)
    out = io.StringIO()
    assert store_if_asked(opts, out) == 4
    assert "stored 4 matches" in out.getvalue()
    assert MatchResult.objects.count() == 4
    # The stored games are the tournament's (same seeds, seats and bot random streams).
    assert RoundRecordRow.objects.count() == summary["rounds"]
    a_wins = MatchResult.objects.filter(winner=0, bot_n="RB+SRP").count()
    assert a_wins == summary["sides"][0]["wins"]
    assert store_if_asked({**opts, "store": False}, out) == 0


@pytest.mark.django_db(transaction=True)
def test_side_by_side_queries_give_the_same_analyses(monkeypatch: pytest.MonkeyPatch) -> None:
    # (On PostgreSQL all_analyses runs its queries on several connections at once.)
    analytics_fixtures.build()
    for filters in (Filters(), Filters(makeups=("HB",)), Filters(bots=("RB+SRP",))):
        monkeypatch.setattr(analytics, "_side_by_side", lambda: False)
        in_turn = analytics.all_analyses(filters)
        monkeypatch.setattr(analytics, "_side_by_side", lambda: True)
        assert analytics.all_analyses(filters) == in_turn
