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
``questionnaire`` once the last match is over, to ``dropped`` by one rule
over all their matches (:func:`dropped_why`): their turn timer ran out the
study's ``dropout.missed_turns`` times in a row (timers counted by the move
path on the seat, ``Seat.missed_in_a_row``, not the stand-in's moves), or
they have been away from the table for ``dropout.absent_seconds`` of the
site's life, or they left the seat. The stand-in keeps their seat either
way. Their own page moves them on, and so does the sweep
(``studies.sweep``) for those whose page has gone quiet.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from game import identity, seating
from game.models import Seat, Table
from studies import clock, stages
from studies.models import (
    DroppedWhy,
    Participant,
    StudyMatch,
    StudySeat,
    StudyTable,
    site_keys,
)

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
    notes = dict(session.get(identity.AWAY_NOTE_KEY) or {})
    notes[seat.study_table.table.public_id] = away_note(participant.study.definition["timeouts"])
    session[identity.AWAY_NOTE_KEY] = notes


def _duration(seconds: int) -> str:
    return f"{seconds // 60} minutes" if seconds % 60 == 0 else f"{seconds} seconds"


def away_note(timeouts: Mapping[str, Any]) -> str:
    """The drop-out rule as the table page tells a participant who is away."""
    away = _duration(int(timeouts["dropout_absent_seconds"]))
    return (
        f'Press "I\'m back" to play on. If you stay away for {away}, or your time runs '
        f"out {timeouts['dropout_missed_turns']} times in a row, you stop taking part in "
        "the study, and the computer player finishes the match in your place."
    )


def match_seats(seat: StudySeat) -> list[Seat]:
    """The participant's seat at each of their matches' tables (a rematch
    keeps the positions), the match being played last."""
    study_table = seat.study_table
    tables = [m.table_id for m in study_table.matches.all() if m.table_id != study_table.table_id]
    found = {
        s.table_id: s
        for s in Seat.objects.filter(
            table_id__in=[*tables, study_table.table_id], position=seat.position
        )
    }
    return [found[t] for t in [*tables, study_table.table_id] if t in found]


def dropped_why(seat: StudySeat, timeouts: Mapping[str, Any], now: datetime) -> str | None:
    """Why the participant has dropped out, or None: the one rule, over all
    their matches. Their turn timer ran out ``dropout_missed_turns`` times in
    a row (timers, not the stand-in's moves: one timer is followed by quick
    moves while they are away; once reached it counts even if they came
    back), or they have been away from the table (marked away and not back)
    for ``dropout_absent_seconds`` of the site's life (an outage does not
    count: ``studies.clock.absent_for``), or the seat is no longer theirs."""
    if held_guest_id(seat) is None:
        return DroppedWhy.LEFT
    seats = match_seats(seat)
    if any(s.most_missed_in_a_row >= timeouts["dropout_missed_turns"] for s in seats):
        return DroppedWhy.TIMERS
    since = seats[-1].away_since if seats and seats[-1].away else None
    if since is not None and clock.absent_for(since, now) >= timeouts["dropout_absent_seconds"]:
        return DroppedWhy.AWAY
    return None


def is_away(seat: StudySeat) -> bool:
    """Their seat at the match being played is marked away (not back yet)."""
    return Seat.objects.filter(
        table=seat.study_table.table_id, position=seat.position, away=True
    ).exists()


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


def check(participant: Participant, *, by_them: bool = True) -> None:
    """Move a ``playing`` participant on: to their next match (``matches = N``),
    or once the last is over to the questionnaire, or to ``dropped`` if they
    dropped out (:func:`dropped_why`; also when the table was abandoned).

    ``by_them``: their own page asked (a sign of life). The sweep
    (``studies.sweep``) asks for everyone and does not move on a participant
    still away from a finished match: they may come back for it."""
    seat = seat_of(participant)
    if seat is None or participant.stage != Stage.PLAYING:
        return
    definition = participant.study.definition
    status = seat.study_table.table.status
    matches = definition["play"].get("matches") or 1
    why = dropped_why(seat, definition["timeouts"], timezone.now())
    if why is None and status == Table.Status.ABANDONED:
        why = DroppedWhy.LEFT
    if why is not None:
        to = Stage.DROPPED
    elif status == Table.Status.FINISHED:
        if not by_them and is_away(seat):
            return
        if next_match(seat.study_table, matches):
            return
        to = Stage.QUESTIONNAIRE
    else:
        return
    try:
        with transaction.atomic():
            stages.move(participant, Stage.PLAYING, to, why=why or "")
            if to == Stage.DROPPED:
                StudySeat.objects.filter(pk=seat.pk).update(dropped=True)
    except stages.OutOfOrder:
        return  # another poll moved them first
    if to == Stage.DROPPED:
        log.info("study participant %s dropped out (%s)", participant.pseudonym, why)


def dropped_text(participant: Participant) -> str:
    """Why their session ended, as their end page says it ('' if not dropped)."""
    if participant.stage != Stage.DROPPED:
        return ""
    timeouts = participant.study.definition["timeouts"]
    away = _duration(int(timeouts["dropout_absent_seconds"]))
    texts = {
        DroppedWhy.WAITING: f"The waiting room's page was closed for more than {away}, "
        "so your place in the study was given up.",
        DroppedWhy.TIMERS: f"Your time to play ran out {timeouts['dropout_missed_turns']} "
        "times in a row, so a computer player finished the match in your place.",
        DroppedWhy.AWAY: f"You were away from the table for more than {away}, so a "
        "computer player finished the match in your place.",
        DroppedWhy.LEFT: "You stopped taking part, so a computer player finished the "
        "match in your place.",
        DroppedWhy.RESEARCHER: "The researchers ended your session.",
    }
    text = texts.get(participant.dropped_why, "")
    return (
        f"{text} The study's information says what this means for your payment; if you "
        "think this is a mistake, write to the researchers and quote your reference below."
    ).strip()
