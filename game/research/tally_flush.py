"""Live rounds added to the tallies after their move, in batches.

A live round's end stores its round row with ``tallied`` False (or, on the
quick move, a pending round whose row the flush writes first:
``game.research.round_rows``), and its move's transaction leaves the tallies
(``game.research.tallies``) alone. Adding a round to
them is an upsert of some 60 rows that every table of the same rules and
make-up shares; in the move's transaction it held those rows' locks until the
commit, so tables ending a round together queued one behind the other, and
their players waited (``bench_server``: p99 177 ms against 24 ms with the
round ends spread out). Here a round is added once, by whichever flush takes
it first:

- each process gathers the tables it ended a round at for :data:`DELAY`
  seconds (one thread, so one batch for every round it ended in that time),
  then flushes them itself (the embedded server) or sends the batch to a
  Celery worker (:data:`FLUSH_TASK`, on the production stack, where workers run
  the bots): computing and adding a hundred rounds is a few hundred
  milliseconds of Python, which in a Daphne process would hold the GIL from
  its event loop;
- the sweep (``game.driver.sweeper``) flushes whatever a stopped process left;
- a reader that must be exact flushes before it reads (the staff dashboard,
  ``manage.py rebuild_tallies --check``); a rebuild counts pending rounds
  itself and marks them tallied.

A flush marks its rows ``tallied`` and adds them in one transaction, which
it rolls back if another flush marked one of them first, so a round is never
added twice nor lost: until its flush commits, it is still pending. In tests
the scheduler flushes at once, after the move's commit.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Collection
from typing import Any

from celery import current_app, shared_task
from django.db import close_old_connections, connection, transaction

from game.models import RoundRecordRow
from game.research import round_rows, tallies
from game.sql.connections import drop_broken_connections, features

log = logging.getLogger(__name__)

DELAY = 1.0  # seconds a process gathers round ends before it flushes them
BATCH = 1000  # rounds per transaction
# A live flush goes in small steps with pauses between: a hundred rounds at
# once were a burst of CPU (the cells in Python, the upserts in PostgreSQL)
# that the moves on the same machine queued behind.
LIVE_BATCH, LIVE_PAUSE = 10, 0.05
# On SQLite a step holds the one write lock that the event loop's moves wait
# for, and ten rounds held it 3-7 ms (bench_server's round-end seconds): two
# rounds a step, at the same pace. PostgreSQL's moves take no tally row's lock.
SQLITE_BATCH, SQLITE_PAUSE = 2, 0.01


def live_steps() -> tuple[int, float]:
    """(rounds, pause) of a live flush's steps on this process's database: shorter
    where a transaction's first write takes the one write lock (SQLite, no row
    locks), which the moves wait for."""
    if features().row_locks:
        return LIVE_BATCH, LIVE_PAUSE
    return SQLITE_BATCH, SQLITE_PAUSE


FLUSH_TASK = "game.research.tally_flush.flush_tables"
# The name the task had before game/research/: messages queued under it before
# a deploy still run.
FORMER_FLUSH_TASK = "game.tally_flush.flush_tables"


def flush_pending(
    limit: int = BATCH, tables: Collection[int] | None = None, pause: float = 0.0
) -> int:
    """Add every pending round (of ``tables``, if given) to the tallies, ``limit``
    at a time with ``pause`` seconds between; how many were added here. The
    rounds that ended on a quick move get their record rows first
    (``game.research.round_rows``), in the same steps."""
    round_rows.record_pending(limit, tables, pause)
    added = 0
    wanted = RoundRecordRow.objects.filter(tallied=False)
    if tables is not None:
        wanted = wanted.filter(table_id__in=tables)
    while True:
        found = list(wanted.order_by("pk").values("pk", *tallies.ROUND_COLUMNS)[:limit])
        if not found:
            return added
        if _add(found):
            added += len(found)
            if len(found) < limit:
                return added
        # else another flush took some of them first: read what is left
        time.sleep(pause)


def _add(found: list[dict[str, Any]]) -> bool:
    """Mark ``found`` tallied and add them, in one short transaction; False (and
    nothing done) if another flush marked one of them first. The tallies are
    computed and their statements built before it, so that it holds its locks
    (SQLite's one write lock, which the moves on the event loop wait for) only
    while the statements run."""
    queries = tallies.add_cells_queries(tallies.round_tallies(found), os.getpid())
    taken = [row["pk"] for row in found]
    with transaction.atomic():
        if connection.features.has_select_for_update:
            # Lock in one order: two flushes of crossing batches wait, never deadlock.
            locked = RoundRecordRow.objects.filter(pk__in=taken).order_by("pk").select_for_update()
            list(locked.values_list("pk", flat=True))
        marked = RoundRecordRow.objects.filter(pk__in=taken, tallied=False).update(tallied=True)
        if marked != len(taken):
            transaction.set_rollback(True)
            return False
        tallies.run_queries(queries)
    return True


def pending() -> int:
    """Rounds ended and not yet in the tallies (their rows written or not)."""
    return RoundRecordRow.objects.filter(tallied=False).count() + round_rows.pending_count()


class Flusher:
    """One thread per process: woken by :meth:`soon`, it waits :data:`DELAY`
    for more round ends, then hands the tables they were at to ``deliver``
    (the scheduler's: flush them here, or send them to a Celery worker;
    another process's rounds are left to that process)."""

    def __init__(self, deliver: Callable[[list[int]], None]) -> None:
        self._deliver = deliver
        self._wanted = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._tables: set[int] = set()

    def soon(self, table_id: int) -> None:
        with self._lock:
            self._tables.add(table_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="spades-tally-flush", daemon=True
                )
                self._thread.start()
        self._wanted.set()

    def _run(self) -> None:
        while True:
            self._wanted.wait()
            time.sleep(DELAY)
            self._wanted.clear()
            with self._lock:
                tables, self._tables = self._tables, set()
            try:
                self._deliver(sorted(tables))
            except Exception:  # left pending: the next flush or the sweep adds them
                log.exception("flushing the tallies of tables %s failed", sorted(tables))


def flush_here(tables: list[int]) -> None:
    """A live batch flushed by this process, in its store's steps."""
    try:
        rounds, pause = live_steps()
        flush_pending(rounds, tables, pause)
    finally:
        drop_broken_connections()
        close_old_connections()


def send_to_worker(tables: list[int]) -> None:
    """A live batch sent to a Celery worker (:func:`flush_tables`)."""
    current_app.send_task(FLUSH_TASK, args=[tables], queue="bots")


def _flush_tables(tables: list[int]) -> int:
    """A Celery worker's flush of a server process's batch (:class:`Flusher`)."""
    rounds, pause = live_steps()
    return flush_pending(rounds, tables, pause)


flush_tables = shared_task(name=FLUSH_TASK, ignore_result=True)(_flush_tables)
by_former_name = shared_task(name=FORMER_FLUSH_TASK, ignore_result=True)(_flush_tables)
