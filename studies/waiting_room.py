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
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypedDict

from django.db.models import Count, F, Min, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from game import seating
from game.sql.connections import features
from studies import clock, playing, stages, transactions
from studies.models import (
    Condition,
    DroppedWhy,
    Participant,
    StudyMatch,
    StudySeat,
    StudyTable,
)
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
        condition_id=participant.condition_id, stage=Stage.WAITING
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
        clock.tick()  # first: an outage just over is credited before anyone is judged
        Participant.objects.filter(pk=participant.pk, stage=Stage.WAITING).update(
            last_seen=timezone.now()
        )
        group_waiting(participant.condition)
    elif participant.stage == Stage.PLAYING:
        playing.check(participant)
    else:
        return participant
    return Participant.objects.select_related("study", "condition").get(pk=participant.pk)


@dataclass(frozen=True)
class Census:
    """A condition's waiting room in one query: who is here, who has left, and
    since when the longest-waiting one waits."""

    present: int
    absent: int
    oldest: datetime | None


# Last heard of: the last poll, else the arrival in the waiting room (a page
# that never polled has been absent since then).
_SEEN = Coalesce("last_seen", "waiting_since", "updated_at")
_SINCE = Coalesce("waiting_since", "updated_at")


def census(condition: Condition, now: datetime) -> Census:
    """The condition's waiting room now: one aggregate query, whatever the number
    waiting (each poll asks it, so its cost must not grow with the crowd)."""
    cutoff = _absent_since(condition, now)
    here = Q(seen__gte=cutoff)
    figures = (
        Participant.objects.filter(condition=condition, stage=Stage.WAITING)
        .annotate(seen=_SEEN, since=_SINCE)
        .aggregate(
            present=Count("pk", filter=here),
            absent=Count("pk", filter=~here),
            oldest=Min("since", filter=here),
        )
    )
    return Census(figures["present"], figures["absent"], figures["oldest"])


def _seats_for_participants(condition: Condition) -> int:
    return len([who for who in condition.seat_plan if who == PARTICIPANT])


def _table_due(condition: Condition, present: int, oldest: datetime | None, now: datetime) -> bool:
    """Whether ``present`` participants, the longest-waiting there since
    ``oldest``, make a table now."""
    size = _seats_for_participants(condition)
    if not present or not size:
        return False
    if present >= size:
        return True
    timeout = condition.study.definition["timeouts"].get("waiting_seconds")
    return timeout is not None and oldest is not None and oldest <= now - timedelta(seconds=timeout)


def _absent_since(condition: Condition, now: datetime) -> datetime:
    """Waiting participants not heard of since then have left."""
    seconds = condition.study.definition["timeouts"].get("dropout_absent_seconds", 120)
    return now - timedelta(seconds=seconds)


def _waiting(condition: Condition, now: datetime) -> list[Participant]:
    """The condition's waiting participants who are still here, longest-waiting
    first (read only when a table is due, under the condition's lock)."""
    return list(
        Participant.objects.filter(condition=condition, stage=Stage.WAITING)
        .annotate(seen=_SEEN, since=_SINCE)
        .filter(seen__gte=_absent_since(condition, now))
        .order_by("since", "pk")
    )


def _drop_absent(condition: Condition, now: datetime) -> int:
    """Move the condition's waiting participants who have left to ``dropped``."""
    gone = list(
        Participant.objects.filter(condition=condition, stage=Stage.WAITING)
        .annotate(seen=_SEEN)
        .filter(seen__lt=_absent_since(condition, now))
        .order_by("pk")
    )
    for participant in gone:
        stages.move(participant, Stage.WAITING, Stage.DROPPED, why=DroppedWhy.WAITING)
        log.info("study participant %s left the waiting room", participant.pseudonym)
    return len(gone)


def group_waiting(condition: Condition) -> list[StudyTable]:
    """Every table the condition's waiting participants make now (usually none
    or one); those who left the waiting room are dropped first.

    Most polls end at the census: nothing due, no lock taken. When a table is
    due, one poll groups under the condition's lock while the others, finding
    it taken, go back to waiting at once (``SKIP LOCKED``) rather than queue
    on a connection each for a grouping that will seat them anyway."""
    now = timezone.now()
    seen = census(condition, now)
    if not seen.absent and not _table_due(condition, seen.present, seen.oldest, now):
        return []
    return _group(condition.pk, now)


@transactions.retried
def _group(condition_pk: int, now: datetime) -> list[StudyTable]:
    with transactions.atomic():
        if not features().row_locks:
            # A write first: SQLite's write lock, taken before anything is read (a
            # read lock cannot be upgraded while another poll holds the write lock).
            Condition.objects.filter(pk=condition_pk).update(position=F("position"))
        # The second lock of the order (studies.transactions); the study is read,
        # not locked. Taken by another poll: it is grouping this room right now.
        locked = (
            Condition.objects.select_for_update(no_key=True, skip_locked=True, of=("self",))
            .select_related("study")
            .filter(pk=condition_pk)
            .first()
        )
        if locked is None:
            return []
        _drop_absent(locked, now)
        waiting = _waiting(locked, now)  # again, under the lock
        size = _seats_for_participants(locked)
        formed = []
        while _table_due(locked, len(waiting), _since(waiting), now):
            formed.append(form_table(locked, waiting[:size]))
            waiting = waiting[size:]
    return formed


def _since(waiting: Sequence[Participant]) -> datetime | None:
    return waiting[0].since if waiting else None  # type: ignore[attr-defined]


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
    table.talk = definition["play"].get("talk", "off")
    table.study_condition = condition.pk
    table.pilot = study.pilot or any(p.pilot for p in group)
    table.save(update_fields=["bots_as_players", "rated", "talk", "study_condition", "pilot"])
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
