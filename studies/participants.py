"""A participant's arrival: entering with the recruitment parameters, consent
and refusal.

Nothing is stored about anyone before they consent: :func:`enter` only
looks a returning participant up; :func:`consent` creates the participant,
its recruitment ID and its assignment in one transaction; :func:`decline`
adds one to a count. A second tab or a second visit with the same ID finds
the same participant (by the keyed hash, not by the raw ID). Log lines name
the pseudonym, never the recruitment ID.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass

from django.db import IntegrityError
from django.db.models import F

from studies import assignment, transactions
from studies.models import (
    RAW_ID_CHARS,
    RAW_ID_MAX,
    ConsentDeclined,
    Participant,
    RecruitmentId,
    Study,
    keyed_hash,
    site_keys,
)

log = logging.getLogger(__name__)
_ALLOWED = re.compile(RAW_ID_CHARS)


class RecruitmentError(ValueError):
    """Recruitment parameters that cannot be used, with what is wrong (and not the ID)."""


@dataclass(frozen=True)
class RecruitmentParams:
    raw_id: str
    study_id: str = ""
    session_id: str = ""

    def __repr__(self) -> str:  # never the raw ID, should this reach a log or a traceback
        return "RecruitmentParams(...)"


def read_params(study: Study, params: Mapping[str, str]) -> RecruitmentParams:
    """The study's recruitment parameters from a request's query; RecruitmentError
    when the ID is missing, too long or has characters it should not."""
    names = study.definition["recruitment"]
    raw_id = _checked(params.get(names["id_param"], ""), PLAIN_NAMES[0], required=True)
    study_id = _checked(params.get(names["study_param"], ""), PLAIN_NAMES[1])
    session_id = _checked(params.get(names["session_param"], ""), PLAIN_NAMES[2])
    return RecruitmentParams(raw_id, study_id, session_id)


# The three parameters in a participant's words (the file's names are the
# platform's, such as PROLIFIC_PID, which mean nothing to the person reading).
PLAIN_NAMES = ("your participant ID", "the study's ID", "your session ID")


def _checked(value: str, name: str, required: bool = False) -> str:
    value = (value or "").strip()
    if not value:
        if required:
            raise RecruitmentError(f"this link is missing {name}")
        return ""
    if len(value) > RAW_ID_MAX:
        raise RecruitmentError(f"{name} in this link is longer than {RAW_ID_MAX} characters")
    if not _ALLOWED.match(value):
        raise RecruitmentError(
            f"{name} in this link may hold letters, digits, '-', '_' and '.' only"
        )
    return value


def find(study: Study, raw_id: str) -> Participant | None:
    """The participant of this recruitment ID, by its keyed hash under the key
    in use or one rotated out (then hashed again under the key in use, so that
    the old key can be dropped once everyone has come back or finished)."""
    hashes = [keyed_hash(study.slug, raw_id, key) for key in site_keys()]
    recruitment = (
        RecruitmentId.objects.filter(study=study, key_hash__in=hashes)
        .select_related("participant")
        .first()
    )
    if recruitment is None:
        return None
    if recruitment.key_hash != hashes[0]:
        RecruitmentId.objects.filter(pk=recruitment.pk).update(key_hash=hashes[0])
    return recruitment.participant


def enter(study: Study, params: Mapping[str, str]) -> Participant | None:
    """A returning participant, or None (a newcomer, shown the consent form:
    nothing is stored until they consent)."""
    return find(study, read_params(study, params).raw_id)


def consent(study: Study, params: Mapping[str, str]) -> Participant:
    """The participant who consents with these parameters: created with their
    recruitment ID and assignment in one transaction, or found if they already
    consented (a second tab, a reload)."""
    return _consent(study, read_params(study, params))


@transactions.retried
def _consent(study: Study, given: RecruitmentParams) -> Participant:
    try:
        with transactions.atomic():
            # The slot's lock first: a second tab waits here, then finds the first.
            slot = assignment.take_slot(study)
            if (known := find(study, given.raw_id)) is not None:
                return known
            participant = Participant(study=study, condition=slot.condition, pilot=study.pilot)
            participant.move_to(Participant.Stage.CONSENTED)
            participant.save()
            RecruitmentId.objects.create(
                participant=participant,
                study=study,
                raw_id=given.raw_id,
                raw_study_id=given.study_id,
                raw_session_id=given.session_id,
                key_hash=keyed_hash(study.slug, given.raw_id),
            )
            assignment.record(study, slot, participant)
    except IntegrityError:
        # Another process's transaction took this ID meanwhile (the unique hash).
        if (known := find(study, given.raw_id)) is not None:
            return known
        raise
    log.info(
        "study %s: participant %s consented (condition %s, slot %d)",
        study.slug,
        participant.pseudonym,
        slot.condition.name,
        slot.sequence,
    )
    return participant


@transactions.retried
def decline(study: Study) -> int:
    """Count one refusal; stores nothing else. The new count."""
    with transactions.atomic():
        counter, _ = ConsentDeclined.objects.select_for_update().get_or_create(study=study)
        ConsentDeclined.objects.filter(pk=counter.pk).update(count=F("count") + 1)
        counter.refresh_from_db(fields=["count"])
    return counter.count
