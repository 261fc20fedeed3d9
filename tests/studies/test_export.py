"""``export_study``: the files and their codebook agree; pilots left out unless
asked; the raw recruitment ID in payments.csv only, and only when asked."""

from __future__ import annotations

import csv
import hashlib
import io
import re
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from game.models import Action, Seat, Table
from studies import export, intake, participants
from studies.export import FILES, StudyTableSeats, bonus_for, export_study
from studies.models import Assignment, AuditEntry, Participant, Study
from tests.studies.conftest import EXAMPLE
from tests.support.study_export import rows_of, through_the_study

pytestmark = pytest.mark.django_db
Stage = Participant.Stage


def every_text(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir()}


def test_the_files_hold_the_participants_answers_and_conditions(
    study: Study, tmp_path: Path
) -> None:
    first = through_the_study(study, "raw000first")
    second = through_the_study(study, "raw000second")
    written = export_study(study, tmp_path)
    assert [p.name for p in written] == [
        "participants.csv",
        "answers.csv",
        "conditions.csv",
        "rounds.csv",
        "actions.csv",
        "audit.csv",
        "study.toml",
        "codebook.md",
    ]
    people = rows_of(tmp_path / "participants.csv")
    assert [p["pseudonym"] for p in people] == [first.pseudonym, second.pseudonym]
    row = people[0]
    assert row["condition"] == first.condition.name and row["pilot"] == "false"
    assert row["stage"] == "completed" and row["quiz_attempts"] == "2"
    assert row["entered_waiting"] == first.stage_times["waiting"] and row["entered_dropped"] == ""
    answers = rows_of(tmp_path / "answers.csv")
    assert len(answers) == 2 * (3 + 3 + 4)
    mine = [a for a in answers if a["pseudonym"] == first.pseudonym]
    assert mine[0] == {
        "pseudonym": first.pseudonym,
        "kind": "questionnaire",
        "item_id": "partner_trust",
        "attempt": "",
        "value": "4",
    }
    quiz = {(a["attempt"], a["item_id"]): a["value"] for a in mine if a["kind"] == "quiz"}
    assert quiz[("1", "q2")] == "Hearts" and quiz[("2", "q2")] == "Spades"
    conditions = rows_of(tmp_path / "conditions.csv")
    assert conditions[1] == {
        "name": "two-humans",
        "seat_n": "participant",
        "seat_e": "BIS+SRP",
        "seat_s": "participant",
        "seat_w": "BIS+SRP",
        "disclosure": "names",
    }
    assert (tmp_path / "actions.csv").read_text().startswith("table,match,version,round,seat,")
    assert rows_of(tmp_path / "actions.csv") == [] and export.study_tables(study) == []
    assert (tmp_path / "rounds.csv").read_text().startswith("table,match,condition,round,")
    assert rows_of(tmp_path / "rounds.csv") == []


def test_the_codebook_describes_exactly_the_columns_of_each_file(
    study: Study, tmp_path: Path
) -> None:
    through_the_study(study, "raw000first")
    export_study(study, tmp_path, with_payments=True)
    book = (tmp_path / "codebook.md").read_text()
    assert study.definition_hash in book and "Pilot participants are left out." in book
    sections = re.split(r"^## ", book, flags=re.M)[1:]
    described = {
        s.splitlines()[0]: re.findall(r"^\| `([a-z_]+)` \| [^|]+ \|", s, flags=re.M)
        for s in sections
    }
    assert list(described) == [spec.name for spec in FILES]
    for spec in FILES:
        if not spec.header:  # bulk_bonus.csv: Prolific takes no header
            assert described[spec.name] == spec.names == ["recruitment_id", "amount"]
            continue
        header = next(csv.reader((tmp_path / spec.name).open(newline="")))
        assert header == described[spec.name] == spec.names, spec.name
    assert all(c.meaning and c.type for spec in FILES for c in spec.columns)
    assert "never below zero" in book and "paid outcome" in book


def test_pilots_are_left_out_unless_asked(study: Study, tmp_path: Path) -> None:
    kept = through_the_study(study, "raw000first")
    pilot = through_the_study(study, "raw000pilot", pilot=True)
    export_study(study, tmp_path / "main", with_payments=True)
    export_study(study, tmp_path / "all", with_payments=True, include_pilot=True)
    for name in ("participants.csv", "answers.csv", "payments.csv"):
        main = {r["pseudonym"] for r in rows_of(tmp_path / "main" / name)}
        assert main == {kept.pseudonym}, name
        every = {r["pseudonym"] for r in rows_of(tmp_path / "all" / name)}
        assert every == {kept.pseudonym, pilot.pseudonym}, name
    assert "included (see `pilot`)" in (tmp_path / "all" / "codebook.md").read_text()


def test_the_raw_id_is_only_in_payments_and_only_when_asked(study: Study, tmp_path: Path) -> None:
    secrets = ("raw000first", "s-raw000first", "raw000second")
    first, _ = through_the_study(study, "raw000first"), through_the_study(study, "raw000second")
    export_study(study, tmp_path / "plain", include_pilot=True)
    for name, text in every_text(tmp_path / "plain").items():
        assert not [s for s in secrets if s in text], name
    export_study(study, tmp_path / "paid", with_payments=True, include_pilot=True)
    for name, text in every_text(tmp_path / "paid").items():
        holds = [s for s in secrets if s in text]
        assert holds == ([] if name != "payments.csv" else ["raw000first", "raw000second"])
    payments = rows_of(tmp_path / "paid" / "payments.csv")
    assert payments[0] == {
        "pseudonym": first.pseudonym,
        "recruitment_id": "raw000first",
        "outcome": "completed",
        "outcome_at": first.stage_times["completed"],
        "completed": "true",
        "completion_code": "C7XK2P9Q",
        "rounds_played": "0",
        "points": "",
        "paid": "true",
        "bonus": "",
        "currency": "GBP",
    }


def test_an_unfinished_participant_has_no_completion_code(study: Study, tmp_path: Path) -> None:
    participants.consent(study, {"PROLIFIC_PID": "raw000early"})
    Participant.objects.update(pilot=False)
    export_study(study, tmp_path, with_payments=True)
    row = rows_of(tmp_path / "payments.csv")[0]
    assert row["completed"] == "false" and row["completion_code"] == ""


def test_bonus_follows_the_rule() -> None:
    rule = {"per_point": "0.01", "currency": "GBP", "cap": "1.50"}
    assert bonus_for(120, rule) == Decimal("1.20")
    assert bonus_for(400, rule) == Decimal("1.50")
    assert bonus_for(-50, rule) == Decimal("0.00")
    assert bonus_for(7, {"per_point": "0.005", "cap": None}) == Decimal("0.04")


def test_actions_at_a_study_table_name_the_participant_or_the_bot(
    study: Study, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    person = through_the_study(study, "raw000first")
    table = Table.objects.create()
    for position in range(4):
        bot = position != 2
        Seat.objects.create(
            table=table,
            position=position,
            kind="bot" if bot else "human",
            bot_name="BIS+SRP" if bot else "",
            guest_name="" if bot else "Sofia",
        )
    Action.objects.create(table=table, version=1, round_number=1, seat=2, action={"bid": 3},
                          think_ms=1800, think_bound_ms=1900)  # fmt: skip
    Action.objects.create(table=table, version=2, round_number=1, seat=3, action={"bid": 2})
    other = Table.objects.create()  # a table of nobody exported: left out
    Action.objects.create(table=other, version=1, round_number=1, seat=0, action={"bid": 1})
    tables = [StudyTableSeats(table, {2: person.pseudonym}), StudyTableSeats(other, {2: "p0"})]
    monkeypatch.setattr(export, "study_tables", lambda study: tables)
    export_study(study, tmp_path)
    rows = rows_of(tmp_path / "actions.csv")
    assert [(r["table"], r["version"], r["seat"], r["player"]) for r in rows] == [
        (table.public_id, "1", "S", person.pseudonym),
        (table.public_id, "2", "W", "BIS+SRP"),
    ]
    assert rows[0]["action"] == '{"bid":3}' and rows[0]["player_kind"] == "participant"
    assert (rows[0]["think_ms"], rows[0]["think_bound_ms"]) == ("1800", "1900")
    assert rows[1]["by_stand_in"] == "false" and rows[1]["think_ms"] == ""


def test_the_export_study_command_writes_the_files(study: Study, tmp_path: Path) -> None:
    through_the_study(study, "raw000first")
    out = io.StringIO()
    call_command("export_study", study.slug, "--out", str(tmp_path / "x"), stdout=out)
    assert out.getvalue().split() == [
        str(tmp_path / "x" / n)
        for n in (
            "participants.csv",
            "answers.csv",
            "conditions.csv",
            "rounds.csv",
            "actions.csv",
            "audit.csv",
            "study.toml",
            "codebook.md",
        )  # fmt: skip
    ]
    call_command(
        "export_study", study.slug, "--out", str(tmp_path / "y"), "--with-payments",
        "--include-pilot", stdout=io.StringIO(),
    )  # fmt: skip
    assert len(rows_of(tmp_path / "y" / "payments.csv")) == 1
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("export_study", "nope", "--out", str(tmp_path / "z"))


def test_the_export_carries_the_assignment_the_outcome_and_the_study_file(
    study: Study, tmp_path: Path
) -> None:
    first = through_the_study(study, "raw000first")
    second = through_the_study(study, "raw000second")
    export_study(study, tmp_path)
    rows = {r["pseudonym"]: r for r in rows_of(tmp_path / "participants.csv")}
    for p in (first, second):
        slot = Assignment.objects.get(participant=p)
        row = rows[p.pseudonym]
        assert (
            row["assignment_sequence"],
            row["assignment_block"],
            row["position_in_block"],
            row["assignment_seed"],
        ) == (str(slot.sequence), str(slot.block), str(slot.position_in_block), slot.seed)
        assert (row["outcome"], row["outcome_at"]) == ("completed", p.stage_times["completed"])
    assert [rows[p.pseudonym]["assignment_sequence"] for p in (first, second)] == ["0", "1"]
    # The study file itself, byte for byte: it hashes to the hash the codebook gives.
    source = (tmp_path / "study.toml").read_bytes()
    assert source == study.source.encode() == EXAMPLE.read_bytes()
    assert hashlib.sha256(source).hexdigest() == study.definition_hash
    book = (tmp_path / "codebook.md").read_text()
    assert f"SHA-256 `{study.definition_hash}`" in book and "`study.toml`" in book


def test_exclusions_are_flagged_and_the_audit_log_is_exported_without_raw_ids(
    study: Study, tmp_path: Path
) -> None:
    kept, left = through_the_study(study, "raw000first"), through_the_study(study, "raw000second")
    Participant.objects.update(pilot=False)
    intake.exclude(study, left.pseudonym, "ana", "answered at random (raw000second said so)")
    export_study(study, tmp_path)
    flags = {r["pseudonym"]: r["excluded"] for r in rows_of(tmp_path / "participants.csv")}
    assert flags == {kept.pseudonym: "false", left.pseudonym: "true"}
    (entry,) = rows_of(tmp_path / "audit.csv")
    who = (entry["action"], entry["participant"], entry["by"])
    assert who == ("exclude", left.pseudonym, "ana")
    assert entry["reason"] == "answered at random ([recruitment ID] said so)"
    assert entry["at"] == AuditEntry.objects.get().at.isoformat()
