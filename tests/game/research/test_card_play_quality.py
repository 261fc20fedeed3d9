"""The dashboard's "Card play quality by round type" (game/research/analytics_quality.py):
its tallies, added when a round's analysis is stored, equal a direct computation from
the RoundAnalysis rows and a rebuild, under every filter; the page shows the table.

The analyses here are made up (``analyse_round`` replaced: a solve per card would take
seconds a round), written through the real writer, ``tasks.analyse_row``;
test_replay_store.py checks the tallies of a real analysis."""

from __future__ import annotations

import math
import random
import statistics
from collections import defaultdict
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from game.engine import Match, Rules, record_of, view_for
from game.models import RoundRecordRow, Table
from game.replays import tasks
from game.replays.analysis import AnalysisError
from game.replays.models import RoundAnalysis
from game.research import tallies
from game.research.analytics import Filters, card_play_quality
from game.research.analytics_quality import mean_interval
from game.research.intervals import Z_95
from game.research.storage import round_row_from_record
from game.research.tally_keys import QUALITY, quality_cells, seat_actor

pytestmark = pytest.mark.django_db

SEATS = "NESW"
RULES = Rules(winning_goal=150, losing_goal=-100)


def _records(seed: str, n: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    while len(out) < n:
        match = Match(RULES, f"{seed}/{len(out)}")
        while not match.is_over:
            seat = match.round.to_act
            match.apply(rng.choice(view_for(match, seat).legal_actions))
        out += [record_of(r) for r in match.rounds if r.result is not None]
    return out[:n]


def made_up(record: dict[str, Any], losses: list[list[tuple[int, int]]]) -> dict[str, Any]:
    """An analysis result whose cards give away ``losses[seat][k]`` (points, tricks)
    on the seat's k-th card, in the record's play order."""
    taken = [0, 0, 0, 0]
    cards = []
    for trick in record["tricks"]:
        leader = SEATS.index(trick["leader"])
        for k, card in enumerate(trick["cards"]):
            s = (leader + k) % 4
            points, lost = losses[s][taken[s]]
            taken[s] += 1
            cards.append({"seat": SEATS[s], "card": card, "points_lost": points,
                          "tricks_lost": lost})  # fmt: skip
    return {"cards": cards, "makeable": [7, 6]}


def analyse(row: RoundRecordRow, result: dict[str, Any] | None, monkeypatch: Any) -> None:
    """Store ``result`` as the row's analysis through the real writer (None: it fails)."""

    def fake(doc: dict[str, Any]) -> dict[str, Any]:
        if result is None:
            raise AnalysisError("the round does not replay")
        return result

    monkeypatch.setattr(tasks, "analyse_round", fake)
    assert tasks.analyse_row(row, with_alternatives=False)


# (kinds, bots, stand-in plays, stand-in bids, pilot, days ago) of the tables
TABLES = [
    ("HBBH", [None, "RB+SRP", "RB+SRP", None], (0, 0, 0, 2), "0000", False, 0),
    ("BBBB", ["RB+SRP", "MS+SRP", "RB+SRP", "MS+SRP"], (0, 0, 0, 0), "0000", False, 40),
    ("HHBB", [None, None, "MS+SRP", "MS+SRP"], (0, 0, 0, 0), "0100", False, 3),
    ("HBHB", [None, "RB+SRP", None, "RB+SRP"], (0, 0, 0, 0), "0000", True, 1),
]


@pytest.fixture
def rounds(monkeypatch: Any) -> list[RoundRecordRow]:
    """Tables of varied seats (a light stand-in, a stand-in round, pilot data, days
    apart), their rounds stored and tallied; each analysed with made-up losses but
    one whose analysis fails and one not analysed."""
    records = _records("quality", 3 * len(TABLES))
    rng = random.Random(5)
    rows = []
    for i, (kinds, bots, plays, bids, pilot, days) in enumerate(TABLES):
        table = Table.objects.create(rules=RULES.to_dict(), status=Table.Status.FINISHED,
                                     pilot=pilot)  # fmt: skip
        finished = timezone.now() - timedelta(days=days)
        mine = []
        for k, rec in enumerate(records[3 * i : 3 * i + 3]):
            row = round_row_from_record(rec, table=table, version=k, kinds=kinds,
                                        bot_names=bots, finished_at=finished,
                                        stand_in_plays=plays if k == 0 else (0, 0, 0, 0),
                                        stand_in_bids=bids)  # fmt: skip
            row.round_number, row.pilot = k + 1, pilot
            row.study_condition = 7 if i < 2 else 0  # a study's tables
            row.band_ns = 2 if i == 0 else 0  # its people's rating band
            row.save()
            mine.append(row)
        tallies.add_rounds(mine)
        rows += mine
    for n, row in enumerate(rows):
        if n == 4:
            analyse(row, None, monkeypatch)
        elif n != 7:
            losses = [[(rng.choice((0, 0, 0, 1, 10, 40)), rng.choice((0, 0, 1))) for _ in range(13)]
                      for _ in range(4)]  # fmt: skip
            analyse(row, made_up(row.record, losses), monkeypatch)
    return rows


def direct(filters: Filters) -> dict[tuple[int, str], list[int]]:
    """(seat's round type, actor) -> each seat-round's points given away, computed from
    the RoundAnalysis rows of the partnerships the filters measure."""
    out: dict[tuple[int, str], list[int]] = defaultdict(list)
    for a in RoundAnalysis.objects.filter(error="").select_related("round"):
        r = a.round
        if not filters.stand_ins and r.stand_in_round:
            continue
        if not filters.pilot and r.pilot:
            continue
        if filters.date_from and timezone.localdate(r.finished_at) < filters.date_from:
            continue
        if filters.conditions and r.study_condition not in filters.conditions:
            continue
        for p, side, opp in ((0, "ns", "ew"), (1, "ew", "ns")):
            if filters.bot and getattr(r, f"bot_{side}") != filters.bot:
                continue
            if filters.makeups and getattr(r, f"makeup_{side}") not in filters.makeups:
                continue
            if filters.against and getattr(r, f"makeup_{opp}") not in filters.against:
                continue
            if filters.bands and getattr(r, f"band_{side}") not in filters.bands:
                continue
            for s in (p, p + 2):
                values = {c: getattr(r, c) for c in tallies.QUALITY_COLUMNS}
                points = sum(c["points_lost"] for c in a.result["cards"] if c["seat"] == SEATS[s])
                who = seat_actor(values, s)
                out[getattr(r, f"round_type_{SEATS[s].lower()}"), who].append(points)
                out[0, who].append(points)
    return out


def check(filters: Filters) -> None:
    want = direct(filters)
    assert want  # every case keeps some seats
    got = {(row["type"], row["actor"]): row for row in card_play_quality(filters)["rows"]}
    assert set(got) == set(want)
    for key, values in want.items():
        row = got[key]
        assert row["seat_rounds"] == len(values) and row["cards"] == 13 * len(values)
        assert row["points_per_round"]["mean"] == pytest.approx(statistics.mean(values))
        assert row["points_per_card"]["mean"] == pytest.approx(sum(values) / (13 * len(values)))
        if len(values) >= 2:
            half = Z_95 * statistics.stdev(values) / math.sqrt(len(values))
            lo, hi = row["points_per_round"]["ci95"]
            assert (lo, hi) == pytest.approx((statistics.mean(values) - half,
                                              statistics.mean(values) + half))  # fmt: skip
            assert row["points_per_card"]["ci95"] == pytest.approx([lo / 13, hi / 13])


def test_a_seat_rounds_cells_worked_by_hand() -> None:
    r = {"rules_key": "k", "stand_in_round": False, "makeup_ns": "HB", "makeup_ew": "BB",
         "bot_ns": "BIS+SRP", "bot_ew": "RB+SRP", "seat_kinds": "HBBB", "bot_n": "",
         "bot_e": "RB+SRP", "bot_s": "BIS+SRP", "bot_w": "RB+SRP", "stand_in_n": 1,
         "stand_in_e": 0, "stand_in_s": 0, "stand_in_w": 0, "stand_in_bids": "0000",
         "round_type_n": 6, "round_type_e": 8, "round_type_s": 7, "round_type_w": 8,
         "study_condition": 0, "pilot": False, "band_ns": 2, "band_ew": 0}  # fmt: skip
    losses = {"cards": [13] * 4, "dd_points_lost": [79, 0, 12, 3], "dd_tricks_lost": [1, 0, 2, 0]}
    cells = dict(quality_cells(r, losses))
    head = ("k", False, "HB", "BIS+SRP", "BB", False)
    # North: a human whose stand-in played a card, kept apart; we nil (6)
    assert cells[(*head, QUALITY, "human+stand-in", 6, 0, 0, False, 2, 0)] == [
        1, 13, 1, 79, 79 * 79, 1]  # fmt: skip
    assert cells[(*head, QUALITY, "BIS+SRP", 7, 0, 0, False, 2, 0)] == [1, 13, 2, 12, 144, 4]
    assert cells[(*head, "D", "", 1, 0, 0, False, 2, 0)] == [1, 0, 0, 0, 0, 0]
    # East and West: one cell of two seat-rounds once summed, 3 points in all
    ew = ("k", False, "BB", "RB+SRP", "HB", False, QUALITY, "RB+SRP", 8, 0, 0, False, 0, 2)
    assert [c for k, c in quality_cells(r, losses) if k == ew] == [[1, 13, 0, 0, 0, 0],
                                                                   [1, 13, 0, 3, 9, 0]]  # fmt: skip
    # a round that could not be analysed: D with a = 0 per partnership, nothing else
    assert [k[6:9] for k, _ in quality_cells(r, None)] == [("D", "", 0), ("D", "", 0)]


def test_the_interval_worked_by_hand() -> None:
    # seat-rounds 0, 10 and 20 points: mean 10, sd 10, half-width 1.96 * 10 / sqrt 3
    got = mean_interval(30, 0 + 100 + 400, 3)
    assert got["mean"] == 10 and got["sd"] == pytest.approx(10)
    assert got["ci95"] == pytest.approx([10 - 11.3159, 10 + 11.3159], abs=1e-3)
    assert mean_interval(7, 49, 1) == {"mean": 7, "ci95": None, "sd": None}


def test_tallies_from_analyses_equal_the_analyses_and_a_rebuild(rounds: list[Any]) -> None:
    assert tallies.stored() == tallies.scan()
    kept = tallies.stored()
    tallies.rebuild()
    assert tallies.stored() == kept
    q = card_play_quality(Filters(stand_ins=True, pilot=True))
    # 12 rounds: 10 analysed, 1 failed (it adds to no row), 1 not analysed yet
    assert (q["rounds_analysed"], q["rounds_failed"]) == (10, 1)
    assert sum(r["seat_rounds"] for r in q["rows"] if r["type"] == 0) == 40
    assert [a["key"] for a in q["actors"]] == ["human", "human+stand-in", "MS+SRP", "RB+SRP"]


@pytest.mark.parametrize(
    "filters",
    [
        Filters(),
        Filters(stand_ins=True, pilot=True),
        Filters(pilot=True),
        Filters(bot="RB+SRP", stand_ins=True, pilot=True),
        Filters(makeups=("HB",), stand_ins=True, pilot=True),
        Filters(against=("BB",), pilot=True),
        Filters(date_from=timezone.localdate() - timedelta(days=5), stand_ins=True),
        Filters(conditions=(7,), stand_ins=True, pilot=True),
        Filters(conditions=(0,), stand_ins=True, pilot=True),
        Filters(bands=(2,)),
    ],
)
def test_every_filter_gives_the_direct_computation(rounds: list[Any], filters: Filters) -> None:
    check(filters)


def test_a_stand_in_round_and_pilot_data_are_left_out_by_default(rounds: list[Any]) -> None:
    everything = card_play_quality(Filters(stand_ins=True, pilot=True))
    default = card_play_quality(Filters())
    assert default["rounds_analysed"] < everything["rounds_analysed"]
    # the HHBB table's rounds are stand-in rounds (a stand-in bid); the HBHB one pilot data
    assert RoundRecordRow.objects.filter(stand_in_round=True).count() == 3
    # left out: the HHBB table's 2 analysed rounds (its 2nd is not analysed), HBHB's 3
    assert default["rounds_analysed"] == 10 - 2 - 3


def test_the_dashboard_shows_the_table(rounds: list[Any], client: Client) -> None:
    user = get_user_model().objects.create_user("boss", password="pw-boss-123", is_staff=True)
    client.force_login(user)
    page = client.get("/dashboard/", {"stand_ins": "on", "pilot": "on"})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="card-play-quality"' in html
    assert "double-dummy (all hands known) analysis" in html
    assert "<strong>10</strong> of the <strong>12</strong> rounds" in html
    assert "<strong>1</strong> could not be analysed" in html
    q = card_play_quality(Filters(stand_ins=True, pilot=True))
    human = next(r for r in q["rows"] if r["type"] == 0 and r["actor"] == "human")
    assert f"<td>{human['points_per_round']['mean']:.1f} <small>" in html
    assert html.count('data-actor="human+stand-in"') >= 1
    bad = client.get("/dashboard/", {"date_from": "2026-13-40"})
    assert bad.status_code == 400 and 'id="card-play-quality"' not in bad.content.decode()
