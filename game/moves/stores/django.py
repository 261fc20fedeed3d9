"""Moves on Django's connection: any database, and every caller off the event
loop (Celery workers, the bot threads, views); on the loop through
``game.moves.db.db_call``."""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from game.moves import db, move
from game.moves.move import Outcome, Quick
from game.moves.port import OnCommit
from game.sql.statements import Steps, run_steps


class DjangoStore:
    """Storage on Django's connection: each save in one ``transaction.atomic``,
    ``committed`` on its commit (the outermost one, should the caller hold a
    transaction)."""

    def save_quick(self, quick: Quick, committed: OnCommit, wait: bool = True) -> bool:
        with transaction.atomic():
            done = run_steps(move.quick_save_steps(quick))
            if done is not None:
                transaction.on_commit(lambda: committed(done))
        return done is not None

    def run_full(self, steps: Callable[[], Steps[Outcome]], committed: OnCommit) -> Outcome:
        with transaction.atomic():
            outcome = run_steps(steps())
            transaction.on_commit(lambda: committed(outcome))
        return outcome

    async def save_quick_on_loop(self, quick: Quick, committed: OnCommit) -> bool:
        return await db.db_call(self.save_quick)(quick, committed)  # type: ignore[no-any-return]

    async def run_full_on_loop(
        self, steps: Callable[[], Steps[Outcome]], committed: OnCommit
    ) -> Outcome:
        return await db.db_call(self.run_full)(steps, committed)  # type: ignore[no-any-return]

    def warm_up(self) -> None:
        """Nothing to open ahead: Django opens its connections when asked."""
