"""The master's schedulers: who runs what follows a move, and when.

A move's follow-ups are a bot's or stand-in's move after its delay (a
``game.master.TurnPlan``), a searching bot's search within its budget, the
finished rounds' tallies and the periodic sweep for lost moves. Two
schedulers run them, and ``game.builder`` picks one:

- :class:`CeleryScheduler` (the production stack): every move is a Celery
  task on the ``bots`` queue (``game.driver.tasks.act``); a search goes
  to the ``search`` queue with a fallback on ``bots`` (:func:`send_search`); the tallies of a
  batch of rounds go to a worker, their double-dummy analysis to the
  ``replays`` queue (``game.replays.tasks``); Celery beat sweeps.
- :class:`ThreadScheduler` (the embedded default, no Redis): the same work
  on a thread pool of this process (``game.driver.runner``), the analyses
  in a child process (``game.replays.child``: the solver holds the GIL).

Either way a planned move is idempotent: it names the version it is for.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from celery import current_app

from bots import solver_compiled
from game.driver import runner, sweeper, tasks
from game.driver.bot_turns import SEARCHING, Search, submit_reserve
from game.master import TurnPlan
from game.replays import child as replay_child
from game.replays import tasks as replay_tasks
from game.research import tally_flush

log = logging.getLogger(__name__)

# game.driver.bot_turns.take_turn(table_id, seat, version, stand_in, away): the bot driver.
Mover = Callable[[int, int, int, bool, bool], str]
Analyser = Callable[[list[int]], None]  # the stored rounds of these tables analysed


# The longest a Celery worker holds a move before it is due; a longer wait (a
# long turn timer) goes in pieces, each checking that the table still waits.
# Not bound by the broker's visibility timeout: a worker renews the lease of
# every message it holds (spadesite/celery.py), so only a dead worker's go back.
HOLD_AT_MOST_SECONDS = 60.0

# A search stops by its own clock before the deadline; the task's time limit is
# only a net for one that does not. Past the deadline by this much, so that it
# cannot fire during the search's own submit or the scheduling of the next move
# after that commit (on a loaded worker both can run past the deadline).
SEARCH_LIMIT_GRACE_SECONDS = 2.0


class CeleryScheduler:
    """Moves, searches, tally flushes and analyses as Celery tasks; beat sweeps."""

    def __init__(self, analyse: bool = True) -> None:
        self._flusher = tally_flush.Flusher(tally_flush.send_to_worker)
        # the same batching: a round's tables gathered for a second, then one task
        self._analyses = tally_flush.Flusher(replay_tasks.send) if analyse else None

    def turn(self, plan: TurnPlan) -> None:
        """Send the move's task; on an event loop the send goes to a thread,
        never blocking the loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            send_turn(plan)
            return
        loop.run_in_executor(None, send_turn, plan).add_done_callback(_log_failure)

    def search(self, job: Any) -> str:
        return send_search(job)

    def flush_soon(self, table_id: int) -> None:
        self._flusher.soon(table_id)
        if self._analyses is not None:
            self._analyses.soon(table_id)

    def start_sweeping(self) -> None:
        """Nothing to start: Celery beat sweeps (``spadesite/celery.py``)."""


def send_turn(plan: TurnPlan) -> None:
    """The move's task on the ``bots`` queue, due after the plan's delay."""
    kwargs: dict[str, object] = {"stand_in": plan.stand_in, "away": plan.away}
    countdown = plan.delay
    if countdown > HOLD_AT_MOST_SECONDS:
        # A long wait (a human's turn timer) goes in pieces: the task sends
        # itself on until its due time (game.driver.tasks.act).
        kwargs["due"] = time.time() + countdown
        countdown = HOLD_AT_MOST_SECONDS
    current_app.send_task(
        tasks.ACT_TASK,
        args=[plan.table_id, plan.seat, plan.version],
        kwargs=kwargs,
        queue="bots",
        countdown=countdown if countdown > 0 else None,
    )


def send_search(job: Search) -> str:
    """The search on the ``search`` queue, the fallback on ``bots`` just before
    the deadline; if the search cannot be sent, the fallback at once."""
    deadline = job.started + job.budget
    limit = max(0.1, deadline - time.time()) + SEARCH_LIMIT_GRACE_SECONDS
    args = [job.table_id, job.seat, job.version, job.bot_name, job.started, job.budget,
            job.fallback]  # fmt: skip
    kwargs = {"stand_in": job.stand_in, "away": job.away}
    try:
        tasks.search.apply_async(args=args, kwargs=kwargs, queue="search",
                                 soft_time_limit=limit, time_limit=limit + 1.0,
                                 expires=datetime.fromtimestamp(deadline, UTC))  # fmt: skip
    except Exception:
        log.exception("cannot send the search of %s at table %s: the fallback instead",
                      job.bot_name, job.table_id)  # fmt: skip
        return job.submit_fallback()
    eta = datetime.fromtimestamp(deadline - submit_reserve(job.budget), UTC)
    tasks.submit_fallback.apply_async(args=[*args[:3], job.fallback, *args[4:6]], kwargs=kwargs,
                                      queue="bots", eta=eta)  # fmt: skip
    return SEARCHING


def _log_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("scheduling a bot move failed", exc_info=future.exception())


class ThreadScheduler:
    """Moves, searches and tally flushes on this process's threads (the embedded
    default): a human's turn timer is a timer of the runner, which waiting for
    idle ignores."""

    def __init__(
        self, mover: Mover, workers: int = 4, analyse: Analyser | None = replay_child.analyse
    ) -> None:
        self.mover = mover
        self.runner = runner.ThreadRunner(workers)
        self._flusher = tally_flush.Flusher(tally_flush.flush_here)
        # One batch after another, from the gathering thread: by default in a
        # child process (game.replays.child: the solver holds the GIL).
        self._analyses = tally_flush.Flusher(analyse) if analyse is not None else None
        self._sweeping = self._warming = False
        self._lock = threading.Lock()

    def turn(self, plan: TurnPlan) -> None:
        if not self._warming:
            # This process's bots may search: load the compiled kernels now, at
            # its first bot move, not at its first socket (loading them takes
            # seconds of CPU that a server of humans only would stall on).
            self._warming = True
            solver_compiled.warm_up_in_background()
        self.runner.submit(
            self.mover, plan.table_id, plan.seat, plan.version, plan.stand_in, plan.away,
            delay=plan.delay, timer=plan.stand_in and not plan.away,
        )  # fmt: skip

    def search(self, job: Any) -> str:
        return job.run_here()  # type: ignore[no-any-return]

    def flush_soon(self, table_id: int) -> None:
        self._flusher.soon(table_id)
        if self._analyses is not None:
            self._analyses.soon(table_id)

    def start_sweeping(self) -> None:
        """Sweep every ``sweeper.SWEEP_EVERY_SECONDS`` on the runner's scheduler (a
        timer: waiting for idle ignores it); once."""
        with self._lock:
            if self._sweeping:
                return
            self._sweeping = True
        self.runner.submit(self._sweep_and_again, delay=sweeper.SWEEP_EVERY_SECONDS, timer=True)

    def _sweep_and_again(self) -> None:
        try:
            sweeper.sweep()
            sweeper.sweep_others()
        finally:
            self.runner.submit(self._sweep_and_again, delay=sweeper.SWEEP_EVERY_SECONDS, timer=True)

    def shutdown(self) -> None:
        self.runner.shutdown()
