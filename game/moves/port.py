"""The table master's port: what it is handed, and what it hands a store.

The master (``game.master``) owns the move: whether the quick move may be
tried, the fallback to the full path, what follows the commit. It is built
with three things, each an implementation of a protocol here: a
:class:`Store` (storage: a quick move's compare-and-swap save, the full
path's one transaction; ``game.moves.stores``), an :class:`Announcer` (the
channel layer, ``game.sockets.events``) and a :class:`Scheduler` (what
follows a move, ``game.driver.scheduling``). These types sit below the master
and the stores both, so that neither imports the other.

Only types live here, no code a move runs (``tests/game/test_files_a_move_crosses.py``
counts the files a move's functions are in).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from game.engine import Action as EngineAction
from game.moves.move import Outcome, Quick
from game.moves.rows import Think
from game.sql.statements import Steps


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


# What a store calls once a move is committed, never before, never twice.
OnCommit = Callable[[Outcome], None]


class Store(Protocol):
    """Storage for moves, one class per database (``game.moves.stores``): the
    master decides which statements run; a store runs them in a transaction
    and says when it committed."""

    def save_quick(self, quick: Quick, committed: OnCommit, wait: bool = True) -> bool:
        """The quick move's compare-and-swap save: True, and ``committed`` once
        it commits; False, having written nothing, when the table moved on or its
        seats changed. Not ``wait``: a store that would wait for a write lock may
        refuse at once (``game.moves.stores.WriteLockBusy``)."""
        ...

    def run_full(self, steps: Callable[[], Steps[Outcome]], committed: OnCommit) -> Outcome:
        """The full path's statements (``steps()``) in one transaction, then
        ``committed``; a ``ServiceError`` rolls it back."""
        ...

    async def save_quick_on_loop(self, quick: Quick, committed: OnCommit) -> bool:
        """:meth:`save_quick` from the server's event loop, never blocking it
        for long; once started, it runs to its end."""
        ...

    async def run_full_on_loop(
        self, steps: Callable[[], Steps[Outcome]], committed: OnCommit
    ) -> Outcome:
        """:meth:`run_full` from the server's event loop."""
        ...

    def warm_up(self) -> None:
        """On the server's event loop, at its first socket: open what moves need."""
        ...


class Announcer(Protocol):
    """Who tells a table's sockets what changed (the channel layer, ``game.sockets.events``)."""

    def announce(self, table_id: int, version: int, action: dict[str, Any],
                 info: dict[str, Any]) -> None: ...  # fmt: skip

    def changed(self, table_id: int) -> None:
        """The table's seats or status changed (not by a move): its sockets read it again."""
        ...


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
