"""The table master: the one write path of every table, with what it writes to handed in.

Every move of a table, whoever makes it (a player's socket, the bot driver,
a stand-in, a seat command), goes through :meth:`TableMaster.submit` (sync
callers: Celery workers, the bot threads, views) or
:meth:`TableMaster.submit_on_loop` (the websockets, on the server's event
loop). Both hand the move to the **store**, which runs the move's statements
(``game.moves.move``) in one transaction on its database and calls
:meth:`TableMaster.after_commit` once the move is committed, never before;
``after_commit`` remembers the state, has the **announcer** broadcast it and
the **scheduler** run what follows (the round's tallies, the bot or
stand-in that is due: :func:`after_move`, :func:`next_turn`).

The three are chosen once, from the settings, by ``game.builder`` (the only
code that reads the run-time switches: the bots' pace is handed in through
``game.switches``) and installed when the app starts (``game.apps``): a process
has one master. The model is boardgame.io's master (one ``onUpdate``,
storage and transport handed in) and lichess's round (one owner of a game,
a pure progress step, then one save).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from game import observe, switches
from game.engine import Action as EngineAction
from game.models import Seat, Table
from game.moves import matches
from game.moves.move import Outcome, SubmitResult, parse_submission
from game.moves.rows import Think

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Move:
    """One submitted move: ``action`` for ``seat`` if the table is still at ``version``."""

    table_id: int
    seat: int
    action: EngineAction
    version: int
    by_stand_in: bool = False
    while_away: bool = False
    think: Think | None = None  # a player's decision time (the consumer measures it)

    @property
    def may_be_quick(self) -> bool:
        """A stand-in's move changes a seat (away): it takes the full path."""
        return not (self.by_stand_in or self.while_away)


Committed = Callable[[Outcome], None]


class Store(Protocol):
    """Where moves are written: one class per database (``game.moves.stores``)."""

    def move(self, submitted: Move, committed: Committed, wait: bool = True) -> Outcome:
        """The move in one transaction; ``committed(outcome)`` once it commits.
        Not ``wait``: a store that would wait for a write lock may refuse at once
        (``game.moves.stores.WriteLockBusy``), having written nothing."""
        ...

    async def move_on_loop(self, submitted: Move, committed: Committed) -> Outcome:
        """:meth:`move` from the server's event loop, never blocking it for long."""
        ...

    def warm_up(self) -> None:
        """On the server's event loop, at its first socket: open what moves need."""
        ...

    @property
    def flush_steps(self) -> tuple[int, float]:
        """(rounds, pause) of a live tally flush's steps on this database."""
        ...


class Announcer(Protocol):
    """Who tells a table's sockets what changed (the channel layer, ``game.sockets.events``)."""

    def announce(self, table_id: int, version: int, action: dict[str, Any],
                 info: dict[str, Any]) -> None: ...  # fmt: skip


class Scheduler(Protocol):
    """Who runs what follows a move, and when (``game.driver.scheduling``)."""

    def turn(self, plan: TurnPlan) -> None:
        """Have the plan's bot or stand-in move made, after its delay."""
        ...

    def search(self, job: Any) -> str:
        """A searching bot's move within its budget (``game.driver.bot_turns.Search``)."""
        ...

    def flush_soon(self, table_id: int) -> None:
        """Have the table's finished rounds added to the tallies soon."""
        ...

    def start_sweeping(self) -> None:
        """Sweep for lost moves periodically, if nothing else does."""
        ...


# ----- who moves next, when it is not a human at the keyboard -------------------------------

# A bot that leads the next trick waits this many times its delay more, so the
# players see the finished trick gathered to its winner first (table.js).
TRICK_PAUSE = 1.5


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
        parsed = parse_submission(seat, action, version)
        submitted = Move(table_id, seat, parsed, version, by_stand_in, while_away)
        return self.store.move(submitted, self.after_commit).result

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
        parsed = parse_submission(seat, action, version)
        submitted = Move(table_id, seat, parsed, version, by_stand_in, while_away, think)
        return (await self.store.move_on_loop(submitted, self.after_commit)).result

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
        plan = after_move(outcome)
        if plan is not None:
            try:
                self.scheduler.turn(plan)
            except Exception:
                log.exception("scheduling a bot move at table %s failed", table.pk)


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
