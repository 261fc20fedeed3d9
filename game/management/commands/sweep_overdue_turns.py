"""``manage.py sweep_overdue_turns``: schedule again the moves that look lost.

For cron, where neither Celery beat nor the embedded server sweeps
(``game.driver.sweeper``). Safe to run at any time and as often as wanted: a move is
made at its table's version or refused as stale.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from game.driver import sweeper


class Command(BaseCommand):
    help = "Schedule again the bot and stand-in moves of tables that waited too long."

    def handle(self, *args: Any, **opts: Any) -> None:
        swept = sweeper.sweep()
        self.stdout.write(
            f"{len(swept)} table(s) had a lost move scheduled again"
            + (f": {', '.join(map(str, swept))}" if swept else "")
        )
