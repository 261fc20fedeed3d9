"""Tables that wait for a move nobody will make: found and given their move again.

A bot's move (or a stand-in's after a human's timer) is a task: in the
Celery broker, or in the embedded runner's memory. A worker killed while it
held one, a broker restarted, a server process stopped: the task is gone
and the table would wait for ever. The sweep looks at every playing table
whose turn began long ago; if a bot or stand-in is due there and overdue by
more than :data:`OVERDUE_AFTER_SECONDS`, its move is scheduled again. That
is safe to repeat: the move is made at the table's version or refused as
stale, so two copies never make two moves.

It runs every :data:`SWEEP_EVERY_SECONDS`: from Celery beat on the
production stack (``game.driver.tasks.sweep_overdue``), from the embedded
server's scheduler once a table socket has opened there
(``game.driver.scheduling``; a socket opening also resumes its own table,
:func:`resume_table`), or
by ``manage.py sweep_overdue_turns`` from cron. A Celery worker that connects
to the broker again after losing it asks for one sweep of every table at once
(``spadesite/celery.py``), since the broker may have come back empty.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from django.utils import timezone

from game import master
from game.models import Table
from game.moves.matches import load_match
from game.research import tally_flush

log = logging.getLogger(__name__)

SWEEP_EVERY_SECONDS = 15.0
STARTED_AT = timezone.now()  # this process's start (the module's import, in practice)
# Past its due time by this much, a move is taken as lost. Well above a
# searching bot's budget and a loaded worker's queue, so that the sweep
# seldom duplicates a move that is merely slow (a duplicate is refused as
# stale: it costs a computation, never a second move).
OVERDUE_AFTER_SECONDS = 15.0
# A socket that opens on a table schedules the bot's move that is due again,
# this long after its latest due time.
RESUME_GRACE_SECONDS = 0.5


def turn_waited(turn_started_at: datetime, plan: master.TurnPlan, now: datetime) -> float:
    """How long the turn has waited, in seconds. A human's own timer (a
    stand-in due, not yet away) counts only this process's life: after a
    restart of the server the player gets their turn again rather than a
    stand-in at once, since they could not play while it was down."""
    since = turn_started_at
    if plan.stand_in and not plan.away:
        since = max(since, STARTED_AT)
    return max(0.0, (now - since).total_seconds())


def overdue_plans(now: datetime | None = None, *, every: bool = False) -> list[master.TurnPlan]:
    """The due moves of playing tables that look lost, to be made at once.

    With ``every``: every playing table's next bot or stand-in move, each at
    its own time (what is left of its delay). That is for a broker that came
    back empty (a Redis restart loses the queued moves): nothing is overdue
    yet, but every queued move is gone."""
    now = now or timezone.now()
    plans = []
    waiting = Table.objects.filter(status=Table.Status.PLAYING).prefetch_related("seats")
    if not every:
        waiting = waiting.filter(turn_started_at__lt=now - timedelta(seconds=OVERDUE_AFTER_SECONDS))
    for table in waiting:
        match = load_match(table)
        if match.is_over:
            continue
        seats = {s.position: s for s in table.seats.all()}
        plan = master.next_turn(table, seats, match.round.to_act, table.version)
        if plan is None:
            continue  # a human's own turn with no stand-in: theirs to take
        assert table.turn_started_at is not None
        waited = turn_waited(table.turn_started_at, plan, now)
        # The latest a move made in time comes: its delay (a bot's pace or a
        # human's timer), plus the pause after a finished trick.
        due = plan.delay + master.bot_delay_for(table) * master.TRICK_PAUSE
        if every:
            left = max(0.0, plan.delay - waited)
            plans.append(
                master.TurnPlan(table.pk, plan.seat, plan.version, left, plan.stand_in, plan.away)
            )
        elif waited > due + OVERDUE_AFTER_SECONDS:
            plans.append(
                master.TurnPlan(table.pk, plan.seat, plan.version, 0.0, plan.stand_in, plan.away)
            )
    return plans


def sweep(now: datetime | None = None, *, every: bool = False) -> list[int]:
    """Schedule every lost move again (with ``every``: every table's next
    automatic move, see :func:`overdue_plans`); the tables it did that for.
    Rounds a stopped process left out of the tallies are added too."""
    try:
        tally_flush.flush_pending()
    except Exception:
        log.exception("sweep: flushing the tallies failed")
    swept = []
    for plan in overdue_plans(now, every=every):
        if not master.get().schedule(plan):
            continue
        if not every:
            log.warning(
                "sweep: table %s waited too long for seat %s at version %s: move scheduled again",
                plan.table_id, plan.seat, plan.version,
            )  # fmt: skip
        swept.append(plan.table_id)
    return swept


# Other apps' sweeps (a study's participants whose page went quiet:
# studies.sweep), registered at start-up: the embedded server's loop runs them
# after the tables' own; on the production stack Celery beat runs them as
# tasks of their own. The game layer does not import those apps.
_others: list[Callable[[], object]] = []


def also_sweep(fn: Callable[[], object]) -> None:
    if fn not in _others:
        _others.append(fn)


def sweep_others() -> None:
    for fn in _others:
        try:
            fn()
        except Exception:
            log.exception("sweep: %s failed", getattr(fn, "__qualname__", fn))


# Turns resumed by resume_table in this process, so that every connecting
# socket does not add one more.
_resumed: set[tuple[int, int]] = set()
_resumed_lock = threading.Lock()


def resume_table(table: Table | int) -> bool:
    """Schedule again the move that is due, in case it was lost.

    Bot moves and turn timers wait in memory (or in the Celery broker); a
    process that dies between committing a move and sending the next one (a
    Daphne killed, the embedded server restarted) loses it, and the table
    would wait for the sweep. Called when a socket connects, as the player
    whose move that was comes back: a bot's move is scheduled again for its
    latest due time plus :data:`RESUME_GRACE_SECONDS` (at once if that has
    passed), and a human's turn timer is restarted for the time left. Once
    per turn and process; a duplicate is harmless: one of the two moves is
    stale. Returns whether something was scheduled.
    """
    pk = table.pk if isinstance(table, Table) else table
    t = Table.objects.filter(pk=pk).first()
    if t is None or t.status != Table.Status.PLAYING or t.turn_started_at is None:
        return False
    match = load_match(t)
    if match.is_over:
        return False
    seats = {s.position: s for s in t.seats.all()}
    plan = master.next_turn(t, seats, match.round.to_act, t.version)
    if plan is None:
        return False
    key = (plan.table_id, plan.version)
    with _resumed_lock:
        if key in _resumed:
            return False
        _resumed.add(key)
        if len(_resumed) > 4096:
            _resumed.clear()
    waited = turn_waited(t.turn_started_at, plan, timezone.now())
    if plan.stand_in:
        delay = max(0.0, plan.delay - waited)
    else:
        # Late enough that the first copy, if it lives, has moved: this one is stale.
        due = plan.delay + master.bot_delay_for(t) * master.TRICK_PAUSE
        delay = max(0.0, due + RESUME_GRACE_SECONDS - waited)
    resumed = master.TurnPlan(
        plan.table_id, plan.seat, plan.version, delay, plan.stand_in, plan.away
    )
    return master.get().schedule(resumed)
