"""A researcher's hand on a study's data: a participant's withdrawal, and the
reset of a pilot run.

**Withdrawal** (``manage.py withdraw_participant``) removes what the example
consent promises to delete on request: the participant's answers (the free
text with them), the think times of their moves and their recruitment ID.
Their moves themselves stay, as the game's record of the table (the other
players' data depend on them). The participant's row stays too, marked
withdrawn, because other rows refer to it (``PROTECT``); the export leaves
withdrawn participants out. An :class:`AuditEntry` says who did it and why.

**Pilot reset** (``manage.py reset_study <slug> --pilot``) clears a study
whose every participant is a pilot: participants, answers, assignments,
recruitment IDs, the study tables and their links, the declined count. The
study's row (its file and the file's hash) is left as it was, so the real run
starts clean under the same pre-registered file. The game tables stay, as
pilot tables, which every analysis leaves out unless asked.

Both run in one transaction in the lock order of ``studies.transactions``,
and check everything first: bad input changes nothing.
"""

from __future__ import annotations

import logging
import re

from django.db.models import Q
from django.utils import timezone

from game.models import Action, Table
from studies import outcomes, transactions
from studies.models import (
    Answer,
    AuditEntry,
    Condition,
    ConsentDeclined,
    Participant,
    RecruitmentId,
    Study,
    StudySeat,
    StudyTable,
)
from studies.study_types import OUTCOMES

log = logging.getLogger(__name__)
Stage = Participant.Stage
PSEUDONYM = re.compile(r"^p[0-9a-f]{16}$")  # models.new_pseudonym's


class Refused(ValueError):
    """Bad input (the message says what and what to do); nothing changed."""


# ----- withdrawal ----------------------------------------------------------------------


def find(study: Study, reference: str) -> Participant:
    """The study's participant by pseudonym (the reference their last page showed)."""
    found = Participant.objects.filter(study=study, pseudonym=reference).first()
    if found is not None:
        return found
    completion = study.definition["completion"]
    codes = {completion["code"], *(completion.get("codes") or {}).values()}
    if reference in codes:
        raise Refused(
            f"{reference!r} is one of the study's outcome codes, which every participant "
            "with that outcome shares: give the participant's reference instead (their "
            "pseudonym, shown on their completion, debrief and end pages)"
        )
    if not PSEUDONYM.match(reference):
        # Not echoed: it may be a raw recruitment ID typed by mistake.
        raise Refused(
            "the reference given is not a pseudonym (p and 16 hex digits, as the "
            "participant's pages show it); a recruitment ID is never taken here"
        )
    raise Refused(f"study {study.slug!r} has no participant {reference!r}")


@transactions.retried
def withdraw(
    study: Study, reference: str, *, reason: str, by: str, payments_done: bool = False
) -> Participant:
    """Withdraw the participant named by ``reference``; :class:`Refused` changes nothing."""
    with transactions.atomic():
        # The third lock of the order: the participant's row (nothing before it).
        participant = Participant.objects.select_for_update().get(pk=find(study, reference).pk)
        if participant.withdrawn:
            when = f"{participant.withdrawn_at:%Y-%m-%d %H:%M} UTC"
            raise Refused(f"participant {participant.pseudonym} was withdrawn already ({when})")
        if participant.stage not in OUTCOMES:
            raise Refused(
                f"participant {participant.pseudonym} is still taking part (stage "
                f"{participant.stage}): withdraw them once they have finished or dropped out"
            )
        # A bonus is paid by recruitment ID (bulk_bonus.csv): not deleted before.
        rule = study.definition.get("bonus")
        owed = rule is not None and outcomes.is_paid(participant, rule)
        if owed and not payments_done:
            raise Refused(
                f"participant {participant.pseudonym} ({outcomes.outcome_of(participant)}) may "
                "still be owed a bonus, which needs their recruitment ID: pay them first "
                "(export_study --with-payments), then run this again with --payments-done"
            )
        answers = Answer.objects.filter(participant=participant).delete()[0]
        ids = RecruitmentId.objects.filter(participant=participant).delete()[0]
        timed = 0
        seat = StudySeat.objects.filter(participant=participant).first()
        if seat is not None:
            timed = Action.objects.filter(
                table__study_match__study_table=seat.study_table_id, seat=seat.position
            ).filter(Q(think_ms__isnull=False) | Q(think_bound_ms__isnull=False))
            timed = timed.update(think_ms=None, think_bound_ms=None)
        participant.withdrawn = True
        participant.withdrawn_at = timezone.now()
        participant.save(update_fields=["withdrawn", "withdrawn_at", "updated_at"])
        AuditEntry.objects.create(
            study=study,
            participant=participant.pseudonym,
            action=AuditEntry.Action.WITHDRAW,
            reason=f"{reason} (removed {answers} answers, {timed} think times, "
            f"{ids} recruitment ID)",
            by=by,
        )
    log.info("study %s: participant %s withdrawn", study.slug, participant.pseudonym)
    return participant


# ----- pilot reset ---------------------------------------------------------------------


def _reset_problem(study: Study) -> str | None:
    """Why the study's data cannot be cleared as pilot data (None: it can)."""
    people = Participant.objects.filter(study=study)
    real = people.filter(pilot=False).count()
    if real:
        return (
            f"study {study.slug!r} has {real} participant(s) who are not pilots: their data "
            "are the study's, and reset_study --pilot never clears them"
        )
    tables = Table.objects.filter(study_table__study=study, pilot=False).count()
    tables += Table.objects.filter(study_match__study_table__study=study, pilot=False).count()
    if tables:
        return (
            f"study {study.slug!r} has {tables} table(s) not flagged pilot (a participant "
            "marked pilot after being seated): their rounds count as study data"
        )
    busy = people.filter(stage__in=[Stage.WAITING, Stage.PLAYING]).count()
    if busy:
        return (
            f"{busy} pilot participant(s) of {study.slug!r} are waiting or playing: reset "
            "once they have finished"
        )
    declined = ConsentDeclined.objects.filter(study=study, count__gt=0).exists()
    if not people.exists() and not declined:
        return f"study {study.slug!r} has no pilot data to clear"
    return None


@transactions.retried
def reset_pilot(study: Study, *, reason: str, by: str) -> int:
    """Clear the study's pilot data (how many participants); :class:`Refused`
    (nothing changed) when any of it is not pilot data."""
    with transactions.atomic():
        # The lock order: the study (no new consent), its conditions (no grouping),
        # then its participants; the game's tables are only updated, after them.
        Study.objects.select_for_update(no_key=True).filter(pk=study.pk).first()
        list(Condition.objects.select_for_update(no_key=True).filter(study=study).order_by("pk"))
        people = list(Participant.objects.select_for_update().filter(study=study).order_by("pk"))
        problem = _reset_problem(study)
        if problem is not None:
            raise Refused(problem)
        tables = StudyTable.objects.filter(study=study)
        game_tables = set(tables.values_list("table_id", flat=True))
        game_tables |= set(tables.values_list("matches__table_id", flat=True))
        # The tables stay as the game's record, flagged pilot: out of every analysis.
        Table.objects.filter(pk__in=game_tables - {None}).update(pilot=True)
        StudySeat.objects.filter(study_table__study=study).delete()
        tables.delete()  # and their StudyMatch rows (CASCADE)
        Participant.objects.filter(pk__in=[p.pk for p in people]).delete()
        ConsentDeclined.objects.filter(study=study).update(count=0)
        AuditEntry.objects.create(
            study=study,
            action=AuditEntry.Action.RESET_PILOT,
            reason=f"{reason} (cleared {len(people)} pilot participants, "
            f"{len(game_tables - {None})} tables' links)",
            by=by,
        )
    log.info("study %s: pilot data cleared (%d participants)", study.slug, len(people))
    return len(people)
