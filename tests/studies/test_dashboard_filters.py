"""The staff dashboard and the round exports by study and condition, pilot data
left out unless asked: read from the tallies, and equal to counts over the
round rows themselves; the migration that gives older study tables their keys."""

from __future__ import annotations

import csv
import importlib
import io
import random
from collections import defaultdict
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.core.management import call_command
from django.test import Client

from game.models import MatchResult, RoundRecordRow, RoundTally, Table
from game.research import analytics, tallies, tally_flush
from game.research.analytics import Filters
from studies.loading import load_study
from studies.models import StudyTable
from tests.studies.conftest import example_text
from tests.support.helpers import QUICK_RULES, make_table, play_humans
from tests.support.live_tables import live as live  # the fixture
from tests.support.study_tables import ONE, TWO, arrive, poll

pytestmark = pytest.mark.django_db(transaction=True)  # the tallies follow each move's commit

CHEAP = "Random+Random"


@pytest.fixture
def played(study_file: Any, live: Any) -> dict[str, Any]:
    """A (non-pilot) study with a table in each condition and a pilot participant's
    table in the first, a match played out at each; and a table of no study."""
    text = example_text().replace("BIS+SRP", CHEAP).replace("RB+SRP", CHEAP)
    study = load_study(study_file(text.replace("pilot = true", "pilot = false")))[0]
    one, two = (study.conditions.get(position=c) for c in (ONE, TWO))
    poll(arrive(study, ONE))
    pilot = arrive(study, ONE)
    pilot.pilot = True
    pilot.save()
    poll(pilot)
    arrive(study, TWO)
    poll(arrive(study, TWO))
    tables = {t.table.pk: t for t in StudyTable.objects.select_related("table")}
    assert len(tables) == 3
    rng = random.Random(11)
    for t in tables.values():
        play_humans(t.table, rng)
    lobby = play_humans(make_table("HBHB", QUICK_RULES, bot=CHEAP), rng)
    tally_flush.flush_pending()
    pilot_table = StudyTable.objects.get(seats__participant=pilot).table
    return {"study": study, "one": one, "two": two, "pilot": pilot_table, "lobby": lobby}


def _rows(**where: Any) -> list[RoundRecordRow]:
    return list(RoundRecordRow.objects.filter(**where))


def _by_hand(rows: list[RoundRecordRow]) -> dict[tuple[int, str], list[int]]:
    """(round type, make-up) -> [partnership-rounds, won], counted round by round."""
    cells: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        for side, opp, seats in (("ns", "ew", "ns"), ("ew", "ns", "ew")):
            won = getattr(r, f"points_{side}") > getattr(r, f"points_{opp}")
            for t in {getattr(r, f"round_type_{s}") for s in seats}:
                c = cells[t, getattr(r, f"makeup_{side}")]
                c[0] += 1
                c[1] += won
    return dict(cells)


def test_study_rounds_show_under_their_condition_and_pilot_data_only_when_asked(
    played: dict[str, Any],
) -> None:
    one, two, pilot, lobby = played["one"], played["two"], played["pilot"], played["lobby"]
    assert (pilot.study_condition, pilot.pilot) == (one.pk, True)
    assert Table.objects.get(pk=lobby.pk).study_condition == 0
    # Every round and match of a study table carries its condition and pilot flag.
    for t in StudyTable.objects.select_related("table"):
        rows = RoundRecordRow.objects.filter(table=t.table)
        assert rows.exists()
        assert set(rows.values_list("study_condition", "pilot")) == {
            (t.condition_id, t.table.pilot)
        }
        result = MatchResult.objects.get(table=t.table)
        assert (result.study_condition, result.pilot) == (t.condition_id, t.table.pilot)
    assert tallies.stored() == tallies.scan()

    def rounds(f: Filters) -> int:
        return analytics.summary(f)["rounds"]

    everything = RoundRecordRow.objects.count()
    pilots = len(_rows(pilot=True))
    assert pilots and rounds(Filters()) == everything - pilots  # left out by default
    assert rounds(Filters(pilot=True)) == everything  # included when asked
    assert analytics.summary(Filters())["pilot_rounds"] == pilots
    assert rounds(Filters(conditions=(one.pk,))) == len(_rows(study_condition=one.pk, pilot=False))
    assert rounds(Filters(conditions=(one.pk,), pilot=True)) == len(_rows(study_condition=one.pk))
    assert rounds(Filters(conditions=(two.pk,))) == len(_rows(study_condition=two.pk))
    assert rounds(Filters(conditions=(0,))) == len(_rows(table=lobby))
    assert analytics.summary(Filters(conditions=(two.pk,)))["matches"] == 1
    # The round exports: the same rounds.
    out = io.StringIO()
    call_command("export_rounds", "--format", "csv", "--study", played["study"].slug, stdout=out)
    exported = {r["table"] for r in csv.DictReader(io.StringIO(out.getvalue()))}
    study_tables = StudyTable.objects.exclude(table=pilot)
    assert exported == set(study_tables.values_list("table__public_id", flat=True))
    out = io.StringIO()
    call_command("export_rounds", "--format", "csv", "--include-pilot", stdout=out)
    assert len(list(csv.DictReader(io.StringIO(out.getvalue())))) == everything


def test_the_dashboard_reads_the_round_type_table_per_condition(
    played: dict[str, Any], admin_client: Client, study_file: Any
) -> None:
    study, one, two = played["study"], played["one"], played["two"]
    for pilot in (False, True):
        query = {"study": study.slug, "stand_ins": "on"} | ({"pilot": "on"} if pilot else {})
        page = admin_client.get("/dashboard/", query)
        assert page.status_code == 200
        data = page.context["data"]
        by_condition = data["round_types_by_condition"]
        assert [(c["id"], c["name"]) for c in by_condition] == [(one.pk, one.name),
                                                               (two.pk, two.name)]  # fmt: skip
        for c in by_condition:
            rows = _rows(study_condition=c["id"], **({} if pilot else {"pilot": False}))
            got = {(r["type"], k["key"]): [x["n"], x["won"]]
                   for r in c["rows"] for k, x in zip(c["kinds"], r["cells"], strict=True)
                   if x["n"]}  # fmt: skip
            assert got == _by_hand(rows), (pilot, c["name"])
            for r in c["rows"]:
                for x in r["cells"]:
                    lo, hi = x["win_ci95"]
                    assert x["n"] == 0 or lo <= x["won"] / x["n"] <= hi
        assert data["summary"]["rounds"] == len(
            _rows(study_condition__in=[one.pk, two.pk], **({} if pilot else {"pilot": False}))
        )
        html = page.content.decode()
        assert 'id="round-types-by-condition"' in html and f'data-condition="{two.pk}"' in html
    # The study's monitor links here.
    monitor = admin_client.get(f"/dashboard/studies/{study.slug}/").content.decode()
    assert f'id="mon-analyses" href="/dashboard/?study={study.slug}"' in monitor
    # One condition; a condition of another study is refused and the page says why.
    page = admin_client.get("/dashboard/", {"condition": str(two.pk)})
    assert [c["id"] for c in page.context["data"]["round_types_by_condition"]] == [two.pk]
    text = study.source.replace(f'slug = "{study.slug}"', 'slug = "another-study"')
    other = load_study(study_file(text, name="another.toml"))[0]
    bad = admin_client.get("/dashboard/", {"study": other.slug, "condition": str(one.pk)})
    assert bad.context["data"] is None
    assert "not one of the study" in bad.content.decode()
    # No study chosen: no per-condition table; pilot data left out, and said so.
    page = admin_client.get("/dashboard/")
    assert page.context["data"]["round_types_by_condition"] is None
    assert "pilot data left out" in page.context["data"]["measured"]


def test_the_migration_gives_older_study_tables_their_keys_as_a_rebuild_would(
    played: dict[str, Any],
) -> None:
    keys = ("table_id", "study_condition", "pilot")
    rows = sorted(RoundRecordRow.objects.values_list(*keys))
    results = sorted(MatchResult.objects.values_list(*keys))
    cells = tallies.stored()
    # As before the keys: no table, row or tally knew its study.
    for model in (Table, RoundRecordRow, MatchResult):
        model.objects.update(study_condition=0, pilot=False)
    tallies.rebuild()
    assert tallies.stored() != cells
    migration = importlib.import_module("studies.migrations.0005_tables_study_keys")
    migration.backfill(django_apps, None)
    assert sorted(RoundRecordRow.objects.values_list(*keys)) == rows
    assert sorted(MatchResult.objects.values_list(*keys)) == results
    assert tallies.stored() == cells == tallies.scan()
    assert set(RoundTally.objects.values_list("shard", flat=True)) == {0}
    call_command("rebuild_tallies", "--check", stdout=io.StringIO())
