"""The bot driver: every bot's (or stand-in's) move computed and submitted.

:func:`take_turn` is the one entry, whoever runs it: the Celery task
``game.driver.tasks.act`` on the production stack, the master's thread
scheduler in the embedded default. It counts the move's start
(``game.driver.redelivery``: a move started too often is made by the plain
bot, then dropped for a while), then :func:`play_turn` moves only if the
table is still at ``version`` and ``seat`` is a bot (or a stand-in's human),
and submits through the master with ``expected_version=version``, so a move
that runs twice, or late, is dropped as stale. The bots (``bots/``) see only
the seat's view, never the database.

A bot that searches for this decision (UCT in its search phase, SIM's bid)
moves within the bot time budget (:func:`bot_budget`, from the moment the
move is computed). :class:`Search` computes its fallback first (SRP's card,
BIS's bid); the master's scheduler then runs the search in the same call
(:meth:`Search.run_here`) or sends it to the ``search`` queue with the
fallback on ``bots`` just before the deadline
(``game.driver.scheduling.send_search``): both submit at the same version,
the first is the move, the other stale. A search that fails, times out or
starts too late submits the fallback at once. Every searched decision logs
one line "search move: ..." or "search bid: ..." with its source and elapsed
time, which the stack tests read. No Celery here: the tasks that run this
on a worker are ``game.driver.tasks``.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, replace
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded

from bots import solver_compiled
from bots.registry import DEFAULT_BOT, make_bot
from bots.sim import SIM
from bots.uct import UCT
from game import master, switches
from game.driver import external, redelivery
from game.engine import Action, action_from_dict, action_to_dict, view_for
from game.engine.actions import Bid, Play
from game.engine.state import Phase
from game.engine.view import SeatView
from game.errors import IllegalMove, NotPlaying, StaleVersion, TableNotFound
from game.external_bots import EXTERNAL_PREFIX
from game.models import Seat, Table
from game.moves.matches import load_match

log = logging.getLogger(__name__)

# What a turn reports (the task's return value, for logs and tests).
MOVED, STALE, NOT_DUE = "moved", "stale", "not_due"
SEARCHING = "searching"  # the search went to the search queue; a fallback is scheduled
FALLBACK = "fallback"  # the fallback move was submitted
WAITING = "waiting"  # a long wait sent on in one more piece
DROPPED = "dropped"  # a move that kept failing, left for a while (redelivery)


def bot_budget(table: Any = None) -> float:
    """A searching bot's time budget per move at ``table``, in seconds: the
    table's ``bot_budget`` if it has one, else the one the builder read
    (``game.switches``: ``SPADES_BOT_BUDGET``, setting or environment, else 1 s)."""
    value = getattr(table, "bot_budget", None)
    if value is None:
        value = switches.current.bot_budget
    return max(0.05, float(value))


def submit_reserve(budget: float) -> float:
    """Seconds kept back for a submit (a database transaction) to land in time."""
    return min(0.2, max(0.08, 0.15 * budget))


def bot_rng(seed: str, version: int, seat: int) -> random.Random:
    """The bot's random source for one move: reproducible from the table's seed."""
    return random.Random(f"{seed}/bot/{version}/{seat}")


def fallback_rng(seed: str, version: int, seat: int) -> random.Random:
    """The random source of a searching bot's fallback, apart from its search's."""
    return random.Random(f"{seed}/bot/{version}/{seat}/fallback")


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


def searcher(bot: Any, view: SeatView) -> SIM | UCT | None:
    """The bot's part that searches for this decision (SIM's bid, UCT's card), or None."""
    bidder, player = getattr(bot, "bidder", None), getattr(bot, "player", None)
    if isinstance(bidder, SIM) and bidder.needs_search(view):
        return bidder
    if isinstance(player, UCT) and player.needs_search(view):
        return player
    return None


def _submit(table_id: int, seat: int, version: int, action: Action, stand_in: bool,
            away: bool) -> bool:  # fmt: skip
    """Submit through the master; False if the table moved on (stale)."""
    try:
        master.submit(table_id, seat, action, version, by_stand_in=stand_in, while_away=away)
    except (StaleVersion, NotPlaying, TableNotFound):
        return False
    return True


def take_turn(
    table_id: int, seat: int, version: int, stand_in: bool = False, away: bool = False
) -> str:
    """A planned move, its start counted first (``redelivery``); the scheduler's mover."""
    verdict = redelivery.verdict(table_id, seat, version)
    if verdict == redelivery.DROP:
        return DROPPED
    return play_turn(table_id, seat, version, stand_in, away, verdict == redelivery.PLAIN)


def play_turn(
    table_id: int,
    seat: int,
    version: int,
    stand_in: bool = False,
    away: bool = False,
    plain: bool = False,
) -> str:
    """Compute and submit the move of a bot (or a stand-in) at ``version``; ``away``: a
    stand-in for a player marked away, unless back; ``plain``: redelivery's plain bot."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None or table.status != Table.Status.PLAYING or table.version != version:
        return STALE
    seat_row = Seat.objects.filter(table=table, position=seat).first()
    if seat_row is None:
        return NOT_DUE
    # An external bot moves itself (game.driver.external): its clock only, then its stand-in.
    outside = seat_row.kind == Seat.Kind.BOT and seat_row.bot_name.startswith(EXTERNAL_PREFIX)
    if outside and not (stand_in or plain):
        return external.await_bot(table, seat, version)
    if stand_in:
        if not (outside or (seat_row.kind == Seat.Kind.HUMAN and table.stand_in_bots)):
            return NOT_DUE
        if away and not seat_row.away:
            return NOT_DUE  # back in time: their own turn timer runs instead
        bot_name = switches.current.stand_in_bot
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
    bot_name = redelivery.PLAIN_BOT if plain else bot_name  # neither simulates nor searches
    bot = make_bot(bot_name)
    found = searcher(bot, view)
    if found is not None:
        fallback = _fallback(found, view, fallback_rng(table.seed, version, seat))
        job = Search(table_id, seat, version, bot_name, time.time(), bot_budget(table),
                     action_to_dict(fallback), stand_in, away)  # fmt: skip
        return master.get().search(job)
    rng = bot_rng(table.seed, version, seat)
    action = bot.act(view, rng)
    try:
        moved = _submit(table_id, seat, version, action, stand_in, away)
    except IllegalMove as e:
        # A bot bug must not stall the table: log it and play a legal move instead.
        log.error("bot %s made an illegal move %r at table %s: %s", bot_name, action, table_id, e)
        moved = _submit(table_id, seat, version, rng.choice(view.legal_actions), stand_in, away)
    return MOVED if moved else STALE


def _fallback(found: SIM | UCT, view: SeatView, rng: random.Random) -> Action:
    """The move when the budget runs out: BIS's bid, SRP's card."""
    if isinstance(found, SIM):
        return found.fallback(view, rng)
    assert view.seat is not None
    return Play(view.seat, found.srp.play(view, rng))


def _searched(found: SIM | UCT, view: SeatView, rng: random.Random,
              seconds: float) -> tuple[Action, int | None]:  # fmt: skip
    """The searcher's decision within ``seconds``; (action, deals simulated or None)."""
    assert view.seat is not None
    if isinstance(found, SIM):
        result = found.search(view, rng, budget=seconds)
        return Bid(view.seat, result.bid), result.deals
    if not _kernels_ready():
        raise TimeoutError("the search kernels are still loading")
    return Play(view.seat, found.play_within(view, rng, seconds)), None


def _kernels_ready() -> bool:
    """Whether this process's compiled search kernels are loaded. Until they are
    the fallback plays: compiling them takes seconds, loading them from numba's
    cache most of one, and no budget allows that. Processes start loading them
    at once (spadesite/celery.py, game/driver/scheduling.py); this starts it in a
    process that did not."""
    if solver_compiled.ready():
        return True
    solver_compiled.warm_up_in_background()
    return False


@dataclass(frozen=True)
class Search:
    """A searching bot's decision at ``version``, its fallback already computed:
    the master's scheduler runs it here or sends it to the queues."""

    table_id: int
    seat: int
    version: int
    bot_name: str
    started: float  # time.time() when the move began
    budget: float
    fallback: dict[str, Any]  # the fallback action, as stored
    stand_in: bool = False
    away: bool = False

    def run_here(self) -> str:
        """Search in this call for what is left of the budget, less a submit's time."""
        return self.search_and_submit(reserves=1)

    def search_and_submit(self, reserves: int = 2) -> str:
        """Search until ``reserves`` submit times before the deadline (two on the
        search queue: its submit must land before the fallback is sent), then
        submit; on any failure (or no time left) submit the fallback at once."""
        deadline = self.started + self.budget
        stop = deadline - reserves * submit_reserve(self.budget)
        action, source, deals = action_from_dict(self.fallback), "fallback", None
        try:
            table = Table.objects.filter(pk=self.table_id).first()
            playing = table is not None and table.status == Table.Status.PLAYING
            if not playing or table.version != self.version:
                return STALE
            if stop - time.time() <= 0:
                raise TimeoutError("the search started too late")
            view = view_for(load_match(table, self.version), self.seat)
            found = searcher(make_bot(self.bot_name), view)
            if found is None:
                raise ValueError(f"{self.bot_name} does not search here")
            rng = bot_rng(table.seed, self.version, self.seat)
            action, deals = _searched(found, view, rng, max(0.0, stop - time.time()))
            source = "search"
        except (Exception, SoftTimeLimitExceeded) as e:  # SoftTimeLimitExceeded: the limit
            log.warning("the search of %s at table %s version %s failed (%r): the fallback",
                        self.bot_name, self.table_id, self.version, e)  # fmt: skip
        return self._submit_logged(action, source, deals)

    def submit_fallback(self) -> str:
        """The fallback, unless the search already moved."""
        return self._submit_logged(action_from_dict(self.fallback), "fallback", None)

    def _submit_logged(self, action: Action, source: str, deals: int | None) -> str:
        if not _submit(self.table_id, self.seat, self.version, action, self.stand_in, self.away):
            return STALE
        kind = "bid" if isinstance(action, Bid) else "move"
        log.info(
            "search %s: table %s version %s seat %s source %s elapsed %.3f budget %.3f%s",
            kind, self.table_id, self.version, self.seat, source, time.time() - self.started,
            self.budget, f" bid {action.tricks} deals {deals or 0}" if kind == "bid" else "",
        )  # fmt: skip
        return MOVED if source == "search" else FALLBACK
