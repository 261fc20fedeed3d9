"""Withdrawal (``withdraw_participant``) removes what the consent promises and
marks the rest, with an audit entry; the export leaves the participant out.
The pilot reset (``reset_study --pilot``) clears a pilot run, the study file's
hash unchanged, and refuses non-pilot data. Bad input to either changes
nothing and says why."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from game.models import Action, Table
from studies import export, participants
from studies.loading import load_study
from studies.models import (
    Answer,
    Assignment,
    AuditEntry,
    ConsentDeclined,
    Participant,
    RecruitmentId,
    Study,
    StudyMatch,
    StudySeat,
    StudyTable,
)
from studies.views import SESSION_KEY
from tests.studies.conftest import example_text
from tests.support.study_export import through_the_study
from tests.support.study_tables import ONE, arrive, poll

pytestmark = pytest.mark.django_db
Stage = Participant.Stage


def snapshot(study: Study) -> tuple[Any, ...]:
    """Everything a refused command must leave as it was."""
    return (
        sorted(Participant.objects.filter(study=study).values_list("pk", "stage", "withdrawn")),
        Answer.objects.count(),
        RecruitmentId.objects.count(),
        Assignment.objects.count(),
        StudyTable.objects.count(),
        StudySeat.objects.count(),
        sorted(Action.objects.values_list("pk", "think_ms")),
        AuditEntry.objects.count(),
        list(ConsentDeclined.objects.values_list("count", flat=True)),
        Study.objects.values_list("definition_hash", "source").get(pk=study.pk),
    )


def played(study: Study, raw_id: str) -> Participant:
    """A participant who sat at a table, made a timed move and dropped out."""
    p = poll(arrive(study, ONE))
    RecruitmentId.objects.create(participant=p, study=study, raw_id=raw_id, key_hash=raw_id)
    Answer.objects.create(participant=p, kind="quiz", item_id="q1", value="Spades", attempt=1)
    table = StudyTable.objects.get(seats__participant=p).table
    version = Action.objects.filter(table=table).count() + 100
    Action.objects.create(table=table, version=version, round_number=1, seat=2,
                          action={"bid": 3}, think_ms=2100, think_bound_ms=2300)  # fmt: skip
    Participant.objects.filter(pk=p.pk).update(stage=Stage.DROPPED, pilot=False)
    p.refresh_from_db()
    return p


def withdraw(study: Study, reference: str, *extra: str) -> str:
    out = io.StringIO()
    call_command("withdraw_participant", study.slug, reference, *extra, stdout=out)
    return out.getvalue()


def test_withdrawal_removes_what_consent_promises_and_the_export_leaves_them_out(
    study: Study, tmp_path: Path
) -> None:
    gone, kept = played(study, "RAWGONE"), played(study, "RAWKEPT")
    said = withdraw(study, gone.pseudonym, "--reason", "email of 3 May", "--by", "ana")
    assert said.strip() == f"withdrew {gone.pseudonym} from {study.slug}"
    gone.refresh_from_db()
    assert gone.withdrawn and gone.withdrawn_at is not None
    assert not Answer.objects.filter(participant=gone).exists()
    assert not RecruitmentId.objects.filter(participant=gone).exists()
    table = StudyTable.objects.get(seats__participant=gone).table
    assert Action.objects.filter(table=table, seat=2).exists()  # the moves stay...
    assert not Action.objects.filter(table=table, think_ms__isnull=False).exists()  # ...untimed
    assert Action.objects.filter(think_ms=2100).count() == 1  # the other's are kept
    (entry,) = AuditEntry.objects.all()
    assert (entry.participant, entry.action, entry.by) == (gone.pseudonym, "withdraw", "ana")
    assert entry.reason.startswith("email of 3 May (removed 1 answers, 1 think times")
    export.export_study(study, tmp_path, with_payments=True)
    for name in ("participants.csv", "answers.csv", "payments.csv", "actions.csv"):
        text = (tmp_path / name).read_text()
        assert gone.pseudonym not in text and "RAWGONE" not in text, name
        assert kept.pseudonym in text or name == "answers.csv", name
    tables = {r["table"] for r in csv.DictReader((tmp_path / "actions.csv").open())}
    assert table.public_id not in tables  # only the withdrawn participant sat there


def test_a_seat_shared_with_another_participant_is_named_withdrawn(
    study: Study, tmp_path: Path
) -> None:
    first = arrive(study, 1, waited=5)
    second = poll(arrive(study, 1))
    first = poll(first)
    Participant.objects.update(stage=Stage.DROPPED, pilot=False)
    table = StudyTable.objects.get().table
    for version, seat in ((100, 0), (101, 2)):
        Action.objects.create(table=table, version=version, round_number=1, seat=seat,
                              action={"bid": 2}, think_ms=900)  # fmt: skip
    withdraw(study, first.pseudonym)
    export.export_study(study, tmp_path)
    rows = list(csv.DictReader((tmp_path / "actions.csv").open()))
    named = {(r["seat"], r["player_kind"], r["player"], r["think_ms"]) for r in rows
             if r["version"] in ("100", "101")}  # fmt: skip
    assert named == {("N", "participant", "withdrawn", ""), ("S", "participant", second.pseudonym,
                                                            "900")}  # fmt: skip
    assert first.pseudonym not in (tmp_path / "actions.csv").read_text()


def test_bad_withdrawals_are_refused_and_change_nothing(study: Study) -> None:
    p = played(study, "RAWONE")
    before = snapshot(study)
    nobody = "p0123456789abcdef"
    with pytest.raises(CommandError, match=f"has no participant '{nobody}'; nothing changed"):
        withdraw(study, nobody)
    with pytest.raises(CommandError, match="not a pseudonym") as error:
        withdraw(study, "RAWONE")  # a raw ID typed by mistake: refused, never repeated
    assert "RAWONE" not in str(error.value)
    with pytest.raises(CommandError, match="outcome codes, which every participant"):
        withdraw(study, "C7XK2P9Q")
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("withdraw_participant", "nope", p.pseudonym)
    waiting = arrive(study, 1)
    with pytest.raises(CommandError, match="is still taking part \\(stage waiting\\)"):
        withdraw(study, waiting.pseudonym)
    Participant.objects.filter(pk=p.pk).update(stage=Stage.COMPLETED)
    with pytest.raises(CommandError, match="may still be owed a bonus.*--payments-done"):
        withdraw(study, p.pseudonym)
    Participant.objects.filter(pk=p.pk).update(stage=Stage.DROPPED)
    assert snapshot(study)[1:] == before[1:]
    withdraw(study, p.pseudonym)
    after = snapshot(study)
    with pytest.raises(CommandError, match="was withdrawn already"):
        withdraw(study, p.pseudonym)
    assert snapshot(study) == after


def test_a_paid_participant_is_withdrawn_once_paid(study: Study) -> None:
    p = through_the_study(study, "RAWPAID")
    client = Client()
    session = client.session
    session[SESSION_KEY] = {study.slug: p.pseudonym}
    session.save()
    page = client.get(f"/study/{study.slug}/completed/").content.decode()
    assert f'<code id="reference">{p.pseudonym}</code>' in page  # what they quote
    withdraw(study, p.pseudonym, "--payments-done")
    p.refresh_from_db()
    assert p.withdrawn and not Answer.objects.filter(participant=p).exists()


# ----- the pilot reset -----------------------------------------------------------------


def reset(study: Study, *extra: str) -> str:
    out = io.StringIO()
    call_command("reset_study", study.slug, *extra, stdout=out)
    return out.getvalue()


def test_reset_study_clears_a_pilot_run_and_keeps_the_file(study: Study) -> None:
    assert study.pilot  # the example is a pilot study
    participants.consent(study, {"PROLIFIC_PID": "RAWPILOT1"})
    seated = poll(arrive(study, ONE))
    # (the tests' arrive() makes no pilot; consent in a pilot study does)
    Participant.objects.filter(pk=seated.pk).update(stage=Stage.QUESTIONNAIRE, pilot=True)
    participants.decline(study)
    tables = list(StudyMatch.objects.values_list("table_id", flat=True))
    hash_before = study.definition_hash
    said = reset(study, "--pilot", "--by", "ana")
    assert said.strip() == f"cleared 2 pilot participant(s) of {study.slug}"
    assert not Participant.objects.exists() and not Assignment.objects.exists()
    assert not RecruitmentId.objects.exists() and not StudyTable.objects.exists()
    assert ConsentDeclined.objects.get(study=study).count == 0
    assert Table.objects.filter(pk__in=tables, pilot=True).count() == len(tables) == 1
    study.refresh_from_db()
    assert study.definition_hash == hash_before and study.source == example_text()
    entry = AuditEntry.objects.get(action="reset_pilot")
    assert entry.participant == "" and "cleared 2 pilot participants" in entry.reason
    # A clean start: the next participant takes the assignment's first slot again.
    fresh = participants.consent(study, {"PROLIFIC_PID": "RAWREAL1"})
    assert Assignment.objects.get(participant=fresh).sequence == 0
    Participant.objects.update(pilot=True, stage=Stage.WAITING)
    with pytest.raises(CommandError, match=r"1 pilot participant\(s\) .* are waiting or playing"):
        reset(study, "--pilot")  # fresh waits: not while anyone is under way


def test_a_reset_with_non_pilot_data_or_bad_input_is_refused(study_file) -> None:
    study = load_study(study_file(example_text().replace("pilot = true", "pilot = false")))[0]
    Participant.objects.filter(
        pk=participants.consent(study, {"PROLIFIC_PID": "RAWREAL"}).pk
    ).update(stage=Stage.COMPLETED)
    before = snapshot(study)
    with pytest.raises(CommandError, match="1 participant\\(s\\) who are not pilots"):
        reset(study, "--pilot")
    with pytest.raises(CommandError, match="give --pilot"):
        reset(study)
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("reset_study", "nope", "--pilot")
    assert snapshot(study) == before
    Participant.objects.update(pilot=True)  # marked pilot after being seated: a real table
    p = poll(arrive(study, ONE))
    Participant.objects.filter(pk=p.pk).update(stage=Stage.DROPPED, pilot=True)
    Table.objects.update(pilot=False)
    before = snapshot(study)
    with pytest.raises(CommandError, match="table\\(s\\) not flagged pilot"):
        reset(study, "--pilot")
    assert snapshot(study) == before
    Table.objects.update(pilot=True)
    reset(study, "--pilot")
    with pytest.raises(CommandError, match="has no pilot data to clear"):
        reset(study, "--pilot")  # twice
    assert AuditEntry.objects.count() == 1 and timezone.now()


def test_without_a_bonus_a_completed_participant_is_withdrawn_at_once(study_file) -> None:
    text = example_text()
    study = load_study(study_file(text[: text.index("[bonus]")]))[0]
    p = through_the_study(study, "RAWNOBONUS")
    withdraw(study, p.pseudonym)  # nothing is paid by recruitment ID: nothing to wait for
    assert Participant.objects.get(pk=p.pk).withdrawn
