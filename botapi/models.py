"""Bot accounts: a bot registered by a person, played by a program through its token."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

from game.external_bots import NAME_RE, seat_name
from game.models import Table

DEFAULT_MAX_TABLES, MAX_TABLES_CEILING = 10, 50


class BotAccount(models.Model):
    """A bot owned by a person. Not a user: it never signs in, never counts as a
    person; at a table it is the bot kind ``ext:<name>``."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bot_accounts"
    )
    name = models.CharField(
        max_length=32,
        unique=True,
        validators=[RegexValidator(NAME_RE, "2-32 characters: a-z, 0-9, '-' and '_'.")],
        help_text="Lower case letters, digits, '-' and '_'; seated as ext:<name>.",
    )
    description = models.CharField(max_length=500, blank=True)
    contact = models.CharField(max_length=200, help_text="How to reach the bot's author.")
    created_at = models.DateTimeField(auto_now_add=True)
    # The token's SHA-256 (botapi.tokens), "" once revoked; its first characters.
    token_hash = models.CharField(max_length=64, blank=True, default="", db_index=True)
    token_hint = models.CharField(max_length=12, blank=True, default="")
    token_issued_at = models.DateTimeField(null=True, blank=True)
    accepts_challenges = models.BooleanField(
        default=False, help_text="Offer it the seats hosts open to any bot (open challenges)."
    )
    max_tables = models.PositiveSmallIntegerField(
        default=DEFAULT_MAX_TABLES,
        validators=[MinValueValidator(1), MaxValueValidator(MAX_TABLES_CEILING)],
        help_text=f"At most this many open or playing tables at once (1-{MAX_TABLES_CEILING}).",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.seat_name

    @property
    def seat_name(self) -> str:
        return seat_name(self.name)

    @property
    def has_token(self) -> bool:
        return bool(self.token_hash)


class SeatOffer(models.Model):
    """A seat a host opened to any bot accepting open challenges: offered to
    each such bot that is connected, taken by the first to accept it."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="bot_offers")
    position = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    taken_by = models.ForeignKey(BotAccount, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="offers_taken")  # fmt: skip
    declined = models.JSONField(default=list, help_text="names of the bots that declined it")

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["table", "position"], name="one_offer_per_seat"),
        ]
