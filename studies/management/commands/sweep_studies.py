"""``manage.py sweep_studies``: move on the participants whose page went quiet.

For cron, where Celery beat does not run (``studies.sweep``): waiting rooms'
absent waiters dropped and tables formed, playing participants judged by the
drop-out rule. Safe to run at any time and as often as wanted.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from studies import sweep


class Command(BaseCommand):
    help = "Move on the study participants whose page went quiet (the drop-out rule)."

    def handle(self, *args: Any, **opts: Any) -> None:
        swept = sweep.sweep()
        self.stdout.write(
            f"{swept.rooms} waiting room(s) and {swept.playing} playing participant(s) "
            f"looked at; {swept.moved} moved on"
        )
