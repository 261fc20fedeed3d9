"""Moves on Django's connection: any database, and every caller off the event
loop (Celery workers, the bot threads, views); on the loop through
``game.moves.db.db_call``."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from game.master import Committed, Move
from game.moves import db, move
from game.moves.move import Outcome
from game.research import tally_flush
from game.sql.statements import run_steps


class DjangoStore:
    """Moves on Django's connection: the quick move's two statements, or the
    full path, in one ``transaction.atomic``; ``committed`` on its commit
    (the outermost one, should the caller hold a transaction)."""

    @property
    def flush_steps(self) -> tuple[int, float]:
        """(rounds, pause) of a live tally flush's steps (``game.research.tally_flush``)."""
        return tally_flush.LIVE_BATCH, tally_flush.LIVE_PAUSE

    def move(self, submitted: Move, committed: Committed, wait: bool = True) -> Outcome:
        with transaction.atomic():
            now = timezone.now()
            m, outcome = submitted, None
            if m.may_be_quick:
                outcome = run_steps(
                    move.quick_move_steps(m.table_id, m.seat, m.action, m.version, now, m.think)
                )
            if outcome is None:
                outcome = run_steps(move.move_steps(
                    m.table_id, m.seat, m.action, m.version, m.by_stand_in, now, m.while_away,
                    m.think,
                ))  # fmt: skip
            transaction.on_commit(lambda: committed(outcome))
        return outcome

    async def move_on_loop(self, submitted: Move, committed: Committed) -> Outcome:
        return await db.db_call(self.move)(submitted, committed)  # type: ignore[no-any-return]

    def warm_up(self) -> None:
        """Nothing to open ahead: Django opens its connections when asked."""
