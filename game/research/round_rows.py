"""The record rows of rounds that ended on a quick move, written after the move.

A round's last card made as the quick move (``game.moves.move``) stores only a
:class:`~game.models.PendingRound`: the version of that card and who sat
where. Building the round's record (``record_of``) and its 60 columns, and
reading its stand-in moves from the log, was most of a round end's cost on
the server's event loop, where every table of a tournament started together
ends its round in the same second. :func:`record_pending` builds the rows
from the log (the match at that version: this process's cache, or the log
replayed) and, in one short transaction per batch, deletes the pending
rounds and inserts their rows, not yet tallied. A pending round another
writer took first is left to it, so a round gets one row.

It runs as the first part of every tally flush (``game.research.tally_flush``): one
second after the round ended, on the embedded server's flush thread or a
Celery worker of the production stack; at the sweep, after a process that
stopped first; and before a reader that must be exact (the dashboard, the
exports, ``rebuild_tallies``). A move that takes the full path (a stand-in's
card, a match's end) still writes its round's row itself.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection

from django.db import connection, transaction

from game.models import Action, PendingRound, RoundRecordRow, Table
from game.moves.matches import load_match
from game.moves.move import finished_round_row

log = logging.getLogger(__name__)

BATCH = 1000  # pending rounds per transaction


def record_pending(
    limit: int = BATCH, tables: Collection[int] | None = None, pause: float = 0.0
) -> int:
    """Write the record rows of the pending rounds (of ``tables``, if given),
    ``limit`` at a time with ``pause`` seconds between; how many were written here."""
    wanted = PendingRound.objects.order_by("pk")
    if tables is not None:
        wanted = wanted.filter(table_id__in=tables)
    written = 0
    failed: set[int] = set()  # left pending (logged): the others must not wait behind them
    while True:
        pending = list(wanted.exclude(pk__in=failed)[:limit])
        if not pending:
            return written
        written += _write(pending, failed)
        if len(pending) < limit:
            return written
        time.sleep(pause)


def pending_count() -> int:
    return PendingRound.objects.count()


def _write(pending: list[PendingRound], failed: set[int]) -> int:
    """The rows of ``pending``, built first and written in one transaction that
    also deletes them; those another writer deleted first are left out, and
    those that could not be built are added to ``failed``."""
    built = _rows(pending, failed)
    with transaction.atomic():
        taken = PendingRound.objects.filter(pk__in=list(built)).order_by("pk")
        if connection.features.has_select_for_update:
            # A writer that took some first has deleted them when this lock is granted.
            taken = taken.select_for_update()
        still = list(taken.values_list("pk", flat=True))
        if not still:
            return 0
        PendingRound.objects.filter(pk__in=still).delete()
        RoundRecordRow.objects.bulk_create([built[pk] for pk in still])
    return len(still)


def _rows(pending: list[PendingRound], failed: set[int]) -> dict[int, RoundRecordRow]:
    """The record rows of ``pending`` by pending round: two reads for the whole
    batch (the tables, their stand-in moves), then each round from its match.
    A round whose log does not replay is logged and left pending, in ``failed``."""
    ids = {p.table_id for p in pending}
    tables = Table.objects.in_bulk(ids)
    stand_ins: dict[int, list[tuple[int, int, str]]] = {pk: [] for pk in ids}
    logged = Action.objects.filter(table_id__in=ids, by_stand_in=True)
    for pk, n, seat, action in logged.values_list("table_id", "round_number", "seat", "action"):
        stand_ins[pk].append((n, seat, action.get("type", "")))
    built = {}
    for p in pending:
        try:
            built[p.pk] = _row(p, tables[p.table_id], stand_ins[p.table_id])
        except Exception:
            log.exception("the row of round %s of table %s failed", p.round_number, p.table_id)
            failed.add(p.pk)
    return built


def _row(p: PendingRound, table: Table, stand_ins: list[tuple[int, int, str]]) -> RoundRecordRow:
    finished = load_match(table, p.version).rounds[p.round_number - 1]
    return finished_round_row(
        table, finished, stand_ins, None, p.version, p.seat_kinds, p.bot_names, p.finished_at
    )
