"""``manage.py close_abandoned_tables``: close the tables nobody visited within
``SPADES_ABANDON_MINUTES`` (see ``game.abandoned``); for a cron job."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from game.abandoned import close_abandoned


class Command(BaseCommand):
    help = "Close open and playing tables that no player has visited for SPADES_ABANDON_MINUTES."

    def handle(self, *args: Any, **opts: Any) -> None:
        closed = close_abandoned()
        self.stdout.write(f"closed {len(closed)} abandoned table(s)")
