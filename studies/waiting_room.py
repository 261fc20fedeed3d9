"""The waiting room: participants of a condition grouped into tables.

A participant who passed the quiz waits (stage ``waiting``); their page polls
:func:`state` (``/study/<slug>/state/``), and each poll, like the waiting
page itself, is where a wait can end (:func:`advance`). Under the lock of
the condition's row, the longest-waiting participants of the condition are
taken as soon as there are as many as the condition's participant seats:
:func:`form_table` seats them as the seat plan says, puts its bots, starts
the match and moves them to ``playing``. One who has waited longer than the
study's ``waiting_room.timeout_seconds`` gets a table anyway: the participant
seats still empty go to the study's stand-in bot, and the table says how
many (``StudyTable.filled_by_stand_in``), so that analyses can leave it out.

Each poll also marks the participant seen (``Participant.last_seen``). One
whose page has not polled for the study's ``dropout.absent_seconds`` has
left (closed the page, lost the connection): they are no longer grouped, and
the condition's next grouping moves them to ``dropped``, so that nobody is
seated at a table with a participant who is gone.

The state names no one: a stage, a count and (once seated) the table page,
never an ID or a pseudonym; the count is of the participant's own
condition, which the page does not name (the participant is blind to it).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TypedDict

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from game import seating
from studies import playing, stages
from studies.models import Condition, Participant, StudyMatch, StudySeat, StudyTable
from studies.study_types import PARTICIPANT

log = logging.getLogger(__name__)
Stage = Participant.Stage


class State(TypedDict):
    stage: str
    waiting: int
    table: str | None  # the table page of a seated participant


def waiting_count(participant: Participant) -> int:
    """How many of the participant's study and condition wait now (them included)."""
    return Participant.objects.filter(
        study_id=participant.study_id,
        condition_id=participant.condition_id,
        stage=Stage.WAITING,
    ).count()


def state(participant: Participant) -> State:
    """The participant's state, after :func:`advance` (the caller should use the
    participant :func:`advance` returns for anything else)."""
    return {
        "stage": participant.stage,
        "waiting": waiting_count(participant),
        "table": playing.table_url(participant) if participant.stage == Stage.PLAYING else None,
    }


def advance(participant: Participant) -> Participant:
    """The participant as they are now (a poll of theirs: seen now): seated if
    their wait is over, moved on from ``playing`` if their match ended or they
    dropped out."""
    if participant.stage == Stage.WAITING:
        Participant.objects.filter(pk=participant.pk, stage=Stage.WAITING).update(
            last_seen=timezone.now()
        )
        group_waiting(participant.condition)
    elif participant.stage == Stage.PLAYING:
        playing.check(participant)
    else:
        return participant
    return Participant.objects.select_related("study", "condition").get(pk=participant.pk)


def _waited_since(participant: Participant) -> str:
    return str(participant.stage_times.get(Stage.WAITING, "")) or participant.updated_at.isoformat()


def _table_due(condition: Condition, waiting: Sequence[Participant], now: datetime) -> bool:
    """Whether ``waiting`` (longest-waiting first) makes a table now."""
    size = len([who for who in condition.seat_plan if who == PARTICIPANT])
    if not waiting or not size:
        return False
    if len(waiting) >= size:
        return True
    timeout = condition.study.definition["timeouts"].get("waiting_seconds")
    cutoff = (now - timedelta(seconds=timeout)).isoformat() if timeout is not None else ""
    return _waited_since(waiting[0]) <= cutoff


def _absent_since(condition: Condition, now: datetime) -> datetime:
    """Waiting participants not seen since then have left."""
    seconds = condition.study.definition["timeouts"].get("dropout_absent_seconds", 120)
    return now - timedelta(seconds=seconds)


def _waiting(condition: Condition, now: datetime) -> list[Participant]:
    """The condition's waiting participants who are still here, longest-waiting first."""
    present = Participant.objects.filter(condition=condition, stage=Stage.WAITING).exclude(
        last_seen__lt=_absent_since(condition, now)
    )
    return sorted(present, key=lambda p: (_waited_since(p), p.pk))


def _drop_absent(condition: Condition, now: datetime) -> int:
    """Move the condition's waiting participants who have left to ``dropped``."""
    gone = Participant.objects.filter(
        condition=condition, stage=Stage.WAITING, last_seen__lt=_absent_since(condition, now)
    )
    for participant in gone:
        stages.move(participant, Stage.WAITING, Stage.DROPPED)
        log.info("study participant %s left the waiting room", participant.pseudonym)
    return len(gone)


def group_waiting(condition: Condition) -> list[StudyTable]:
    """Every table the condition's waiting participants make now (usually none
    or one); those who left the waiting room are dropped first."""
    now = timezone.now()
    absent = Participant.objects.filter(
        condition=condition, stage=Stage.WAITING, last_seen__lt=_absent_since(condition, now)
    ).exists()
    if not absent and not _table_due(condition, _waiting(condition, now), now):
        return []  # most polls: nothing to do, and no lock taken
    with transaction.atomic():
        # A write first: SQLite's write lock, taken before anything is read (a
        # read lock cannot be upgraded while another poll holds the write lock).
        Condition.objects.filter(pk=condition.pk).update(position=F("position"))
        locked = Condition.objects.select_for_update().select_related("study").get(pk=condition.pk)
        _drop_absent(locked, now)
        waiting = _waiting(locked, now)  # again, under the lock
        size = len([who for who in locked.seat_plan if who == PARTICIPANT])
        formed = []
        while _table_due(locked, waiting, now):
            formed.append(form_table(locked, waiting[:size]))
            waiting = waiting[size:]
    return formed


def form_table(condition: Condition, group: Sequence[Participant]) -> StudyTable:
    """A started table for ``group`` (the longest-waiting first, in seat-plan
    order) with the condition's bots; participant seats left over go to the
    study's stand-in bot. Runs inside the caller's transaction and lock."""
    study = condition.study
    definition = study.definition
    plan = list(condition.seat_plan)
    positions = [p for p, who in enumerate(plan) if who == PARTICIPANT]
    if not group or len(group) > len(positions):
        raise ValueError(f"{len(group)} participants for {len(positions)} participant seats")
    seated = StudySeat.objects.filter(participant__in=group).select_related("participant")
    if seated:  # one table per participant, ever (StudySeat's constraint says so too)
        who = ", ".join(sorted(s.participant.pseudonym for s in seated))
        raise ValueError(f"already at a study table: {who}; nobody was seated again")
    table = seating.create_table(
        rules=definition["rules"],
        turn_seconds=definition["play"]["turn_seconds"],
        stand_in_bots=True,
        bot_delay=definition["play"]["bot_delay"],
    )
    # Its bots shown as players in a "names" condition; its rounds counted under
    # the condition, and as pilot data if the study or anyone seated is a pilot;
    # rated unless the study says not.
    table.bots_as_players = condition.disclosure == "names"
    table.rated = definition["play"].get("rated", True)
    table.study_condition = condition.pk
    table.pilot = study.pilot or any(p.pilot for p in group)
    table.save(update_fields=["bots_as_players", "rated", "study_condition", "pilot"])
    # Started below, in this transaction: never one of the lobby's open tables.
    study_table = StudyTable.objects.create(
        study=study,
        condition=condition,
        table=table,
        filled_by_stand_in=len(positions) - len(group),
    )
    StudyMatch.objects.create(study_table=study_table, number=1, table=table)
    for position, participant in zip(positions, group, strict=False):
        seating.take_seat(
            table,
            position,
            guest_id=playing.guest_id_of(participant),
            guest_name=playing.PLAYER_NAMES[position],
        )
        StudySeat.objects.create(
            study_table=study_table, participant=participant, position=position
        )
        stages.move(participant, Stage.WAITING, Stage.PLAYING)
    stand_in = definition["timeouts"]["stand_in_bot"]
    for position in positions[len(group) :]:
        seating.add_bot(table, position, stand_in)
    for position, who in enumerate(plan):
        if who != PARTICIPANT:
            seating.add_bot(table, position, who)
    seating.start_table(table)
    log.info(
        "study %s: table %s for %s (condition %s, %d stand-in)",
        study.slug,
        table.public_id,
        ", ".join(p.pseudonym for p in group),
        condition.name,
        study_table.filled_by_stand_in,
    )
    return study_table
