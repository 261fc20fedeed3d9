"""The researcher's hand on a running study: its intake opened, paused or
closed, and a participant seated now, dropped or excluded.

Each is done by a named member of staff (the monitor's forms, or a shell)
with a reason, and leaves an :class:`~studies.models.AuditEntry` that the
export includes. Each refuses what does not apply (the study paused twice, a
participant who is not waiting seated, an unknown pseudonym) with an
:class:`IntakeError` that says why, and then changes nothing. Locks follow
the order of ``studies.transactions``: the condition's row before the
participant's.
"""

from __future__ import annotations

import contextlib
import logging

from game import seating
from game.errors import ServiceError
from studies import playing, stages, transactions, waiting_room
from studies.models import (
    AuditEntry,
    Condition,
    DroppedWhy,
    Participant,
    Study,
    StudySeat,
)

log = logging.getLogger(__name__)
Stage = Participant.Stage
Intake = Study.Intake
Action = AuditEntry.Action

INTAKE_ACTIONS = {
    Intake.OPEN: Action.OPEN,
    Intake.PAUSED: Action.PAUSE,
    Intake.CLOSED: Action.CLOSE,
}
REASON_MAX = 500


class IntakeError(ValueError):
    """What the researcher asked does not apply: nothing was changed."""


def _reason(reason: str) -> str:
    reason = " ".join((reason or "").split())
    if not reason:
        raise IntakeError("give a reason: it is kept in the study's audit log")
    return reason[:REASON_MAX]


def _audit(study: Study, action: str, by: str, reason: str, pseudonym: str = "") -> None:
    AuditEntry.objects.create(
        study=study, participant=pseudonym, action=action, reason=reason, by=by[:150]
    )
    log.info("study %s: %s %s by %s", study.slug, action, pseudonym or "the study", by)


@transactions.retried
def set_intake(study: Study, intake: str, by: str, reason: str) -> Study:
    """Open, pause or close the study to newcomers."""
    reason = _reason(reason)
    if intake not in Intake.values:
        raise IntakeError(f"the intake is open, paused or closed, not {intake!r}")
    with transactions.atomic():
        locked = Study.objects.select_for_update(no_key=True).get(pk=study.pk)
        if locked.intake == intake:
            raise IntakeError(f"the study is {intake} already")
        if locked.intake == Intake.CLOSED:
            raise IntakeError("the study is closed: a closed study does not open again")
        locked.intake = intake
        locked.save(update_fields=["intake", "updated_at"])
        _audit(locked, INTAKE_ACTIONS[Intake(intake)], by, reason)
    return locked


def participant_of(study: Study, pseudonym: str) -> Participant:
    found = Participant.objects.filter(study=study, pseudonym=(pseudonym or "").strip()).first()
    if found is None:
        raise IntakeError("no participant of this study has that pseudonym")
    return found


@transactions.retried
def advance(study: Study, pseudonym: str, by: str, reason: str) -> Participant:
    """A waiting participant seated now: a table of their condition with the
    stand-in at the participant seats still empty (as the waiting room's
    time-out does)."""
    reason = _reason(reason)
    participant = participant_of(study, pseudonym)
    with transactions.atomic():
        condition = (
            Condition.objects.select_for_update(no_key=True, of=("self",))
            .select_related("study")
            .get(pk=participant.condition_id)
        )
        participant = Participant.objects.select_for_update().get(pk=participant.pk)
        if participant.stage != Stage.WAITING:
            raise IntakeError(f"{pseudonym} is not waiting (stage {participant.stage})")
        waiting_room.form_table(condition, [participant])
        _audit(study, Action.ADVANCE, by, reason, participant.pseudonym)
    return Participant.objects.get(pk=participant.pk)


@transactions.retried
def drop(study: Study, pseudonym: str, by: str, reason: str) -> Participant:
    """A waiting or playing participant moved to ``dropped``; a playing one's
    seat goes to the stand-in for the rest of the match."""
    reason = _reason(reason)
    participant = participant_of(study, pseudonym)
    if participant.stage not in (Stage.WAITING, Stage.PLAYING):
        raise IntakeError(f"{pseudonym} is not waiting or playing (stage {participant.stage})")
    with transactions.atomic():
        seat = playing.seat_of(participant) if participant.stage == Stage.PLAYING else None
        moved = stages.move(
            participant, participant.stage, Stage.DROPPED, why=DroppedWhy.RESEARCHER
        )
        if seat is not None:
            StudySeat.objects.filter(pk=seat.pk).update(dropped=True)
            # Not when the match is over or the seat was handed over already.
            with contextlib.suppress(ServiceError):
                seating.hand_over(seat.study_table.table, seat.position)
        _audit(study, Action.DROP, by, reason, participant.pseudonym)
    return moved


@transactions.retried
def exclude(study: Study, pseudonym: str, by: str, reason: str) -> Participant:
    """A participant left out of the analyses (their data stay, flagged)."""
    reason = _reason(reason)
    participant = participant_of(study, pseudonym)
    with transactions.atomic():
        locked = Participant.objects.select_for_update().get(pk=participant.pk)
        if locked.excluded:
            raise IntakeError(f"{pseudonym} is excluded already")
        locked.excluded = True
        locked.save(update_fields=["excluded", "updated_at"])
        _audit(study, Action.EXCLUDE, by, reason, locked.pseudonym)
    return locked


def turned_away(study: Study) -> str | None:
    """Why a newcomer cannot join now (paused or closed), or None."""
    if study.intake == Intake.PAUSED:
        return "paused"
    if study.intake == Intake.CLOSED:
        return "closed"
    return None
