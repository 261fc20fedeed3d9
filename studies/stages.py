"""A participant's way through a study: the allowed moves between stages, and
the one function that makes them.

Every move is made under the participant's row lock and checked against the
stage the form was made for: a replayed, out-of-date or out-of-order form (a
second tab, the back button, a double click) raises :class:`OutOfOrder` and
changes nothing. A quiz form also carries its attempt number, so the same
answers sent twice count once. Each stage entered is timed
(``Participant.stage_times``) for the export's durations.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from studies import stand_in, transactions
from studies.models import Answer, Participant

log = logging.getLogger(__name__)
Stage = Participant.Stage

MOVES: dict[str, frozenset[str]] = {
    # Through the screening questions first, where the study file has them.
    Stage.CONSENTED: frozenset({Stage.INSTRUCTIONS, Stage.SCREENING}),
    Stage.SCREENING: frozenset({Stage.INSTRUCTIONS, Stage.SCREENED_OUT}),
    # Straight to waiting: a study without a quiz.
    Stage.INSTRUCTIONS: frozenset({Stage.QUIZ, Stage.WAITING}),
    Stage.QUIZ: frozenset({Stage.WAITING, Stage.FAILED_QUIZ}),
    # The waiting room seats them (studies.waiting_room), and moves them on
    # when the match ends or when they stopped playing (drop-out).
    # Dropped from the waiting room: their page was closed (waiting_room.ABSENT).
    Stage.WAITING: frozenset({Stage.PLAYING, Stage.DROPPED}),
    Stage.PLAYING: frozenset({Stage.QUESTIONNAIRE, Stage.DROPPED}),
    # The way out: a debrief only where the condition hid something (bots' names).
    Stage.QUESTIONNAIRE: frozenset({Stage.DEBRIEF, Stage.COMPLETED}),
    Stage.DEBRIEF: frozenset({Stage.COMPLETED}),
}


class OutOfOrder(Exception):
    """The form does not match the participant's stage (or quiz attempt): nothing changed."""


@transactions.retried
def move(
    participant: Participant,
    expected: str,
    to: str | None,
    *,
    quiz_attempt: int | None = None,
    answers: Sequence[Answer] = (),
    why: str = "",
) -> Participant:
    """The participant moved from ``expected`` to ``to`` (None: stays), saved.

    With ``quiz_attempt`` (the attempt the form was shown for) one quiz
    attempt is counted too. Raises :class:`OutOfOrder` when the participant is
    no longer at ``expected`` or has used that attempt already; ``ValueError``
    for a move the study does not allow (a bug, not a participant's doing).
    ``why``: a drop's reason (``DroppedWhy``). ``answers`` (unsaved) are
    stored in the same transaction, so a refused form stores none and a form
    sent twice stores them once."""
    if to is not None and to not in MOVES.get(expected, frozenset()):
        raise ValueError(f"no move from {expected} to {to}")
    with transactions.atomic():
        locked = Participant.objects.select_for_update().get(pk=participant.pk)
        if locked.stage != expected:
            raise OutOfOrder(f"participant is at {locked.stage}, the form was for {expected}")
        if quiz_attempt is not None:
            if locked.quiz_attempts != quiz_attempt:
                raise OutOfOrder(f"quiz attempt {quiz_attempt} was already answered")
            locked.quiz_attempts += 1
        if to is not None:
            locked.move_to(Stage(to), why)
        locked.save()
        for answer in answers:
            answer.participant = locked
        Answer.objects.bulk_create(answers)
    if to is not None:
        log.info(
            "study %s: participant %s %s -> %s",
            locked.study.slug,
            locked.pseudonym,
            expected,
            to,
        )
    return locked


# ----- the comprehension quiz ---------------------------------------------------------


def grade(
    questions: Sequence[Mapping[str, Any]], answers: Mapping[str, str]
) -> tuple[list[int], list[int]]:
    """(unanswered, wrong) question numbers, from 1, of a quiz form's answers:
    ``q1``... holding the chosen option's number, from 0."""
    unanswered, wrong = [], []
    for number, question in enumerate(questions, 1):
        chosen = answers.get(f"q{number}", "")
        options = question["options"]
        if not chosen.isdigit() or int(chosen) >= len(options):
            unanswered.append(number)
        elif options[int(chosen)] != question["answer"]:
            wrong.append(number)
    return unanswered, wrong


def answer_quiz(
    participant: Participant,
    attempt: int,
    wrong: Sequence[int],
    allowed: int,
    chosen: Mapping[str, str] | None = None,
) -> Participant:
    """Count one graded attempt: all right moves on to waiting; wrong with no
    attempt left ends the participant's study (failed_quiz). ``chosen`` (the
    chosen option's text by question, ``q1``...) is stored as the attempt's
    answers, the attempt numbered from 1."""
    if not wrong:
        to: str | None = Stage.WAITING
    elif attempt + 1 >= allowed:
        to = Stage.FAILED_QUIZ
    else:
        to = None
    answers = [
        Answer(kind=Answer.Kind.QUIZ, item_id=item, value=value, attempt=attempt + 1)
        for item, value in (chosen or {}).items()
    ]
    return move(participant, Stage.QUIZ, to, quiz_attempt=attempt, answers=answers)


# ----- the way out ---------------------------------------------------------------------


def needs_debrief(participant: Participant) -> bool:
    """Whether the participant was shown something untrue that the debrief now
    tells: their condition hid its bots under players' names, or the stand-in
    took a seat at their table under a player's name (``studies.stand_in``)."""
    return participant.condition.disclosure == "names" or bool(
        stand_in.shown_under_a_name(participant)
    )


def answer_questionnaire(participant: Participant, values: Mapping[str, str]) -> Participant:
    """Store the questionnaire's (checked) answers by item id, and move on:
    to the debrief where the condition needs one, else to completed."""
    after = Stage.DEBRIEF if needs_debrief(participant) else Stage.COMPLETED
    answers = [
        Answer(kind=Answer.Kind.QUESTIONNAIRE, item_id=item, value=value)
        for item, value in values.items()
    ]
    return move(participant, Stage.QUESTIONNAIRE, after, answers=answers)
