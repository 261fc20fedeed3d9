"""What the lobby adds to a table: who hosts it, privacy, invitations, rematches.

The game app owns tables and seats; a :class:`TableListing` sits beside a
table for the lobby's own concerns. The invite token itself lives on the
table (``Table.invite_token``): whoever holds the link may see a private
table and take a seat reserved for an invitee.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from game.models import Table


class TableListing(models.Model):
    table = models.OneToOneField(Table, on_delete=models.CASCADE, related_name="listing")
    private = models.BooleanField(
        default=False, help_text="not in the lobby's list: only reachable by the invite link"
    )
    # Seat positions held for someone who comes with the invite link.
    reserved = models.JSONField(default=list, blank=True)
    # The host when the host is a guest (Table.host covers signed-in users).
    host_guest_id = models.CharField(max_length=64, blank=True, default="")
    host_name = models.CharField(max_length=40, blank=True, default="")
    rematch = models.OneToOneField(
        Table,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="rematch_of",
        help_text="the table of the rematch, once someone asked for it",
    )

    def __str__(self) -> str:
        return f"listing of {self.table}"


class PublicProfile(models.Model):
    """An account that shows its profile to everyone at ``/players/<name>/``
    (opt-in: without this row, or with ``public`` off, the profile is private)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="public_profile"
    )
    public = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"{self.user_id}: {'public' if self.public else 'private'}"
