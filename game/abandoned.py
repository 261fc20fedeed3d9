"""Tables nobody comes back to are closed, so the lobby lists only live ones.

A table remembers when a player was last there (``Table.last_human_at``): the
table's creation, every seat change, and its seated players' and host's
sockets (opened, closed, and every ``TOUCH_EVERY`` seconds while open, which
the page's heartbeat keeps up; those a process gathers and writes together,
``game.sockets.visits``). An open or playing table whose last visit is
older than ``SPADES_ABANDON_MINUTES`` (default 60) is *abandoned*: it leaves
the lobby at once (:func:`cutoff` filters the list), and the next sweep sets
its status to ``abandoned`` through the table master, which stops its bots
(a move needs a playing table) and tells any socket still open. The sweep runs from the lobby page
at most once a minute per process, and from ``manage.py close_abandoned_tables``
for a cron job.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from game import master
from game.master import Changed
from game.models import Table

TOUCH_EVERY = 60.0  # seconds between two visits a socket records
SWEEP_EVERY = 60.0  # seconds between two sweeps from the lobby, per process
LIVE = (Table.Status.OPEN, Table.Status.PLAYING)

log = logging.getLogger(__name__)
_last_sweep = 0.0
_sweep_lock = threading.Lock()


def abandon_after() -> timedelta:
    return timedelta(minutes=float(getattr(settings, "SPADES_ABANDON_MINUTES", 60)))


def cutoff(now: datetime | None = None) -> datetime:
    """A live table last visited before this is abandoned."""
    return (now or timezone.now()) - abandon_after()


def touch(table_pk: int, now: datetime | None = None) -> None:
    """A player is here now (one UPDATE; a closed table stays closed)."""
    touch_tables([table_pk], now)


def touch_tables(table_pks: list[int], now: datetime | None = None) -> None:
    """Players are at these tables now: one UPDATE for all of them."""
    live = Table.objects.filter(pk__in=table_pks, status__in=LIVE)
    live.update(last_human_at=now or timezone.now())


def close_abandoned(now: datetime | None = None) -> list[int]:
    """Close every live table nobody visited within ``SPADES_ABANDON_MINUTES``;
    returns their primary keys. Sockets still open get the closed table's state."""
    now = now or timezone.now()
    stale = Table.objects.filter(status__in=LIVE, last_human_at__lt=cutoff(now))

    def write() -> Changed[list[int]]:
        pks = list(stale.select_for_update().values_list("pk", flat=True))
        if pks:
            # The filter again: a visit between the read and the lock keeps a table.
            Table.objects.filter(pk__in=pks, last_human_at__lt=cutoff(now)).update(
                status=Table.Status.ABANDONED, finished_at=now
            )
        return Changed(pks, pks)

    pks = master.get().change(write)
    if pks:
        log.info("closed %d abandoned table(s)", len(pks))
    return pks


def sweep_now_and_then() -> None:
    """:func:`close_abandoned`, at most once per ``SWEEP_EVERY`` seconds in this process."""
    global _last_sweep
    with _sweep_lock:
        if time.monotonic() - _last_sweep < SWEEP_EVERY:
            return
        _last_sweep = time.monotonic()
    close_abandoned()


def reset() -> None:
    """Forget the last sweep (tests)."""
    global _last_sweep
    _last_sweep = 0.0
