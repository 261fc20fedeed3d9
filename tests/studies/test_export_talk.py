"""Table talk in a study's export: chat.csv when the study file allows free
chat, named by pseudonym (not the first name the table showed); none when talk
is off (the default) or only quick reactions (never stored)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from game.models import ChatLine
from studies import export
from studies.loading import load_study
from studies.models import Study, StudySeat
from tests.studies.conftest import example_text
from tests.support.study_tables import ONE, arrive, poll

pytestmark = pytest.mark.django_db


def study_with(study_file, talk: str | None) -> Study:  # type: ignore[no-untyped-def]
    text = example_text()
    if talk is not None:
        text = text.replace("rated = true", f'rated = true\ntalk = "{talk}"')
    return load_study(study_file(text))[0]


def test_free_chat_is_exported_by_pseudonym(study_file, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    study = study_with(study_file, "chat")
    p = poll(arrive(study, ONE))
    seat = StudySeat.objects.select_related("study_table__table").get(participant=p)
    table = seat.study_table.table
    assert table.talk == "chat"
    ChatLine.objects.create(table=table, seat=seat.position, name="Sam", text="good luck")
    ChatLine.objects.create(table=table, seat=None, name="Researcher", text="hello")
    paths = export.export_study(study, tmp_path, include_pilot=True)
    assert tmp_path / "chat.csv" in paths
    with (tmp_path / "chat.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["table"], r["match"], r["seat"], r["player"], r["text"]) for r in rows] == [
        (table.public_id, "1", "NESW"[seat.position], p.pseudonym, "good luck"),
        (table.public_id, "1", "", "", "hello"),
    ]
    assert all(r["at"] for r in rows) and "Sam" not in (tmp_path / "chat.csv").read_text()
    assert "## chat.csv" in (tmp_path / "codebook.md").read_text()


@pytest.mark.parametrize("talk", [None, "off", "reactions"])
def test_no_chat_file_without_free_chat(study_file, tmp_path: Path, talk: str | None) -> None:  # type: ignore[no-untyped-def]
    study = study_with(study_file, talk)
    poll(arrive(study, ONE))
    export.export_study(study, tmp_path, include_pilot=True)
    assert not (tmp_path / "chat.csv").exists()
    assert "chat.csv" not in (tmp_path / "codebook.md").read_text()
