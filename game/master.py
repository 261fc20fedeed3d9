"""The table master: the one write path of every table, with what it writes to handed in.

Every move of a table, whoever makes it (a player's socket, the bot driver,
a stand-in), goes through :meth:`TableMaster.submit` (sync callers: Celery
workers, the bot threads, views) or :meth:`TableMaster.submit_on_loop` (the
websockets, on the server's event loop). The master owns the move: it tries
the quick move where it may (:func:`quick_move`), has the **store** save it
(a compare-and-swap), falls back to the full path (``game.moves.move``'s
statements in one transaction) when the quick move cannot be or was not
saved, and once the store says it committed, never before,
:meth:`TableMaster.after_commit` remembers the state, has the **announcer**
broadcast it and the **scheduler** run what follows (the round's tallies, the
bot or stand-in that is due: :func:`after_move`, :func:`next_turn`). Every
other change of a live table (seating, starting, handing over, coming back,
closing) goes through :meth:`TableMaster.change`: one transaction, then the
same announcer and scheduler after its commit.

The three are chosen once, from the settings, by ``game.builder`` (the only
code that reads the run-time switches: the bots' pace is handed in through
``game.switches``) and installed when the app starts (``game.apps``): a process
has one master. Their protocols live below both, in ``game.moves.port``. The
model is boardgame.io's master (one ``onUpdate`` owning the algorithm,
storage and transport handed in) and lichess's round (one owner of a game,
a pure progress step, then one save).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any, Generic, TypeVar

from django.db import transaction
from django.utils import timezone

from game import observe, switches
from game.engine import Action as EngineAction
from game.models import Seat, Table
from game.moves import matches, move
from game.moves.move import Outcome, Quick, SubmitResult, parse_submission
from game.moves.port import Announcer, Move, Scheduler, Store, TurnPlan
from game.moves.rows import Think
from game.sql.statements import Steps

log = logging.getLogger(__name__)
T = TypeVar("T")


# ----- who moves next, when it is not a human at the keyboard -------------------------------

# A bot that leads the next trick waits this many times its delay more, so the
# players see the finished trick gathered to its winner first (table.js).
TRICK_PAUSE = 1.5


def bot_delay_for(table: Table) -> float:
    """Seconds a bot waits before it moves at ``table`` (pacing for the humans)."""
    if table.bot_delay is not None:
        return max(0.0, table.bot_delay)
    return max(0.0, switches.current.bot_delay)


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


def after_move(outcome: Outcome) -> TurnPlan | None:
    """The move to schedule after a committed move, if a bot or stand-in is due."""
    r = outcome.result
    if r.to_act is None:
        return None
    now = outcome.match.round
    return next_turn(
        outcome.table,
        outcome.seats,
        r.to_act,
        r.version,
        stand_in_again=r.by_stand_in and r.seat == r.to_act,
        after_trick=bool(now.tricks) and not now.trick and not now.is_over,
    )


def quick_move(m: Move, now: datetime) -> Quick | None:
    """The quick move, stepped, if it may be tried: a table whose rows this
    process's moves left, at a version whose state it holds; not a stand-in's
    move (it marks a seat away), nor one the step would refuse or that ends
    the match. None: the full path."""
    if m.by_stand_in or m.while_away:
        return None
    found = move.known(m.table_id, m.version)
    if found is None:
        return None
    rows_known, match = found
    outcome = move.quick_step(match, rows_known, m.seat, m.action, False, now)
    return None if outcome is None else Quick(outcome, rows_known.table, m.version, now, m.think)


def full_steps(m: Move, now: datetime) -> Steps[Outcome]:
    """The full path's statements: lock and read, step, save."""
    return move.move_steps(
        m.table_id, m.seat, m.action, m.version, m.by_stand_in, now, m.while_away, m.think
    )


@dataclass(frozen=True)
class Changed(Generic[T]):
    """What a change of a table that is not a move leaves to do after its
    commit: the tables whose sockets are told, and the bot or stand-in move due."""

    value: T
    tables: Collection[int] = ()
    turn: TurnPlan | None = None


@dataclass
class TableMaster:
    store: Store
    announcer: Announcer
    scheduler: Scheduler

    @observe.timed_move
    def submit(
        self,
        table_id: int,
        seat: int,
        action: EngineAction | dict[str, Any],
        version: int,
        *,
        by_stand_in: bool = False,
        while_away: bool = False,
    ) -> SubmitResult:
        """Apply ``action`` for ``seat`` if the table is still at ``version``.

        Raises a :class:`~game.errors.ServiceError` (``StaleVersion``,
        ``IllegalMove``, ``BadAction``, ``NotPlaying``, ``TableNotFound``) and
        changes nothing when the action cannot be taken.
        """
        m = Move(table_id, seat, parse_submission(seat, action, version), version,
                 by_stand_in, while_away)  # fmt: skip
        now = timezone.now()
        quick = quick_move(m, now)
        if quick is not None and self.store.save_quick(quick, self.after_commit):
            return quick.outcome.result
        return self.store.run_full(partial(full_steps, m, now), self.after_commit).result

    @observe.timed_move
    async def submit_on_loop(
        self,
        table_id: int,
        seat: int,
        action: EngineAction | dict[str, Any],
        version: int,
        *,
        by_stand_in: bool = False,
        while_away: bool = False,
        think: Think | None = None,
    ) -> SubmitResult:
        """:meth:`submit` on the server's event loop (a player's socket, with the
        player's decision time)."""
        m = Move(table_id, seat, parse_submission(seat, action, version), version,
                 by_stand_in, while_away, think)  # fmt: skip
        now = timezone.now()
        quick = quick_move(m, now)
        if quick is not None and await self.store.save_quick_on_loop(quick, self.after_commit):
            return quick.outcome.result
        full = partial(full_steps, m, now)
        return (await self.store.run_full_on_loop(full, self.after_commit)).result

    def after_commit(self, outcome: Outcome) -> None:
        """What follows a committed move, whichever store made it: remember the
        state, announce the version, have the round tallied and the bot or
        stand-in that is due scheduled. Each part is attempted even if one
        before it fails."""
        r, table = outcome.result, outcome.table
        info = matches.table_info(table, outcome.seats)
        matches.remember(table.pk, matches.Committed(outcome.match, info))
        matches.remember_rows(table.pk, matches.Rows(table, outcome.seats))
        try:
            self.announcer.announce(table.pk, r.version, r.action, info)
        except Exception:
            log.exception("the group message of table %s failed", table.pk)
        if outcome.round_row is not None or outcome.pending_round is not None:
            try:
                self.scheduler.flush_soon(table.pk)
            except Exception:  # the round stays pending: the sweep adds it
                log.exception("adding the round of table %s to the tallies failed", table.pk)
        self.schedule(after_move(outcome))

    def change(self, write: Callable[[], Changed[T]]) -> T:
        """A change of live tables that is not a move (seats, a start, a
        hand-over, a return, closing): ``write`` in one transaction (the
        caller's, if it holds one); after its commit, never before, the
        announcer tells the tables' sockets and the scheduler has the move
        that is due made. A refusal raised by ``write`` rolls it back."""
        with transaction.atomic():
            done = write()
            transaction.on_commit(partial(self.after_change, done), robust=True)
        return done.value

    def after_change(self, done: Changed[Any]) -> None:
        for table_id in done.tables:
            try:
                self.announcer.changed(table_id)
            except Exception:
                log.exception("telling table %s of its change failed", table_id)
        self.schedule(done.turn)

    def schedule(self, plan: TurnPlan | None) -> bool:
        """Have the plan's bot or stand-in move made after its delay (after a
        commit; the sweeper's and a resumed table's plans); whether it was
        scheduled. A failure is logged: the sweep tries again."""
        if plan is None:
            return False
        try:
            self.scheduler.turn(plan)
        except Exception:
            log.exception("scheduling a bot move at table %s failed", plan.table_id)
            return False
        return True

    def search(self, job: Any) -> str:
        """A searching bot's move within its budget (``game.driver.bot_turns.Search``),
        run where the scheduler runs searches: here, or on the queues."""
        return self.scheduler.search(job)

    def start_sweeping(self) -> None:
        """Sweep for lost moves periodically, if nothing else does (a socket's
        first connection in the embedded server)."""
        self.scheduler.start_sweeping()


# ----- the process's master ---------------------------------------------------------------

_factory: Callable[[], TableMaster] | None = None
_master: TableMaster | None = None
_lock = threading.Lock()


def configure(factory: Callable[[], TableMaster]) -> None:
    """Set how this process builds its master (``game.apps``, at start-up)."""
    global _factory
    with _lock:
        _factory = factory
    reset()


def get() -> TableMaster:
    """This process's master, built on first use."""
    global _master
    found = _master
    if found is not None:
        return found
    with _lock:
        if _master is None:
            if _factory is None:
                raise RuntimeError("the table master is not configured (game.apps not ready)")
            _master = _factory()
        return _master


def reset() -> TableMaster | None:
    """Forget the built master (the settings it was built from changed); the old one."""
    global _master
    with _lock:
        old, _master = _master, None
    return old


def submit(
    table_id: int,
    seat: int,
    action: EngineAction | dict[str, Any],
    version: int,
    *,
    by_stand_in: bool = False,
    while_away: bool = False,
) -> SubmitResult:
    """:meth:`TableMaster.submit` on this process's master."""
    return get().submit(
        table_id, seat, action, version, by_stand_in=by_stand_in, while_away=while_away
    )
