"""Participants of the worked example (docs/examples/study.toml) placed in its
conditions: at the waiting room (``arrive``, then ``poll``), or at any stage
with a raw ID of their own (``person``, ``seated``)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from studies import participants, waiting_room
from studies.models import Participant, Study

Stage = Participant.Stage
ONE, TWO = 0, 1  # the example's conditions: one participant (S); two (N and S), "names"
CHEAP = "Random+Random"  # bots that cost nothing to run, for matches played out
RAW = "RAWPID"  # every raw ID ``person`` gives starts so


def arrive(study: Study, condition: int, waited: float = 0) -> Participant:
    """A participant of ``condition`` at the waiting room since ``waited`` seconds."""
    p = Participant(study=study, condition=study.conditions.get(position=condition))
    p.move_to(Stage.WAITING)
    p.waiting_since = timezone.now() - timedelta(seconds=waited)
    p.stage_times[Stage.WAITING] = p.waiting_since.isoformat()
    p.save()
    return p


def poll(p: Participant) -> Participant:
    """The waiting page's poll: the participant as the waiting room moves them on."""
    return waiting_room.advance(Participant.objects.get(pk=p.pk))


def person(study: Study, n: int, stage: str, condition: int = ONE) -> Participant:
    """A participant who consented (raw ID ``RAWPID<n>``), moved to ``stage``."""
    p = participants.consent(study, {"PROLIFIC_PID": f"{RAW}{n:04d}", "SESSION_ID": f"s{n}"})
    p.condition = study.conditions.get(position=condition)
    p.move_to(stage)
    p.save()
    return p


def seated(study: Study, n: int) -> Participant:
    """A participant of the one-participant condition, seated at once."""
    return waiting_room.advance(person(study, n, Stage.WAITING, ONE))
