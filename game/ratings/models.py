"""A rating per account, guest and bot kind, and its history, one row per match.

Imported by ``game.models`` so that Django finds them in the game app.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Rating(models.Model):
    """One rated entrant: an account, a guest (by the session's guest id) or a
    bot kind as configured (``BIS+SRP``). A guest's row becomes the account's
    when they sign up, keeping its ``guest_id`` so later ends of their guest
    seats still find it (``game.ratings.rebuild.claim_guest``)."""

    class Kind(models.TextChoices):
        USER = "user", "Account"
        GUEST = "guest", "Guest"
        BOT = "bot", "Bot"

    key = models.CharField(max_length=80, unique=True, help_text="u:<user>, g:<guest>, b:<bot>")
    kind = models.CharField(max_length=5, choices=Kind.choices)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
        related_name="rating",
    )  # fmt: skip
    guest_id = models.CharField(max_length=64, blank=True, default="")
    name = models.CharField(max_length=40, blank=True, default="", help_text="a bot's or guest's")
    mu = models.FloatField()
    sigma = models.FloatField()
    # mu - 3 sigma, the conservative figure the leaderboard sorts by (stored: indexed)
    conservative = models.FloatField()
    matches = models.PositiveIntegerField(default=0, help_text="rated matches")
    wins = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["guest_id"], condition=~models.Q(guest_id=""), name="one_rating_per_guest"
            ),
        ]
        indexes = [models.Index(fields=["kind", "-conservative"], name="rating_board")]

    def __str__(self) -> str:
        return f"{self.key}: {self.mu:.1f} ± {self.sigma:.1f}"


class RatingChange(models.Model):
    """A rated entrant's rating before and after one match (its history)."""

    rating = models.ForeignKey(Rating, on_delete=models.CASCADE, related_name="changes")
    table = models.ForeignKey("game.Table", on_delete=models.CASCADE, related_name="rating_changes")
    finished_at = models.DateTimeField()
    mu_before = models.FloatField()
    sigma_before = models.FloatField()
    mu = models.FloatField()
    sigma = models.FloatField()
    won = models.BooleanField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["rating", "table"], name="one_change_per_match"),
        ]

    def __str__(self) -> str:
        return f"{self.rating_id} at {self.table_id}: {self.mu_before:.1f} -> {self.mu:.1f}"
