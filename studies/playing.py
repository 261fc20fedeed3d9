"""A seated participant: their guest identity at the table, and the end of
their ``playing`` stage.

At the table a participant is a guest (``game.identity``) whose guest id is
derived from their pseudonym with a key (HMAC with SECRET_KEY): the session
of the study carries it, so the ordinary table page and its socket know
their seat; the pseudonym itself, which exports name, proves nothing, and the
recruitment ID is never used.

Their stage moves on lazily, when their state is next read
(``studies.waiting_room.advance``): to their next match at a new table while
the study's ``matches = N`` are not all played (:func:`next_match`), to
``questionnaire`` once the last match is over, to ``dropped`` once their turn
timer has run out the study's ``dropout.missed_turns`` times in a row (their
stand-in's moves in the action log) or they have left the seat. The
stand-in keeps their seat either way.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from django.urls import reverse

from game import identity, seating
from game.models import Action, Seat, Table
from studies import stages
from studies.models import Participant, StudyMatch, StudySeat, StudyTable, site_keys

log = logging.getLogger(__name__)
Stage = Participant.Stage

# A participant's name at the table, by seat (the bots' personas are others).
PLAYER_NAMES = ("Nadia", "Elliot", "Sam", "Wren")


def guest_id_of(participant: Participant, key: str | None = None) -> str:
    """The participant's guest id at their table: keyed (SECRET_KEY, or
    ``key``), not the pseudonym."""
    message = f"study-guest\x00{participant.pseudonym}".encode()
    secret = (key or settings.SECRET_KEY).encode()
    digest = hmac.new(secret, message, hashlib.sha256).hexdigest()
    return "study-" + digest[:40]


def guest_ids_of(participant: Participant) -> list[str]:
    """Their guest id under the key in use and under each rotated out: a seat
    taken before a rotation is still theirs."""
    return [guest_id_of(participant, key) for key in site_keys()]


def held_guest_id(seat: StudySeat) -> str | None:
    """The guest id their seat at the table holds, if it is still theirs."""
    ids = guest_ids_of(seat.participant)
    return (
        Seat.objects.filter(
            table=seat.study_table.table,
            position=seat.position,
            kind=Seat.Kind.HUMAN,
            guest_id__in=ids,
        )
        .values_list("guest_id", flat=True)
        .first()
    )


def seat_of(participant: Participant) -> StudySeat | None:
    found = StudySeat.objects.filter(participant=participant)
    return found.select_related("study_table__table").first()


def table_url(participant: Participant) -> str | None:
    seat = seat_of(participant)
    if seat is None:
        return None
    return reverse("lobby:table", args=[seat.study_table.table.public_id])


def sit_in_session(session: Any, participant: Participant) -> None:
    """Make the session the participant's guest at their table."""
    seat = seat_of(participant)
    if seat is None:
        return
    # The seat's own id (taken under the key of its day), else the key in use's.
    session[identity.GUEST_ID_KEY] = held_guest_id(seat) or guest_id_of(participant)
    session[identity.GUEST_NAME_KEY] = PLAYER_NAMES[seat.position]
    # No other table for this browser until the study is done (``lobby`` refuses).
    session[identity.BOUND_TABLE_KEY] = seat.study_table.table.public_id
    after = dict(session.get(identity.AFTER_MATCH_KEY) or {})
    after[seat.study_table.table.public_id] = reverse(
        "studies:table", args=[participant.study.slug]
    )
    session[identity.AFTER_MATCH_KEY] = after


def has_dropped(seat: StudySeat, missed_turns: int) -> bool:
    """Their stand-in made ``missed_turns`` of the seat's actions in a row at
    some point of the match (the threshold, once reached, counts even if they
    came back), or the seat is no longer theirs (handed over)."""
    table = seat.study_table.table
    if held_guest_id(seat) is None:
        return True
    in_a_row = 0
    for by_stand_in in (
        Action.objects.filter(table=table, seat=seat.position)
        .order_by("version")
        .values_list("by_stand_in", flat=True)
    ):
        in_a_row = in_a_row + 1 if by_stand_in else 0
        if in_a_row >= missed_turns:
            return True
    return False


def next_match(study_table: StudyTable, matches: int) -> bool:
    """Start the study table's next match if its match is over and fewer than
    ``matches`` were played: a rematch at a new game table with the same seats
    (``game.seating.create_rematch``), which becomes ``StudyTable.table``.
    Whether a match is (now) in play; the first poll of the group starts it,
    under the study table's lock."""
    with transaction.atomic():
        locked = (
            StudyTable.objects.select_for_update().select_related("table").get(pk=study_table.pk)
        )
        if locked.table.status != Table.Status.FINISHED:
            return locked.table.status == Table.Status.PLAYING  # started by another poll
        played = locked.matches.count()
        if played >= matches:
            return False
        new = seating.create_rematch(locked.table)
        StudyMatch.objects.create(study_table=locked, number=played + 1, table=new)
        locked.table = new
        locked.save(update_fields=["table"])
    log.info("study table %s: match %d at table %s", locked.pk, played + 1, new.public_id)
    return True


def check(participant: Participant) -> None:
    """Move a ``playing`` participant on: to their next match (``matches = N``),
    or once the last is over to the questionnaire, or if they dropped out."""
    seat = seat_of(participant)
    if seat is None or participant.stage != Stage.PLAYING:
        return
    missed = participant.study.definition["timeouts"]["dropout_missed_turns"]
    status = seat.study_table.table.status
    matches = participant.study.definition["play"].get("matches") or 1
    if has_dropped(seat, missed) or status == Table.Status.ABANDONED:
        to = Stage.DROPPED
    elif status == Table.Status.FINISHED:
        if next_match(seat.study_table, matches):
            return
        to = Stage.QUESTIONNAIRE
    else:
        return
    try:
        with transaction.atomic():
            stages.move(participant, Stage.PLAYING, to)
            if to == Stage.DROPPED:
                StudySeat.objects.filter(pk=seat.pk).update(dropped=True)
    except stages.OutOfOrder:
        pass  # another poll moved them first
