"""Rounds analysed off the move path, once each, and the analysis stored.

A round's end already has the scheduler flush its tallies a second later
(``game.master.TableMaster.after_commit`` ▸ ``flush_soon``); the schedulers
gather the same tables for the analysis (``game.driver.scheduling``): on the
production stack a Celery task on the :data:`QUEUE` queue (its own workers,
so a 13-card solve never delays a bot's move), in the embedded default a
child process (``game.replays.child``, which runs :func:`analyse_here`).
Either way the task writes the tables' pending round rows first (as a tally
flush does; a round gets one row whoever writes it), then analyses each
stored round of those tables that has no analysis yet. ``manage.py
analyse_rounds`` does the same for old rounds.

Never twice: an analysis is keyed by its round (two workers on one round:
the second's insert fails and is dropped), and a round whose record cannot
be analysed keeps its error in its row. The transaction that stores an
analysis adds it to the dashboard's tallies (``tallies.add_analysis``), so a
stored analysis is counted once. The alternatives (every legal card's
value at every card) follow in a second pass and a second write; a pass
past its budget (``analysis.ALTERNATIVES_BUDGET_SECONDS`` of CPU) stores
``{"error": "not analysed within the budget ..."}`` instead, which the
replay page states, and is not tried again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from celery import current_app, shared_task
from django.db import close_old_connections, transaction
from django.db.models import Q, QuerySet

from game.models import RoundRecordRow
from game.research import round_rows, tallies

from .analysis import FORMAT, AnalysisError, OverBudget, seat_losses
from .models import RoundAnalysis
from .rounds import all_alternatives, analyse_round

log = logging.getLogger(__name__)

ANALYSE_TASK = "game.replays.analyse_tables"
ROUNDS_TASK = "game.replays.analyse_rounds"  # analyse_rounds --celery (game.replays.spread)
QUEUE = "replays"


def unanalysed() -> QuerySet[RoundRecordRow]:
    """Stored rounds with no analysis, oldest first."""
    return RoundRecordRow.objects.filter(analysis__isnull=True).order_by("pk")


def to_analyse(with_alternatives: bool = True) -> QuerySet[RoundRecordRow]:
    """Stored rounds with no analysis, or (``with_alternatives``) an analysis
    whose second write never came; oldest first."""
    if not with_alternatives:
        return unanalysed()
    half = Q(analysis__alternatives__isnull=True, analysis__error="",
             analysis__result__isnull=False)  # fmt: skip
    return RoundRecordRow.objects.filter(Q(analysis__isnull=True) | half).order_by("pk")


def analyse_row(row: RoundRecordRow, with_alternatives: bool = True) -> bool:
    """Analyse one stored round and store it; False if another writer stored it first."""
    started = time.perf_counter()
    try:
        result, error = analyse_round(row.record), ""
    except AnalysisError as e:
        result, error = None, str(e)[:200]
        log.warning("round %s cannot be analysed: %s", row.pk, error)
    seconds = time.perf_counter() - started
    losses = None if result is None else seat_losses(result)
    fields = {"format": FORMAT, "seconds": seconds, "result": result, "error": error,
              "losses": losses}  # fmt: skip
    with transaction.atomic():
        # the primary key is the round's: a second writer's insert fails and is dropped
        _, made = RoundAnalysis.objects.get_or_create(round=row, defaults=fields)
        if made:
            tallies.add_analysis(row, losses)
    if result is not None and with_alternatives:
        add_alternatives(row)
    return made


def add_alternatives(row: RoundRecordRow) -> bool:
    """The second pass and write, if the round's analysis lacks it (its writer
    may have died between the two writes)."""
    stored = RoundAnalysis.objects.filter(round=row, alternatives__isnull=True, error="")
    if not stored.exists():  # not if another writer got here first and finished
        return False
    try:
        alternatives: Any = all_alternatives(row.record)
    except OverBudget as e:
        # kept as the mark (the page states it), so the round is not tried again
        alternatives = {"error": str(e)}
        log.warning("round %s: alternatives %s", row.pk, e)
    return bool(stored.update(alternatives=alternatives))


def analyse_rows(
    rows: Iterable[RoundRecordRow],
    progress: Callable[[int], None] | None = None,
    with_alternatives: bool = True,
) -> int:
    """Analyse each of ``rows`` that has no analysis when its turn comes (or,
    ``with_alternatives``, add the alternatives it lacks); how many here."""
    done = 0
    for i, row in enumerate(rows, 1):
        if not RoundAnalysis.objects.filter(round_id=row.pk).exists():
            done += analyse_row(row, with_alternatives)
        elif with_alternatives:
            done += add_alternatives(row)
        if progress:
            progress(i)
    return done


def analyse_tables(tables: list[int]) -> int:
    """The stored rounds of ``tables`` without an analysis, analysed."""
    round_rows.record_pending(tables=tables)
    return analyse_rows(unanalysed().filter(table_id__in=tables).iterator())


def analyse_here(tables: list[int]) -> None:
    """The embedded default: the analysis on the caller's thread (the scheduler's
    own, never a move's)."""
    try:
        analyse_tables(tables)
    except Exception:
        log.exception("analysing the rounds of tables %s failed", tables)
    finally:
        close_old_connections()


def send(tables: list[int]) -> None:
    """The production stack: a task on the replays queue."""
    current_app.send_task(ANALYSE_TASK, args=[tables], queue=QUEUE)


@shared_task(name=ANALYSE_TASK, ignore_result=True)
def analyse_tables_task(tables: list[int]) -> int:
    return analyse_tables(tables)


@shared_task(name=ROUNDS_TASK, ignore_result=True)
def analyse_rounds_task(rounds: list[int], with_alternatives: bool = True) -> int:
    """Those of ``rounds`` that have no analysis when their turn comes, analysed."""
    rows = to_analyse(with_alternatives).filter(pk__in=rounds)
    return analyse_rows(rows.iterator(), None, with_alternatives)
