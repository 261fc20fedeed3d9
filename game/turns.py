"""Who moves next when it is not a human at the keyboard, and when.

After every commit (``game.moves.after_commit``) and when a match starts
(``game.seating``), :func:`next_turn` decides whether a bot, or a stand-in
for a human whose turn timer runs out, is due, and :func:`schedule` has it
move: in a Celery worker (the ``bots`` queue, by task name) or in this
process's runner (``game.runner``, the embedded default). The bot driver
(``game.bot_turns``) subscribes with :func:`subscribe` when the app starts,
so this module, below it, never imports it.

A scheduled move is idempotent: it names the version it is for, and the
write path refuses it as stale once the table has moved on.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from celery import current_app
from django.conf import settings
from django.utils import timezone

from game import runner
from game.matches import load_match
from game.models import Seat, Table

log = logging.getLogger(__name__)

DEFAULT_BOT_DELAY_SECONDS = 0.6
# A bot that leads the next trick waits this many times its delay more, so the
# players see the finished trick gathered to its winner first (table.js).
TRICK_PAUSE = 1.5
OVERDUE_GRACE_SECONDS = 5.0
ACT_TASK = "game.bot_turns.act"  # the Celery task of game.bot_turns


@dataclass(frozen=True)
class TurnPlan:
    """Have ``seat`` move at ``version`` after ``delay`` seconds (a stand-in if
    ``stand_in``; ``away``: for a player marked away, who may come back first)."""

    table_id: int
    seat: int
    version: int
    delay: float
    stand_in: bool
    away: bool = False


Mover = Callable[[int, int, int, bool, bool], str]
_mover: Mover | None = None


def subscribe(mover: Mover) -> Mover:
    """Register the function that computes and submits a bot's move (in-process runs)."""
    global _mover
    _mover = mover
    return mover


def bot_delay_for(table: Table) -> float:
    """Seconds a bot waits before it moves at ``table`` (pacing for the humans)."""
    if table.bot_delay is not None:
        return max(0.0, table.bot_delay)
    return max(0.0, float(getattr(settings, "SPADES_BOT_DELAY", DEFAULT_BOT_DELAY_SECONDS)))


def next_turn(
    table: Table,
    seats: Mapping[int, Seat],
    to_act: int | None,
    version: int,
    *,
    stand_in_again: bool = False,
    after_trick: bool = False,
) -> TurnPlan | None:
    """The move to schedule for ``to_act`` at ``version``, if a bot or stand-in is due.

    ``stand_in_again``: the last move was a stand-in's for this same seat (it
    looked at its cards, say, and now bids), so it goes on at once. A player
    marked away (their timer ran out before) does not cost the table a whole
    timer again: their stand-in moves at a bot's pace until they come back.
    ``after_trick``: the move before finished a trick, which the bot then leads.
    """
    seat = seats.get(to_act) if to_act is not None else None
    if seat is None or to_act is None:
        return None
    pace = bot_delay_for(table) * (1 + TRICK_PAUSE if after_trick else 1)
    if seat.kind == Seat.Kind.BOT:
        return TurnPlan(table.pk, to_act, version, pace, False)
    if not table.stand_in_bots:
        return None
    if seat.away:
        return TurnPlan(table.pk, to_act, version, pace, True, away=True)
    delay = 0.0 if stand_in_again else float(table.turn_seconds)
    return TurnPlan(table.pk, to_act, version, delay, True)


def schedule(plan: TurnPlan) -> None:
    """Have the plan's move made: by this process's runner, or by a Celery worker.

    On an event loop a send to Celery's broker goes to a thread, never
    blocking the loop.
    """
    if getattr(settings, "SPADES_BOTS_IN_PROCESS", True):
        if _mover is None:
            raise RuntimeError("no bot driver subscribed (game.bot_turns is not loaded)")
        runner.get_runner().submit(
            _mover,
            plan.table_id,
            plan.seat,
            plan.version,
            plan.stand_in,
            plan.away,
            delay=plan.delay,
            timer=plan.stand_in and not plan.away,
        )
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        _send(plan)
        return
    loop.run_in_executor(None, _send, plan).add_done_callback(_log_failure)


def held_at_most() -> float:
    """The longest a Celery worker may hold a move before it is due: half the
    broker's visibility timeout, after which Redis gives the move to another
    worker, taking the first for dead (``spadesite/settings.py``)."""
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", None) or {}
    return float(options.get("visibility_timeout", 3600)) / 2


def _send(plan: TurnPlan) -> None:
    kwargs: dict[str, object] = {"stand_in": plan.stand_in, "away": plan.away}
    countdown = plan.delay
    if countdown > held_at_most():
        # A long wait (a human's turn timer) goes in pieces: the task sends
        # itself on until its due time (game.bot_turns.act).
        kwargs["due"] = time.time() + countdown
        countdown = held_at_most()
    current_app.send_task(
        ACT_TASK,
        args=[plan.table_id, plan.seat, plan.version],
        kwargs=kwargs,
        queue="bots",
        countdown=countdown if countdown > 0 else None,
    )


def _log_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("scheduling a bot move failed", exc_info=future.exception())


# Turn timers restarted by resume_table in this process, so that every
# connecting socket does not add one more.
_resumed: set[tuple[int, int]] = set()
_resumed_lock = threading.Lock()


def resume_table(table: Table | int) -> bool:
    """Schedule the move that is due if it looks lost (e.g. after a restart).

    Bot moves and turn timers wait in memory (or in the Celery broker); after
    a restart of the embedded server a table would wait for ever. Called when
    a socket connects: if a bot's move is overdue by more than a grace period
    it is scheduled again, and a human's turn timer is restarted for the
    time left. A duplicate is harmless: one of the two moves is stale.
    Returns whether something was scheduled.
    """
    pk = table.pk if isinstance(table, Table) else table
    t = Table.objects.filter(pk=pk).first()
    if t is None or t.status != Table.Status.PLAYING or t.turn_started_at is None:
        return False
    match = load_match(t)
    if match.is_over:
        return False
    seats = {s.position: s for s in t.seats.all()}
    plan = next_turn(t, seats, match.round.to_act, t.version)
    if plan is None:
        return False
    waited = (timezone.now() - t.turn_started_at).total_seconds()
    if plan.stand_in:
        key = (plan.table_id, plan.version)
        with _resumed_lock:
            if key in _resumed:
                return False
            _resumed.add(key)
            if len(_resumed) > 4096:
                _resumed.clear()
        delay = max(0.0, plan.delay - waited)
    elif waited < plan.delay + OVERDUE_GRACE_SECONDS:
        return False
    else:
        delay = 0.0
    schedule(TurnPlan(plan.table_id, plan.seat, plan.version, delay, plan.stand_in, plan.away))
    return True
