"""An external bot's turn (``game.external_bots``): it moves itself, or the stand-in does.

The bot learns of its turn from the table's group message, as a player's
page does (the ``botapi`` socket), and submits through the master. The
driver only keeps its clock: the stand-in is scheduled for the end of the
table's turn timer (``turn_seconds`` from the turn's start), always, since a
silent program would otherwise stall the table. If the bot moved first the
stand-in's plan is stale and refused, as any late move is; if the stand-in
moved, its action is logged ``by_stand_in`` (the round rows count it).
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from game import master
from game.master import TurnPlan
from game.models import Table

AWAITING = "awaiting_bot"  # what the driver reports: the external bot is to move


def time_left(table: Table) -> float:
    """Seconds left of the turn timer at ``table`` (the whole timer if not started)."""
    started = table.turn_started_at or timezone.now()
    deadline = started + timedelta(seconds=table.turn_seconds)
    return max(0.0, (deadline - timezone.now()).total_seconds())


def await_bot(table: Table, seat: int, version: int) -> str:
    """Schedule the stand-in for ``seat`` at the end of its time."""
    master.get().schedule(TurnPlan(table.pk, seat, version, time_left(table), True))
    return AWAITING
