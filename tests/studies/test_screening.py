"""Screening questions (``[screening]``): asked right after consent; an
answer outside a question's ``eligible`` ends the study with the
``screened_out`` outcome, its own code and redirect, and no pay; a form not
fully answered, or sent twice, changes nothing."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from django.test import Client

from studies import export
from studies.definition import StudyFileError, parse
from studies.loading import load_study
from studies.models import Answer, Participant, Study
from tests.studies.conftest import example_text
from tests.support.study_pages import consented, page

pytestmark = pytest.mark.django_db
Stage = Participant.Stage

SCREENING = """
[screening]
failure_text = "This study needs players who know Spades. Thank you for your time."

[[screening.questions]]
text = "Have you played Spades before?"
options = ["Yes, often", "A few times", "Never"]
eligible = ["Yes, often", "A few times"]

[[screening.questions]]
text = "Are you 18 or older?"
options = ["Yes", "No"]
eligible = ["Yes"]
"""
CODES = """codes = { screened_out = "SCREEN01" }
redirects = { screened_out = "https://app.prolific.com/submissions/complete?cc=SCREEN01" }
"""


def screened_text() -> str:
    text = example_text().replace("[[quiz.questions]]", SCREENING + "\n[[quiz.questions]]", 1)
    return text.replace("[waiting_room]", f"{CODES}\n[waiting_room]")


@pytest.fixture
def study(study_file) -> Study:  # type: ignore[no-untyped-def]
    return load_study(study_file(screened_text()))[0]


def at_screening(client: Client) -> Participant:
    consented(client)
    assert client.get(page("instructions"))["Location"] == page("screening")
    return Participant.objects.get()


def test_the_file_checks_its_screening() -> None:
    parsed = parse(screened_text(), "s.toml")
    assert parsed.screening is not None and len(parsed.screening.questions) == 2
    assert parsed.screening.questions[0].eligible == ("Yes, often", "A few times")
    wrong = screened_text().replace('eligible = ["Yes"]', 'eligible = ["Maybe"]')
    with pytest.raises(StudyFileError, match="eligible must list one or more of the options"):
        parse(wrong, "s.toml")
    empty = example_text().replace("[[quiz.questions]]", "[screening]\n\n[[quiz.questions]]", 1)
    with pytest.raises(StudyFileError, match="at least one"):
        parse(empty, "s.toml")


def test_an_eligible_participant_goes_on_to_the_instructions(study: Study, client: Client) -> None:
    p = at_screening(client)
    assert p.stage == Stage.SCREENING
    shown = client.get(page("screening")).content.decode()
    assert "Have you played Spades before?" in shown and 'name="s2"' in shown
    # Not every question answered: a clear message, nothing stored, no move.
    half = client.post(page("screening"), {"s1": "0"})
    assert half.status_code == 400 and "question 2 has" in half.content.decode()
    assert Participant.objects.get().stage == Stage.SCREENING and not Answer.objects.exists()
    bad = client.post(page("screening"), {"s1": "7", "s2": "x"})
    assert bad.status_code == 400 and Participant.objects.get().stage == Stage.SCREENING
    done = client.post(page("screening"), {"s1": "1", "s2": "0"})
    assert done["Location"] == page("instructions")
    p = Participant.objects.get()
    assert p.stage == Stage.INSTRUCTIONS and Stage.SCREENING in p.stage_times
    stored = sorted(Answer.objects.values_list("kind", "item_id", "value"))
    assert stored == [("screening", "s1", "A few times"), ("screening", "s2", "Yes")]
    again = client.post(page("screening"), {"s1": "2", "s2": "1"})  # the form sent twice
    assert again.status_code == 409 and Participant.objects.get().stage == Stage.INSTRUCTIONS


def test_an_ineligible_participant_is_screened_out_with_their_code(
    study: Study, client: Client, tmp_path: Path
) -> None:
    at_screening(client)
    out = client.post(page("screening"), {"s1": "2", "s2": "0"})
    assert out["Location"] == page("end")
    assert Participant.objects.get().stage == Stage.SCREENED_OUT
    text = client.get(page("end")).content.decode()
    assert "This study needs players who know Spades" in text
    assert "SCREEN01" in text and "cc=SCREEN01" in text
    # Nowhere else to go: the quiz and the waiting room send them to their end.
    assert client.get(page("quiz"))["Location"] == page("end")
    assert client.get(page("waiting"))["Location"] == page("end")
    export.export_study(study, tmp_path, with_payments=True, include_pilot=True)
    with (tmp_path / "participants.csv").open() as f:
        [row] = list(csv.DictReader(f))
    assert row["outcome"] == "screened_out" and row["entered_screened_out"]
    with (tmp_path / "payments.csv").open() as f:
        [paid] = list(csv.DictReader(f))
    assert (paid["outcome"], paid["paid"], paid["completion_code"]) == (
        "screened_out", "false", "SCREEN01"
    )  # fmt: skip
    with (tmp_path / "answers.csv").open() as f:
        kinds = {r["kind"] for r in csv.DictReader(f)}
    assert kinds == {"screening"}
