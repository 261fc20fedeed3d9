"""The bot driver: a bot's (or stand-in's) move computed and submitted, as Celery tasks.

``act(table_id, seat, version)`` is idempotent: it moves only if the table
is still at ``version`` and ``seat`` is a bot (or a stand-in's human), and
submits with ``expected_version=version``, so a task that runs twice, or
late, is dropped as stale (one started too often: ``game.redelivery``).
``game.turns`` schedules it by task name, or with ``SPADES_BOTS_IN_PROCESS``
(the embedded default) runs :func:`play_turn` in ``game.runner``'s thread
pool. The bots (``bots/``) see only the seat's view, never the database.

A searching player (UCT) in its search phase must move within the bot time
budget (:func:`bot_budget`, default 1 s, counted from the moment the move is
computed, after the pacing delay): ``play_turn`` first computes SRP's move as
the fallback, then

- in-process (the thread runner, or the inline runner of tests): searches
  in the same call for what is left of the budget, less a submit's time; an
  error in the search plays the fallback;
- with Celery: sends the search as ``game.bot_turns.search`` to the ``search``
  queue (time limits from the budget, expiring at the deadline) and schedules
  ``game.bot_turns.submit_fallback`` on the ``bots`` queue for just before
  the deadline. Both submit with the same ``expected_version``: the first is
  the move, the other stale. A search that fails, times out or starts too
  late submits the fallback at once. A simulating bidder (SIM) bids the same
  way, in ``game.bid_search``, with BIS's bid as the fallback.

Every searched move logs one line "search move ... source ... elapsed ..."
(``source`` search or fallback; elapsed from the start of the move to the
committed submit), which the stack test reads to check the budget.
"""

from __future__ import annotations

import logging
import os
import random
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import InterfaceError, OperationalError

from bots import solver_compiled
from bots.registry import DEFAULT_BOT, make_bot
from bots.uct import UCT
from game import bid_search, redelivery, redis_clients, sweeper, turns
from game.engine import view_for
from game.engine.actions import Bid, Play
from game.engine.state import Phase
from game.engine.view import SeatView
from game.errors import IllegalMove, NotPlaying, StaleVersion, TableNotFound
from game.matches import load_match
from game.models import Seat, Table
from game.moves import submit_action

log = logging.getLogger(__name__)

# What play_turn reports (the task's return value, for logs and tests).
MOVED = "moved"
STALE = "stale"
NOT_DUE = "not_due"
SEARCHING = "searching"  # the search went to the search queue; a fallback is scheduled
FALLBACK = "fallback"  # the fallback move was submitted
WAITING = "waiting"  # a long wait sent on in one more piece
DROPPED = "dropped"  # a move that kept failing, left for a while (game.redelivery)

SWEEP_TASK = "game.bot_turns.sweep_overdue"
DEFAULT_BOT_BUDGET = 1.0  # seconds for a searching bot's move at a live table


def bot_budget(table: Any = None) -> float:
    """A searching bot's time budget per move at ``table``, in seconds: the
    table's ``bot_budget`` if it has one, else ``SPADES_BOT_BUDGET`` (setting or
    environment), else 1 s."""
    value = getattr(table, "bot_budget", None)
    if value is None:
        value = getattr(settings, "SPADES_BOT_BUDGET", None)
    if value is None:
        value = os.environ.get("SPADES_BOT_BUDGET") or DEFAULT_BOT_BUDGET
    return max(0.05, float(value))


def submit_reserve(budget: float) -> float:
    """Seconds kept back for a submit (a database transaction) to land in time."""
    return min(0.2, max(0.08, 0.15 * budget))


def bot_rng(seed: str, version: int, seat: int) -> random.Random:
    """The bot's random source for one move: reproducible from the table's seed."""
    return random.Random(f"{seed}/bot/{version}/{seat}")


def stand_in_view(view: SeatView) -> SeatView:
    """What a stand-in sees while bidding for a human: the same seat with nil
    and blind nil off, so that it bids its regular estimate. A nil costs 100
    when set, and nobody should come back to one they never chose."""
    if view.phase is not Phase.BIDDING:
        return view
    legal = tuple(a for a in view.legal_actions if not (isinstance(a, Bid) and a.tricks == 0))
    if view.to_act == view.seat and not any(isinstance(a, Bid) for a in legal):
        return view  # partner bid 13: nil is the only bid left
    return replace(view, rules=replace(view.rules, nil=False, blind_nil=False), legal_actions=legal)


@turns.subscribe
def play_turn(
    table_id: int,
    seat: int,
    version: int,
    stand_in: bool = False,
    away: bool = False,
    plain: bool = False,
) -> str:
    """Compute and submit the move of a bot (or a stand-in) at ``version``; ``away``: a
    stand-in for a player marked away, unless back; ``plain``: game.redelivery's bot."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None or table.status != Table.Status.PLAYING or table.version != version:
        return STALE
    seat_row = Seat.objects.filter(table=table, position=seat).first()
    if seat_row is None:
        return NOT_DUE
    if stand_in:
        if seat_row.kind != Seat.Kind.HUMAN or not table.stand_in_bots:
            return NOT_DUE
        if away and not seat_row.away:
            return NOT_DUE  # back in time: their own turn timer runs instead
        bot_name = getattr(settings, "SPADES_STAND_IN_BOT", DEFAULT_BOT)
    else:
        if seat_row.kind != Seat.Kind.BOT:
            return NOT_DUE
        bot_name = seat_row.bot_name or DEFAULT_BOT
    match = load_match(table, version)
    if match.is_over or match.round.to_act != seat:
        return NOT_DUE
    view = view_for(match, seat)
    if stand_in:
        view = stand_in_view(view)
    rng = bot_rng(table.seed, version, seat)
    bot_name = redelivery.PLAIN_BOT if plain else bot_name  # neither simulates nor searches
    bot = make_bot(bot_name)
    bidder = bid_search.simulating_bidder(bot, view)
    if bidder is not None:  # SIM simulates its bid within the budget (game/bid_search.py)
        budget = bot_budget(table)
        where = (table_id, seat, version, stand_in, bot_name, view, rng)
        return bid_search.play_searched_bid(*where, bidder, budget, submit_reserve(budget))
    searcher = _searcher(bot)
    if searcher is not None and searcher.needs_search(view):
        return _play_searched_turn(
            table_id, seat, version, stand_in, bot_name, view, rng, searcher, bot_budget(table)
        )
    action = bot.act(view, rng)
    try:
        submit_action(table_id, seat, action, version, by_stand_in=stand_in, while_away=away)
    except (StaleVersion, NotPlaying, TableNotFound):
        return STALE
    except IllegalMove as e:
        # A bot bug must not stall the table: log it and play a legal move instead.
        log.error("bot %s made an illegal move %r at table %s: %s", bot_name, action, table_id, e)
        fallback = rng.choice(view.legal_actions)
        try:
            submit_action(table_id, seat, fallback, version, by_stand_in=stand_in, while_away=away)
        except (StaleVersion, NotPlaying):
            return STALE
    return MOVED


def _searcher(bot: Any) -> Any:
    """The bot's player if it searches under a time budget (UCT), else None."""
    return bot.player if isinstance(bot.player, UCT) else None


def _kernels_ready() -> bool:
    """Whether this process's compiled search kernels are loaded. Until they are
    the caller plays SRP's card: compiling them takes seconds, loading them from
    numba's cache most of one, and no budget allows that. Processes start
    loading them at once (spadesite/celery.py, game/runner.py); this starts it
    in a process that did not."""
    if solver_compiled.ready():
        return True
    solver_compiled.warm_up_in_background()
    return False


def _submit_card(table_id: int, seat: int, version: int, card: int, stand_in: bool) -> bool:
    """Submit playing ``card``; False if the table moved on (stale)."""
    try:
        submit_action(table_id, seat, Play(seat, card), version, by_stand_in=stand_in)
    except (StaleVersion, NotPlaying, TableNotFound):
        return False
    return True


def _log_move(
    table_id: int, seat: int, version: int, source: str, started: float, budget: float
) -> None:
    log.info(
        "search move: table %s version %s seat %s source %s elapsed %.3f budget %.3f",
        table_id, version, seat, source, time.time() - started, budget,
    )  # fmt: skip


def _play_searched_turn(
    table_id: int,
    seat: int,
    version: int,
    stand_in: bool,
    bot_name: str,
    view: Any,
    rng: random.Random,
    searcher: Any,
    budget: float,
) -> str:
    started = time.time()
    deadline = started + budget
    reserve = submit_reserve(budget)
    fallback = searcher.srp.play(view, random.Random(f"{rng.random()}/fallback"))
    if getattr(settings, "SPADES_BOTS_IN_PROCESS", True):
        source = "search"
        try:
            if _kernels_ready():
                card = searcher.play_within(view, rng, max(0.0, deadline - reserve - time.time()))
            else:
                card, source = fallback, "fallback"
        except Exception:
            log.exception("the search of %s failed at table %s: SRP's move instead",
                          bot_name, table_id)  # fmt: skip
            card, source = fallback, "fallback"
        if not _submit_card(table_id, seat, version, card, stand_in):
            return STALE
        _log_move(table_id, seat, version, source, started, budget)
        return MOVED if source == "search" else FALLBACK
    # Celery: the search on its queue; the fallback lands just before the deadline.
    limit = max(0.1, deadline - time.time())
    try:
        search.apply_async(
            args=[table_id, seat, version, bot_name, started, budget, fallback],
            kwargs={"stand_in": stand_in},
            queue="search",
            soft_time_limit=limit,
            time_limit=limit + 1.0,
            expires=datetime.fromtimestamp(deadline, UTC),
        )
    except Exception:
        log.exception("cannot send the search of %s at table %s: SRP's move instead",
                      bot_name, table_id)  # fmt: skip
        return fallback_turn(table_id, seat, version, fallback, started, budget, stand_in)
    submit_fallback.apply_async(
        args=[table_id, seat, version, fallback, started, budget],
        kwargs={"stand_in": stand_in},
        queue="bots",
        eta=datetime.fromtimestamp(deadline - reserve, UTC),
    )
    return SEARCHING


def run_search(
    table_id: int,
    seat: int,
    version: int,
    bot_name: str,
    started: float,
    budget: float,
    fallback: int,
    stand_in: bool = False,
) -> str:
    """The search task's body: search until shortly before the deadline and
    submit; on any failure (or no time left) submit the fallback at once."""
    deadline = started + budget
    reserve = submit_reserve(budget)
    table = Table.objects.filter(pk=table_id).first()
    if table is None or table.status != Table.Status.PLAYING or table.version != version:
        return STALE
    source = "search"
    try:
        # Stop early enough that the submit lands before the fallback is sent.
        left = deadline - 2 * reserve - time.time()
        if left <= 0:
            raise TimeoutError("the search started too late")
        match = load_match(table, version)
        view = view_for(match, seat)
        searcher = _searcher(make_bot(bot_name))
        if searcher is None:
            raise ValueError(f"{bot_name} does not search")
        if not _kernels_ready():
            raise TimeoutError("the search kernels are still loading")
        rng = bot_rng(table.seed, version, seat)
        card = searcher.play_within(view, rng, max(0.0, deadline - 2 * reserve - time.time()))
    except (Exception, SoftTimeLimitExceeded) as e:  # SoftTimeLimitExceeded: the limit
        log.warning("the search of %s at table %s version %s failed (%r): SRP's move instead",
                    bot_name, table_id, version, e)  # fmt: skip
        card, source = fallback, "fallback"
    if not _submit_card(table_id, seat, version, card, stand_in):
        return STALE
    _log_move(table_id, seat, version, source, started, budget)
    return MOVED if source == "search" else FALLBACK


def fallback_turn(
    table_id: int,
    seat: int,
    version: int,
    fallback: int,
    started: float,
    budget: float,
    stand_in: bool = False,
) -> str:
    """The fallback task's body: submit SRP's move unless the search already moved."""
    if not _submit_card(table_id, seat, version, fallback, stand_in):
        return STALE
    _log_move(table_id, seat, version, "fallback", started, budget)
    return FALLBACK


# A move that lost its database connection (a restart, a terminated backend)
# is tried again: it is made at its version or refused as stale, never twice.
DB_LOST = (OperationalError, InterfaceError)
DB_RETRY = {"max_retries": 5, "countdown": 0.3}


@shared_task(
    name=turns.ACT_TASK,
    acks_late=True,
    ignore_result=True,
    autoretry_for=DB_LOST,
    retry_kwargs=DB_RETRY,
)
def act(
    table_id: int,
    seat: int,
    version: int,
    stand_in: bool = False,
    away: bool = False,
    due: float | None = None,
) -> str:
    left = (due or 0.0) - time.time()
    if left > 0.05:
        # One piece of a long wait (game.turns._send): on to the next, unless
        # the table has moved on.
        playing = Table.objects.filter(pk=table_id, version=version, status=Table.Status.PLAYING)
        if not playing.exists():
            return STALE
        turns.schedule(turns.TurnPlan(table_id, seat, version, left, stand_in, away))
        return WAITING
    verdict = redelivery.verdict(table_id, seat, version)
    if verdict == redelivery.DROP:
        return DROPPED
    return play_turn(table_id, seat, version, stand_in, away, verdict == redelivery.PLAIN)


@shared_task(name="game.bot_turns.search", ignore_result=True)
def search(
    table_id: int,
    seat: int,
    version: int,
    bot_name: str,
    started: float,
    budget: float,
    fallback: int,
    stand_in: bool = False,
) -> str:
    return run_search(table_id, seat, version, bot_name, started, budget, fallback, stand_in)


@shared_task(
    name="game.bot_turns.submit_fallback",
    acks_late=True,
    ignore_result=True,
    autoretry_for=DB_LOST,
    retry_kwargs=DB_RETRY,
)
def submit_fallback(
    table_id: int,
    seat: int,
    version: int,
    fallback: int,
    started: float,
    budget: float,
    stand_in: bool = False,
) -> str:
    return fallback_turn(table_id, seat, version, fallback, started, budget, stand_in)


# After a broker outage every worker reconnects and asks for the whole sweep:
# one of them makes it (a Redis key held this long), the others skip.
RESWEEP_KEY, RESWEEP_HOLD_SECONDS = "spades:sweep-every-table", 10


@shared_task(name=SWEEP_TASK, ignore_result=True)
def sweep_overdue(every: bool = False) -> int:
    """Celery beat's periodic sweep (``game.sweeper``): lost moves scheduled
    again; ``every``: after a broker outage, every table's next automatic move."""
    if every and not redis_clients.sync_client().set(
        RESWEEP_KEY, 1, nx=True, ex=RESWEEP_HOLD_SECONDS
    ):
        return 0
    return len(sweeper.sweep(every=every))
