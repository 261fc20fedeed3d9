"""``manage.py rebuild_ratings``: recompute every rating and its history from the
stored matches (``game.ratings.rebuild``), e.g. after rows were changed by hand."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from game.ratings.models import Rating
from game.ratings.rebuild import rebuild


class Command(BaseCommand):
    help = "Recompute every rating from the stored matches, in the order they were rated."

    def handle(self, *args: Any, **opts: Any) -> None:
        rated = rebuild()
        self.stdout.write(f"rated {rated} match(es); {Rating.objects.count()} rating(s)")
