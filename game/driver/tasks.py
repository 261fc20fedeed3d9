"""The bot driver's Celery tasks: what a worker of the production stack runs.

A bot's or stand-in's move (:func:`act`, on the ``bots`` queue), a searching
bot's search (:func:`search`, on ``search``) and its fallback
(:func:`submit_fallback`, on ``bots``), and Celery beat's sweep for lost
moves (:func:`sweep_overdue`). Each only unpacks its message and calls the
driver (``game.driver.bot_turns``) or the sweeper; the schedulers send them
by name (``game.driver.scheduling``), the queues by name too
(``spadesite/celery.py``).

The tasks are named after this module. Before it they were named after
``game/bot_turns.py``, a module that moved: a message queued under a former
name (before a deploy) still runs, the same function under that name.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from celery import shared_task
from django.db import InterfaceError, OperationalError

from game import master, redis_clients
from game.driver import bot_turns, sweeper
from game.driver.bot_turns import STALE, WAITING, Search
from game.master import TurnPlan
from game.models import Table

ACT_TASK = f"{__name__}.act"  # a bot's or stand-in's move
SEARCH_TASK = f"{__name__}.search"
FALLBACK_TASK = f"{__name__}.submit_fallback"
SWEEP_TASK = f"{__name__}.sweep_overdue"
# The names from before game/driver/, served for the messages queued under them.
FORMER_NAMES = {
    ACT_TASK: "game.bot_turns.act",
    SEARCH_TASK: "game.bot_turns.search",
    FALLBACK_TASK: "game.bot_turns.submit_fallback",
    SWEEP_TASK: "game.bot_turns.sweep_overdue",
}

# A move that lost its database connection (a restart, a terminated backend)
# is tried again: it is made at its version or refused as stale, never twice.
DB_LOST = (OperationalError, InterfaceError)
DB_RETRY = {"max_retries": 5, "countdown": 0.3}
MOVE_OPTIONS: dict[str, Any] = {
    "acks_late": True, "ignore_result": True, "autoretry_for": DB_LOST, "retry_kwargs": DB_RETRY,
}  # fmt: skip


def _act(table_id: int, seat: int, version: int, stand_in: bool = False, away: bool = False,
         due: float | None = None) -> str:  # fmt: skip
    left = (due or 0.0) - time.time()
    if left > 0.05:
        # One piece of a long wait (game.driver.scheduling.send_turn): on to the
        # next through the master's scheduler, unless the table has moved on.
        playing = Table.objects.filter(pk=table_id, version=version, status=Table.Status.PLAYING)
        if not playing.exists():
            return STALE
        master.get().schedule(TurnPlan(table_id, seat, version, left, stand_in, away))
        return WAITING
    return bot_turns.take_turn(table_id, seat, version, stand_in, away)


def _search(table_id: int, seat: int, version: int, bot_name: str, started: float,
            budget: float, fallback: dict[str, Any], stand_in: bool = False,
            away: bool = False) -> str:  # fmt: skip
    job = Search(table_id, seat, version, bot_name, started, budget, fallback, stand_in, away)
    return job.search_and_submit()


def _submit_fallback(table_id: int, seat: int, version: int, fallback: dict[str, Any],
                     started: float, budget: float, stand_in: bool = False,
                     away: bool = False) -> str:  # fmt: skip
    job = Search(table_id, seat, version, "", started, budget, fallback, stand_in, away)
    return job.submit_fallback()


# After a broker outage every worker reconnects and asks for the whole sweep:
# one of them makes it (a Redis key held this long), the others skip.
RESWEEP_KEY, RESWEEP_HOLD_SECONDS = "spades:sweep-every-table", 10


def _sweep_overdue(every: bool = False) -> int:
    """Celery beat's periodic sweep (``game.driver.sweeper``): lost moves scheduled
    again; ``every``: after a broker outage, every table's next automatic move."""
    if every and not redis_clients.sync_client().set(
        RESWEEP_KEY, 1, nx=True, ex=RESWEEP_HOLD_SECONDS
    ):
        return 0
    return len(sweeper.sweep(every=every))


def _task(name: str, run: Callable[..., Any], **options: Any) -> Any:
    """The task ``run`` under ``name``, and under its former name for queued messages."""
    shared_task(name=FORMER_NAMES[name], **options)(run)
    return shared_task(name=name, **options)(run)


act = _task(ACT_TASK, _act, **MOVE_OPTIONS)
search = _task(SEARCH_TASK, _search, ignore_result=True)
submit_fallback = _task(FALLBACK_TASK, _submit_fallback, **MOVE_OPTIONS)
sweep_overdue = _task(SWEEP_TASK, _sweep_overdue, ignore_result=True)
