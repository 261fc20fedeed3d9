"""The tallies' rows (``RoundTally``), one of the game app's models (``game.models``
imports it, where Django and every reader find it): apart, so that the models'
module stays one sitting long."""

from __future__ import annotations

from django.db import models


class RoundTally(models.Model):
    """Counts and sums of stored rounds and matches, kept up to date on write
    (``game.research.tallies``).

    One row per span (a day, a month, or all time), rule set, stand-in or not, measured
    partnership (make-up, bot key, the opponents' make-up, whether the opponents'
    bot key is the same), study condition and pilot flag, the partnership's and its
    opponents' rating bands (``game.ratings.bands``), and figure cell
    (``game.research.tally_keys``): the dashboard reads these few rows instead of
    every round. A cell may be spread over several rows
    (``shard``, summed by every reader) so that live round ends seldom wait for one
    another's locks. Rebuilt by ``manage.py rebuild_tallies``.
    """

    span = models.CharField(max_length=1, help_text="d: a day, m: a month, a: all time")
    start = models.DateField(help_text="the day, the month's first day, or 1970-01-01")
    rules_key = models.CharField(max_length=12)
    stand_in = models.BooleanField(help_text="stand-in rounds (matches with one)")
    makeup = models.CharField(max_length=2, help_text="the measured partnership's make-up")
    bot = models.CharField(max_length=81, blank=True, help_text="its bot key")
    opp_makeup = models.CharField(max_length=2, help_text="the opponents' make-up")
    same_bot = models.BooleanField(help_text="the opponents have the same bot key")
    figure = models.CharField(max_length=1)
    who = models.CharField(max_length=81, blank=True)
    a = models.SmallIntegerField()
    b = models.SmallIntegerField()
    n = models.BigIntegerField(default=0)
    won = models.BigIntegerField(default=0)
    made = models.BigIntegerField(default=0)
    points = models.BigIntegerField(default=0)
    nil_bids = models.BigIntegerField(default=0)
    nil_made = models.BigIntegerField(default=0)
    shard = models.SmallIntegerField(
        default=0, help_text="one of the rows the cell is spread over (readers sum them)"
    )
    study_condition = models.PositiveIntegerField(
        default=0, help_text="the rounds' study condition (Table.study_condition; 0: none)"
    )
    pilot = models.BooleanField(default=False, help_text="pilot data (Table.pilot)")
    band = models.PositiveSmallIntegerField(
        default=0, help_text="the measured partnership's rating band at its match's start"
    )
    opp_band = models.PositiveSmallIntegerField(default=0, help_text="its opponents' band")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["figure", "span", "start", "rules_key", "stand_in", "makeup", "bot",
                        "opp_makeup", "same_bot", "who", "a", "b", "study_condition", "pilot",
                        "band", "opp_band", "shard"],
                name="one_tally_row_per_cell_shard",
            ),
        ]  # fmt: skip

    def __str__(self) -> str:
        return f"{self.figure} {self.span}{self.start} {self.makeup} {self.bot}: {self.n}"
