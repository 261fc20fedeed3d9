"""A finished round's stored double-dummy analysis (``game.replays.analysis``)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class RoundAnalysis(models.Model):
    """One per analysed round, written once (``game.replays.tasks``): a round
    is never analysed twice, and a round whose record cannot be analysed keeps
    its error here instead of being tried again and again. Its write adds the
    round's card play quality to the dashboard's tallies in the same transaction
    (``game.research.tallies.add_analysis``)."""

    round = models.OneToOneField(
        "game.RoundRecordRow", on_delete=models.CASCADE, primary_key=True, related_name="analysis"
    )
    format = models.PositiveSmallIntegerField(help_text="game.replays.analysis.FORMAT")
    analysed_at = models.DateTimeField(default=timezone.now, db_index=True)
    seconds = models.FloatField(help_text="the analysis's time, alternatives apart")
    result = models.JSONField(null=True, help_text="analyse_round(): cards, values, bids")
    alternatives = models.JSONField(
        null=True, blank=True, help_text="per card, every legal card's values (a second pass)"
    )
    error = models.CharField(max_length=200, blank=True, default="")
    losses = models.JSONField(
        null=True,
        blank=True,
        help_text="per seat N, E, S, W: cards, dd_points_lost, dd_tricks_lost "
        "(analysis.seat_losses), what the dashboard's tallies read; null with an error",
    )

    class Meta:
        verbose_name_plural = "round analyses"

    def __str__(self) -> str:
        return f"analysis of round {self.round_id}"
