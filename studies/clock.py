"""The server's own sign of life, so that an outage never counts as a
participant's absence.

A waiting participant is dropped once their page has not polled for the
study's ``dropout.absent_seconds`` (``studies.waiting_room``). Measured on
the wall clock alone, an outage longer than that (a restart of every server
process, PostgreSQL down) would drop every waiting participant at the first
poll after it, though none of them left. So the polls also tick one clock
row, :class:`~studies.models.StudyClock` (at most once per
:data:`TICK_SECONDS` per process): when a tick finds the row older than
:data:`OUTAGE_AFTER_SECONDS` *and* this process has reason to know the site
was down meanwhile (it started during the gap, or it met a database error
during it), the gap was an outage, and every waiting participant's
``last_seen`` is moved on by it: their absence resumes counting where the
outage stopped it. The outage is kept (:class:`~studies.models.StudyOutage`),
so that a seated participant's time away from the table leaves it out too
(:func:`absent_for`). A gap that was only a quiet site (nobody waiting polled)
is not credited, so that a participant who left during it is still dropped.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta

from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from studies.models import Participant, StudyClock, StudyOutage

log = logging.getLogger(__name__)

TICK_SECONDS = 2.0
# Longer than a few missed polls (every 4 s): a gap this long with the site
# down is an outage.
OUTAGE_AFTER_SECONDS = 15.0
_STARTED_AT = timezone.now()  # this process's start (its import, in practice)
_lock = threading.Lock()
_last_tick = 0.0  # monotonic time of this process's last tick
_last_failure: datetime | None = None  # this process's last database error


def database_failed(now: datetime | None = None) -> None:
    """Note that the database could not be had (``spadesite.busy`` calls it)."""
    global _last_failure
    _last_failure = now or timezone.now()


def tick(now: datetime | None = None, *, force: bool = False) -> float:
    """The clock ticked by a poll: the outage it found and credited, in seconds
    (0 nearly always). At most once per :data:`TICK_SECONDS` in a process."""
    global _last_tick
    with _lock:
        if not force and time.monotonic() - _last_tick < TICK_SECONDS:
            return 0.0
        _last_tick = time.monotonic()
    now = now or timezone.now()
    clock = StudyClock.objects.filter(pk=1).values_list("alive_at", flat=True).first()
    StudyClock.objects.update_or_create(pk=1, defaults={"alive_at": now})
    if clock is None:
        return 0.0
    gap = (now - clock).total_seconds()
    if gap < OUTAGE_AFTER_SECONDS or not _down_during(clock, now):
        return 0.0
    return credit(clock, now)


def _down_during(since: datetime, now: datetime) -> bool:
    """Whether this process knows the site was down between ``since`` and ``now``."""
    failed = _last_failure is not None and since <= _last_failure <= now
    return failed or since <= _STARTED_AT <= now


def credit(since: datetime, now: datetime) -> float:
    """Move every waiting participant's last sign on by the outage ``since``
    to ``now`` (only those heard of before it: a poll during it, on a process
    that was up, needs no credit). The seconds credited."""
    seconds = (now - since).total_seconds()
    heard_before = Q(last_seen__lte=since) | Q(last_seen__isnull=True, waiting_since__lte=since)
    moved = (
        Participant.objects.filter(stage=Participant.Stage.WAITING)
        .filter(heard_before)
        .update(last_seen=Coalesce("last_seen", "waiting_since") + timedelta(seconds=seconds))
    )
    StudyClock.objects.filter(pk=1).update(outage_seconds=F("outage_seconds") + seconds)
    StudyOutage.objects.create(started_at=since, ended_at=now)
    log.warning(
        "the site was down %.0f s (%s to %s): %d waiting participants' absence paused",
        seconds, since.isoformat(), now.isoformat(), moved,
    )  # fmt: skip
    return seconds


def absent_for(since: datetime, now: datetime) -> float:
    """Seconds from ``since`` to ``now`` that the site was alive: the
    credited outages between them do not count (a seated participant's
    absence from the table, ``studies.playing``)."""
    seconds = (now - since).total_seconds()
    for started, ended in StudyOutage.objects.filter(
        ended_at__gt=since, started_at__lt=now
    ).values_list("started_at", "ended_at"):
        seconds -= (min(ended, now) - max(started, since)).total_seconds()
    return max(seconds, 0.0)
