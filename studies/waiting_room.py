"""The waiting room: who waits for a table, as the participant's page sees it.

For now it only counts: participants who passed the quiz wait (stage
``waiting``) and their page polls :func:`state` (``/study/<slug>/state/``).
Grouping waiting participants of a condition into tables, and the stand-in
bot that fills a seat after the study's timeout, plug in here: a poll is
where a participant's wait can end (their stage becomes ``playing``) and the
page follows the stage it is told.

The state names no one: a stage and a count, never an ID or a pseudonym,
and the count is of the participant's own condition, which the page does not
name (the participant is blind to it).
"""

from __future__ import annotations

from typing import TypedDict

from studies.models import Participant


class State(TypedDict):
    stage: str
    waiting: int


def waiting_count(participant: Participant) -> int:
    """How many of the participant's study and condition wait now (them included)."""
    return Participant.objects.filter(
        study_id=participant.study_id,
        condition_id=participant.condition_id,
        stage=Participant.Stage.WAITING,
    ).count()


def state(participant: Participant) -> State:
    return {"stage": participant.stage, "waiting": waiting_count(participant)}
