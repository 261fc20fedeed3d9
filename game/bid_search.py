"""A simulating bidder's (SIM's) bid at a live table: within the bot time budget,
BIS's bid as the fallback.

The same shape as a searching player's move (``game.bot_turns``, whose
``play_turn`` hands SIM's bids here with the table's budget): BIS's bid is
computed first, then

- in-process (the thread runner, the inline runner of tests): SIM simulates
  in the same call for what is left of the budget, less the submit's reserve;
  an error plays BIS's bid;
- with Celery: the simulation goes to the ``search`` queue as
  ``game.bid_search.search`` (time limits from the budget, expiring at the
  deadline) and ``game.bid_search.submit_fallback`` is scheduled on the
  ``bots`` queue for just before the deadline; both submit with the same
  expected version, so the first to land is the bid and the other is stale.

Every such bid logs one line "search bid: ... source ... elapsed ... bid ...
deals ..." (source search or fallback; elapsed from the start of the move to
the committed submit; deals simulated), which the stack test reads.
"""

from __future__ import annotations

import logging
import random
import time
from datetime import UTC, datetime
from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError

from bots.registry import make_bot
from bots.sim import SIM
from game.engine import view_for
from game.engine.actions import Bid
from game.engine.view import SeatView
from game.errors import NotPlaying, StaleVersion, TableNotFound
from game.matches import load_match
from game.models import Table
from game.moves import submit_action

log = logging.getLogger(__name__)

# The same reports as game.bot_turns.play_turn's.
MOVED, STALE, SEARCHING, FALLBACK = "moved", "stale", "searching", "fallback"
DB_LOST = (OperationalError, InterfaceError)


def simulating_bidder(bot: Any, view: SeatView) -> SIM | None:
    """The bot's bidder if it simulates for this bid (SIM with k_s > 0), else None."""
    bidder = getattr(bot, "bidder", None)
    return bidder if isinstance(bidder, SIM) and bidder.needs_search(view) else None


def _submit_bid(table_id: int, seat: int, version: int, tricks: int, stand_in: bool) -> bool:
    try:
        submit_action(table_id, seat, Bid(seat, tricks), version, by_stand_in=stand_in)
    except (StaleVersion, NotPlaying, TableNotFound):
        return False
    return True


def _log_bid(table_id: int, seat: int, version: int, source: str, started: float,
             budget: float, tricks: int, deals: int) -> None:  # fmt: skip
    log.info(
        "search bid: table %s version %s seat %s source %s elapsed %.3f budget %.3f "
        "bid %s deals %s",
        table_id, version, seat, source, time.time() - started, budget, tricks, deals,
    )  # fmt: skip


def play_searched_bid(
    table_id: int, seat: int, version: int, stand_in: bool, bot_name: str, view: SeatView,
    rng: random.Random, bidder: SIM, budget: float, reserve: float,
) -> str:  # fmt: skip
    """SIM's bid within ``budget`` seconds (``reserve`` of them kept for the submit)."""
    started = time.time()
    deadline = started + budget
    fallback = bidder.fallback(view, rng).tricks
    if getattr(settings, "SPADES_BOTS_IN_PROCESS", True):
        source, tricks, deals = "search", fallback, 0
        try:
            result = bidder.search(view, rng, budget=max(0.0, deadline - reserve - time.time()))
            tricks, deals = result.bid, result.deals
        except Exception:
            log.exception("the simulation of %s failed at table %s: BIS's bid instead",
                          bot_name, table_id)  # fmt: skip
            source = "fallback"
        if not _submit_bid(table_id, seat, version, tricks, stand_in):
            return STALE
        _log_bid(table_id, seat, version, source, started, budget, tricks, deals)
        return MOVED if source == "search" else FALLBACK
    limit = max(0.1, deadline - time.time())
    args = [table_id, seat, version, bot_name, started, budget, reserve, fallback]
    try:
        search.apply_async(
            args=[*args, rng.random()], kwargs={"stand_in": stand_in}, queue="search",
            soft_time_limit=limit, time_limit=limit + 1.0,
            expires=datetime.fromtimestamp(deadline, UTC),
        )  # fmt: skip
    except Exception:
        log.exception("cannot send the simulation of %s at table %s: BIS's bid instead",
                      bot_name, table_id)  # fmt: skip
        return fallback_bid(table_id, seat, version, fallback, started, budget, stand_in)
    submit_fallback.apply_async(
        args=[table_id, seat, version, fallback, started, budget], kwargs={"stand_in": stand_in},
        queue="bots", eta=datetime.fromtimestamp(deadline - reserve, UTC),
    )  # fmt: skip
    return SEARCHING


def run_search(
    table_id: int, seat: int, version: int, bot_name: str, started: float, budget: float,
    reserve: float, fallback: int, seed: float, stand_in: bool = False,
) -> str:  # fmt: skip
    """The search task's body: simulate until shortly before the deadline and
    submit; on any failure (or no time left) submit BIS's bid at once."""
    deadline = started + budget
    table = Table.objects.filter(pk=table_id).first()
    if table is None or table.status != Table.Status.PLAYING or table.version != version:
        return STALE
    source, tricks, deals = "search", fallback, 0
    try:
        # Stop early enough that the submit lands before the fallback is sent.
        if deadline - 2 * reserve - time.time() <= 0:
            raise TimeoutError("the simulation started too late")
        view = view_for(load_match(table, version), seat)
        bidder = simulating_bidder(make_bot(bot_name), view)
        if bidder is None:
            raise ValueError(f"{bot_name} does not simulate this bid")
        left = max(0.0, deadline - 2 * reserve - time.time())
        result = bidder.search(view, random.Random(seed), budget=left)
        tricks, deals = result.bid, result.deals
    except (Exception, SoftTimeLimitExceeded) as e:
        log.warning("the simulation of %s at table %s version %s failed (%r): BIS's bid instead",
                    bot_name, table_id, version, e)  # fmt: skip
        source = "fallback"
    if not _submit_bid(table_id, seat, version, tricks, stand_in):
        return STALE
    _log_bid(table_id, seat, version, source, started, budget, tricks, deals)
    return MOVED if source == "search" else FALLBACK


def fallback_bid(table_id: int, seat: int, version: int, fallback: int, started: float,
                 budget: float, stand_in: bool = False) -> str:  # fmt: skip
    """The fallback task's body: BIS's bid unless the simulation already bid."""
    if not _submit_bid(table_id, seat, version, fallback, stand_in):
        return STALE
    _log_bid(table_id, seat, version, "fallback", started, budget, fallback, 0)
    return FALLBACK


@shared_task(name="game.bid_search.search", ignore_result=True)
def search(table_id: int, seat: int, version: int, bot_name: str, started: float, budget: float,
           reserve: float, fallback: int, seed: float, stand_in: bool = False) -> str:  # fmt: skip
    return run_search(table_id, seat, version, bot_name, started, budget, reserve, fallback,
                      seed, stand_in)  # fmt: skip


@shared_task(name="game.bid_search.submit_fallback", acks_late=True, ignore_result=True,
             autoretry_for=DB_LOST, retry_kwargs={"max_retries": 5, "countdown": 0.3})  # fmt: skip
def submit_fallback(table_id: int, seat: int, version: int, fallback: int, started: float,
                    budget: float, stand_in: bool = False) -> str:  # fmt: skip
    return fallback_bid(table_id, seat, version, fallback, started, budget, stand_in)
