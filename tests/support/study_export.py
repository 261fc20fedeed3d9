"""Participants through a whole study and what the export reads of them: the
way from consent to completion (``through_the_study``), an exported CSV file's
rows, and the export's round rows of an unsaved round record."""

from __future__ import annotations

import csv
from pathlib import Path

from studies import participants, stages
from studies.models import Participant, Study

Stage = Participant.Stage
RIGHT_TEXTS = {"q1": "The player across the table", "q2": "Spades", "q3": "50 points"}


def through_the_study(study: Study, raw_id: str, pilot: bool = False) -> Participant:
    """A participant through the quiz (one wrong attempt, then right) and the
    questionnaire, to the end of the way out."""
    p = participants.consent(study, {"PROLIFIC_PID": raw_id, "SESSION_ID": f"s-{raw_id}"})
    Participant.objects.filter(pk=p.pk).update(pilot=pilot)
    p = stages.move(p, Stage.CONSENTED, Stage.INSTRUCTIONS)
    p = stages.move(p, Stage.INSTRUCTIONS, Stage.QUIZ)
    p = stages.answer_quiz(p, 0, [2], 2, {**RIGHT_TEXTS, "q2": "Hearts"})
    p = stages.answer_quiz(p, 1, [], 2, RIGHT_TEXTS)
    p.move_to(Stage.QUESTIONNAIRE)
    p.save()
    answers = {"partner_trust": "4", "partner_skill": "2", "enjoyment": "5", "comments": "Nice"}
    p = stages.answer_questionnaire(p, answers)
    if p.stage == Stage.DEBRIEF:
        p = stages.move(p, Stage.DEBRIEF, Stage.COMPLETED)
    return p


def rows_of(path: Path) -> list[dict[str, str]]:
    """An exported CSV file's rows."""
    return list(csv.DictReader(path.open(newline="")))


def round_rows_of_fake(func, entry, row):  # type: ignore[no-untyped-def]
    """``round_rows_of`` over one unsaved round record (the rest of its row is not read)."""
    from unittest import mock

    with (
        mock.patch("studies.export_rounds.round_rows.record_pending"),
        mock.patch("studies.export_rounds.RoundRecordRow.objects") as rows,
    ):
        rows.filter.return_value.order_by.return_value = [row]
        yield from func([entry], {})
