"""The study's own sweep: participants whose page went quiet are moved on by
the server, not by their own page.

A participant's stage moves on when their page asks (``studies.waiting_room``
``advance``). A waiter whose page was closed, or a seated participant who
closed the tab mid-match, would never ask again: they would stay ``waiting``
or ``playing`` for ever, and a waiting room would keep counting them. The
sweep asks for them: every waiting room is looked at (its absent waiters
dropped, the tables it owes formed) and every playing participant is judged
by the one drop-out rule (``studies.playing.dropped_why``). The clock ticks
first, so that an outage that just ended is credited before anyone is judged.

It runs every :data:`SWEEP_EVERY_SECONDS`: from Celery beat on the production
stack (``studies.sweep``, ``spadesite/celery.py``), from any study page's
request on any server process (:func:`maybe_sweep`, at most once per interval
in a process), or by ``manage.py sweep_studies`` from cron. Safe to repeat
and to run in several processes at once: every stage move is made under the
participant's row lock from the stage it read.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from django.db import DatabaseError

from studies import clock, playing, waiting_room
from studies.models import Condition, Participant

log = logging.getLogger(__name__)
Stage = Participant.Stage

SWEEP_EVERY_SECONDS = 15.0
_lock = threading.Lock()
_last = 0.0  # monotonic time of this process's last sweep


@dataclass(frozen=True)
class Swept:
    rooms: int  # waiting rooms looked at
    playing: int  # playing participants judged
    moved: int  # of all those, participants whose stage changed


def sweep() -> Swept:
    """Look at every waiting room and every playing participant once."""
    clock.tick(force=True)
    before = dict(
        Participant.objects.filter(stage__in=(Stage.WAITING, Stage.PLAYING)).values_list(
            "pk", "stage"
        )
    )
    rooms = Condition.objects.filter(participants__stage=Stage.WAITING).distinct()
    for condition in rooms:
        waiting_room.group_waiting(condition)
    seated = Participant.objects.filter(stage=Stage.PLAYING).select_related("study", "condition")
    judged = 0
    for participant in seated:
        playing.check(participant, by_them=False)
        judged += 1
    after = dict(Participant.objects.filter(pk__in=before).values_list("pk", "stage"))
    moved = sum(after.get(pk) != stage for pk, stage in before.items())
    if moved:
        log.info("study sweep: %d participant(s) moved on", moved)
    return Swept(len(rooms), judged, moved)


def maybe_sweep() -> None:
    """Sweep if this process has not for :data:`SWEEP_EVERY_SECONDS` (a study
    page's request calls it; a failure is logged, never the page's)."""
    global _last
    with _lock:
        if time.monotonic() - _last < SWEEP_EVERY_SECONDS:
            return
        _last = time.monotonic()
    try:
        sweep()
    except DatabaseError:
        log.warning("study sweep failed; the next one tries again", exc_info=True)
