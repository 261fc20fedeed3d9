"""``manage.py load_study``: prints the slug, updates a study nobody took part
in, refuses one somebody did, and changes nothing on an error."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from studies import participants
from studies.models import Condition, Study
from tests.studies.conftest import example_text, line_of

pytestmark = pytest.mark.django_db


def load(path: Path) -> str:
    out = io.StringIO()
    call_command("load_study", str(path), stdout=out)
    return out.getvalue().strip()


def snapshot() -> list[tuple]:
    return [
        (s.slug, s.definition_hash, [(c.name, c.seat_plan) for c in s.conditions.all()])
        for s in Study.objects.order_by("slug")
    ]


def test_load_study_prints_the_slug_and_updates_while_nobody_took_part(study_file) -> None:
    assert load(study_file()) == "partner-trust-pilot"
    study = Study.objects.get()
    assert [c.name for c in study.conditions.all()] == ["human-with-bot-partner", "two-humans"]
    assert study.definition["completion"]["code"] == "C7XK2P9Q" and study.pilot

    changed = example_text().replace('name = "two-humans"', 'name = "two-people"')
    assert load(study_file(changed)) == "partner-trust-pilot"
    study.refresh_from_db()
    assert Study.objects.count() == 1 and study.source == changed
    assert [c.name for c in study.conditions.all()] == ["human-with-bot-partner", "two-people"]
    assert Condition.objects.count() == 2


def test_load_study_refuses_to_change_a_study_somebody_took_part_in(study_file) -> None:
    load(study_file())
    participants.consent(Study.objects.get(), {"PROLIFIC_PID": "abc123"})
    before = snapshot()
    changed = example_text().replace('name = "two-humans"', 'name = "two-people"')
    with pytest.raises(CommandError, match="already has participants"):
        load(study_file(changed))
    assert snapshot() == before


def test_load_study_reports_every_problem_and_changes_nothing(study_file) -> None:
    load(study_file())
    before = snapshot()
    bad = (
        example_text()
        .replace('name = "two-humans"', 'name = "renamed"')  # would change, were it valid
        .replace('W = "RB+SRP"', 'W = "RB+NOPE"')
        .replace('answer = "Spades"', 'answer = "Clubs"')
    )
    path = study_file(bad, "bad.toml")
    err = io.StringIO()
    with pytest.raises(CommandError, match="2 problem"):
        call_command("load_study", str(path), stdout=io.StringIO(), stderr=err)
    lines = err.getvalue().splitlines()
    assert lines[0].startswith(f"{path}:{line_of(bad, 'RB+NOPE')}: seat W: 'RB+NOPE'")
    assert (
        lines[1] == f"{path}:{line_of(bad, 'Clubs')}: the answer 'Clubs' is not among the options"
    )
    assert snapshot() == before


def test_load_study_names_a_missing_file(tmp_path: Path) -> None:
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("load_study", str(tmp_path / "none.toml"), stderr=err)
    assert err.getvalue().startswith(f"{tmp_path / 'none.toml'}:1: cannot read the file")
    assert not Study.objects.exists()
