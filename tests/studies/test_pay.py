"""Pay by outcome: the bonus only for a paid outcome (completed; a drop-out
after ``partial_after_rounds``, for the rounds before the drop), never below
zero; Prolific's ``bulk_bonus.csv``; each participant's outcome and its time;
the outcome codes of ``[completion]`` checked at their line and shown on the
matching end page."""

from __future__ import annotations

import csv
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import models
from django.test import Client
from django.utils import timezone

from game.models import MatchResult, RoundRecordRow, Table
from studies import export, outcomes, stages
from studies.definition import StudyFileError, parse
from studies.loading import load_study
from studies.models import Participant, RecruitmentId, Study, StudyTable
from studies.views import SESSION_KEY
from tests.studies.conftest import example_text, line_of
from tests.support.study_tables import ONE, arrive, poll

pytestmark = pytest.mark.django_db
Stage = Participant.Stage
CODES = """codes = { failed_quiz = "FQ000001", dropped = "DR000001" }
redirects = { failed_quiz = "https://app.prolific.com/submissions/complete?cc=FQ000001" }
"""


def with_bonus(extra: str = "", codes: str = "") -> str:
    text = example_text().replace("cap = 1.50", f"cap = 1.50\n{extra}")
    return text.replace("[waiting_room]", f"{codes}\n[waiting_room]")


def round_row(table: Table, number: int, at: datetime, ns: int, ew: int) -> RoundRecordRow:
    """A round record with the scores after it (the other columns any valid value)."""
    values: dict[str, Any] = {}
    for f in RoundRecordRow._meta.concrete_fields:
        if f.primary_key or f.has_default() or f.null:
            continue
        values[f.name] = {
            models.JSONField: {},
            models.CharField: "",
            models.BooleanField: False,
        }.get(type(f), 0)
    values.update(table=table, round_number=number, finished_at=at, score_ns=ns, score_ew=ew)
    values.update(seat_kinds="BBHB", blind_nils="0000", bot_names=[], rules={}, record={})
    return RoundRecordRow.objects.create(**values)


def seated(study: Study, raw_id: str) -> tuple[Participant, Table]:
    """A participant of the one-participant condition (South) at a table."""
    p = poll(arrive(study, ONE))
    RecruitmentId.objects.create(participant=p, study=study, raw_id=raw_id, key_hash=raw_id)
    Participant.objects.filter(pk=p.pk).update(pilot=False)
    return p, StudyTable.objects.get(seats__participant=p).table


def end_as(p: Participant, stage: str, at: datetime) -> Participant:
    p.refresh_from_db()
    p.move_to(Stage(stage))
    p.stage_times[stage] = at.isoformat()
    p.save()
    return p


def payments(study: Study, out: Path) -> tuple[list[dict[str, str]], list[list[str]]]:
    export.export_study(study, out, with_payments=True)
    rows = list(csv.DictReader((out / "payments.csv").open(newline="")))
    bulk = list(csv.reader((out / "bulk_bonus.csv").open(newline="")))
    return rows, bulk


def test_only_paid_outcomes_earn_the_bonus_and_bulk_bonus_lists_them(
    study_file, tmp_path: Path
) -> None:
    study = load_study(study_file(with_bonus("partial_after_rounds = 2", CODES)))[0]
    start = timezone.now() - timedelta(hours=1)
    done, t1 = seated(study, "RAWDONE")
    round_row(t1, 1, start, 60, 20)
    MatchResult.objects.create(table=t1, winner=0, score_ns=120, score_ew=40, bags_ns=0,
                               bags_ew=0, rounds=3, version=1)  # fmt: skip
    end_as(done, Stage.COMPLETED, start + timedelta(minutes=30))
    # Dropped after two rounds: paid for the score then, not the stand-in's later 200.
    late, t2 = seated(study, "RAWLATE")
    for n, score in ((1, 30), (2, 70), (3, 200)):
        round_row(t2, n, start + timedelta(minutes=n * 5), score, 0)
    end_as(late, Stage.DROPPED, start + timedelta(minutes=12))
    # Dropped after one round: no bonus, although the stand-in scored.
    early, t3 = seated(study, "RAWEARLY")
    round_row(t3, 1, start, 90, 0)
    round_row(t3, 2, start + timedelta(minutes=20), 150, 0)
    end_as(early, Stage.DROPPED, start + timedelta(minutes=10))
    # Completed with a negative score: a zero bonus, not a negative one.
    behind, t4 = seated(study, "RAWBEHIND")
    MatchResult.objects.create(table=t4, winner=1, score_ns=-80, score_ew=100, bags_ns=0,
                               bags_ew=0, rounds=3, version=1)  # fmt: skip
    end_as(behind, Stage.COMPLETED, start + timedelta(minutes=40))
    rows, bulk = payments(study, tmp_path)
    by = {r["recruitment_id"]: r for r in rows}
    assert [(by[r]["outcome"], by[r]["paid"], by[r]["points"], by[r]["bonus"]) for r in (
        "RAWDONE", "RAWLATE", "RAWEARLY", "RAWBEHIND")] == [
        ("completed", "true", "120", "1.20"),
        ("dropped", "true", "70", "0.70"),
        ("dropped", "false", "90", "0.00"),
        ("completed", "true", "-80", "0.00"),
    ]  # fmt: skip
    assert by["RAWLATE"]["rounds_played"] == "2" and by["RAWEARLY"]["rounds_played"] == "1"
    assert by["RAWLATE"]["completion_code"] == "DR000001"
    assert by["RAWDONE"]["completion_code"] == "C7XK2P9Q"
    assert by["RAWLATE"]["outcome_at"] == (start + timedelta(minutes=12)).isoformat()
    assert bulk == [["RAWDONE", "1.20"], ["RAWLATE", "0.70"]]  # no header, positive only
    people = list(csv.DictReader((tmp_path / "participants.csv").open(newline="")))
    assert {r["outcome"] for r in people} == {"completed", "dropped"}
    assert all(r["outcome_at"] for r in people)


def test_without_partial_pay_a_drop_out_earns_nothing(study: Study, tmp_path: Path) -> None:
    p, table = seated(study, "RAWGONE")
    round_row(table, 1, timezone.now() - timedelta(minutes=5), 100, 0)
    end_as(p, Stage.DROPPED, timezone.now())
    rows, bulk = payments(study, tmp_path)
    assert (rows[0]["paid"], rows[0]["bonus"], rows[0]["completion_code"]) == ("false", "0.00", "")
    assert bulk == [] and not outcomes.is_paid(p, study.definition["bonus"])


def test_the_raw_ids_are_only_in_the_payment_files(study: Study, tmp_path: Path) -> None:
    p, table = seated(study, "RAWSECRET1")
    MatchResult.objects.create(table=table, winner=0, score_ns=50, score_ew=0, bags_ns=0,
                               bags_ew=0, rounds=1, version=1)  # fmt: skip
    end_as(p, Stage.COMPLETED, timezone.now())
    export.export_study(study, tmp_path, with_payments=True)
    holding = sorted(f.name for f in tmp_path.iterdir() if "RAWSECRET1" in f.read_text())
    assert holding == ["bulk_bonus.csv", "payments.csv"]
    export.export_study(study, tmp_path / "plain")
    assert not (tmp_path / "plain" / "bulk_bonus.csv").exists()
    assert all("RAWSECRET1" not in f.read_text() for f in (tmp_path / "plain").iterdir())


def test_an_outcome_code_is_shown_on_its_end_page(study_file) -> None:
    study = load_study(study_file(with_bonus(codes=CODES)))[0]
    failed = Participant(study=study, condition=study.conditions.first())
    failed.move_to(Stage.FAILED_QUIZ)
    failed.save()
    client = Client()
    session = client.session
    session[SESSION_KEY] = {study.slug: failed.pseudonym}
    session.save()
    text = client.get(f"/study/{study.slug}/end/").content.decode()
    assert "FQ000001" in text and "cc=FQ000001" in text and "Return to the recruitment" in text
    assert f'<code id="reference">{failed.pseudonym}</code>' in text  # for a withdrawal
    dropped = end_as(failed, Stage.DROPPED, timezone.now())  # a code without a redirect
    Participant.objects.filter(pk=dropped.pk).update(stage=Stage.DROPPED)
    text = client.get(f"/study/{study.slug}/end/").content.decode()
    assert "DR000001" in text and "Please enter it on the recruitment platform" in text
    plain = load_study(study_file(example_text().replace("pilot-", "plain-").replace(
        'slug = "partner-trust-pilot"', 'slug = "plain"'), "plain.toml"))[0]  # fmt: skip
    gone = Participant(study=plain, condition=plain.conditions.first())
    gone.move_to(Stage.DROPPED)
    gone.save()
    session[SESSION_KEY] = {plain.slug: gone.pseudonym}
    session.save()
    text = client.get(f"/study/{plain.slug}/end/").content.decode()
    assert "completion-code" not in text and "You may close this page" in text


@pytest.mark.parametrize(
    ("codes", "says"),
    [
        ('codes = { finished = "X1" }', "codes.finished: not an outcome"),
        ('codes = { dropped = "not a code" }', "codes.dropped 'not a code' is not a code"),
        ('codes = { completed = "OTHER1" }', "differs from code 'C7XK2P9Q'"),
        ('redirects = { dropped = "https://x.org/" }', "redirects.dropped has no code"),
        ('codes = { dropped = "D1" }\nredirects = { dropped = "ftp://x" }', "not an http(s) URL"),
    ],
)
def test_bad_outcome_codes_are_refused_at_their_line(codes: str, says: str) -> None:
    text = with_bonus(codes=codes)
    with pytest.raises(StudyFileError) as error:
        parse(text)
    (problem,) = error.value.problems
    key = codes.splitlines()[-1].split(" =")[0]
    line = line_of(text, f"\n{key} = {{") + 1  # the key's own line, not the example's comment
    assert problem.startswith(f"study.toml:{line}: ") and says in problem


def test_partial_after_rounds_is_checked() -> None:
    with pytest.raises(StudyFileError, match="partial_after_rounds must be between 1 and 1000"):
        parse(with_bonus("partial_after_rounds = 0"))
    assert parse(with_bonus("partial_after_rounds = 3")).bonus.partial_after_rounds == 3


def test_a_completed_outcome_reached_through_the_stages_is_timed(study: Study) -> None:
    p = poll(arrive(study, ONE))
    Table.objects.filter(pk=StudyTable.objects.get().table_id).update(
        status=Table.Status.FINISHED
    )
    p = poll(p)
    answers = {"partner_trust": "3", "partner_skill": "3", "enjoyment": "3", "comments": "ok"}
    p = stages.answer_questionnaire(p, answers)
    assert outcomes.outcome_of(p) == "completed"
    assert outcomes.outcome_at(p) == datetime.fromisoformat(p.stage_times["completed"])
