"""Tables, seats, the append-only action log, round records and match results.

The action log is the truth: a table's match is its rules and seed with the
logged actions replayed in version order (``game.moves.matches`` does that). The
round records and match results are derived rows, written in the same
transaction as the action that finished the round or the match, so that
analyses can query them without replaying anything.

The match seed never leaves the server: it is not in any view, export or
admin page. The ratings' models (``game.ratings.models``) are imported at the end.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from game.engine import new_match_seed
from game.research.tally_model import RoundTally

__all__ = ["Action", "ChatLine", "MatchResult", "PendingRound", "Rating", "RatingChange",
           "RoundRecordRow", "RoundTally", "Seat", "Table"]  # fmt: skip

SEAT_COUNT = 4
POSITION_CHOICES = [(0, "North"), (1, "East"), (2, "South"), (3, "West")]
# A bot's name at the table, by seat (its initial is the seat's): four bots
# of one kind stay four players you can tell apart; the kind is shown beside.
BOT_PERSONAS = ("Nora", "Ezra", "Sofia", "Wyatt")


def new_public_id() -> str:
    """A short public id for URLs (not a secret: the invite token is)."""
    return secrets.token_urlsafe(6)


def new_invite_token() -> str:
    return secrets.token_urlsafe(24)


class Table(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Open"
        PLAYING = "playing", "Playing"
        FINISHED = "finished", "Finished"
        ABANDONED = "abandoned", "Closed: nobody was here"  # game.abandoned

    public_id = models.CharField(max_length=16, unique=True, default=new_public_id)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    host = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="hosted_tables",
    )
    rules = models.JSONField(default=dict, help_text="Rules.to_dict() of the match")
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.OPEN, db_index=True
    )
    # Server-side only: never in a view, an export or the admin.
    seed = models.CharField(max_length=64, default=new_match_seed, editable=False)
    version = models.PositiveIntegerField(default=0, help_text="actions applied so far")
    # Seat changes during play that are not moves (a player leaves, comes back):
    # a move made from the table and seats a process remembers checks it
    # (game/moves/move.py, the quick move), so that it never acts on old seats.
    seats_version = models.PositiveIntegerField(default=0, editable=False)
    invite_token = models.CharField(max_length=64, unique=True, default=new_invite_token)
    turn_seconds = models.PositiveSmallIntegerField(
        default=30, help_text="a human's time to act before a stand-in bot moves"
    )
    stand_in_bots = models.BooleanField(
        default=True, help_text="a bot moves for a human whose turn timer runs out"
    )
    bot_delay = models.FloatField(
        null=True,
        blank=True,
        help_text="seconds a bot waits before moving (blank: SPADES_BOT_DELAY)",
    )

    # A study's "names" disclosure: its bots look like players in every frame and page.
    class Talk(models.TextChoices):
        """What the table's people may say to each other: a study's tables are
        silent unless its file allows reactions or chat (a chat line is
        personal data, and a bot passing for a player never answers one)."""

        CHAT = "chat"
        REACTIONS = "reactions"
        OFF = "off"

    talk = models.CharField(max_length=10, choices=Talk.choices, default=Talk.CHAT)
    bots_as_players = models.BooleanField(default=False)
    rated = models.BooleanField(default=True, help_text="its match counts for ratings")
    # A study's table (set by ``studies`` when it forms one; the game knows no
    # study): its condition's id, 0 for none, and whether it is pilot data (a
    # pilot study, or a pilot participant seated). Copied to the table's round
    # rows and match result, and a key of the tallies, so that the dashboard
    # filters by study and condition and leaves pilot data out.
    study_condition = models.PositiveIntegerField(default=0)
    pilot = models.BooleanField(default=False)
    # The N/S and E/W partnerships' rating bands as the match started (set by
    # seating.start_table; game.ratings.bands), copied like the study's keys.
    band_ns = models.PositiveSmallIntegerField(default=0)
    band_ew = models.PositiveSmallIntegerField(default=0)
    # When the current turn began (for the turn timer); set on every move.
    turn_started_at = models.DateTimeField(null=True, blank=True)
    # A player was last here (a seat change, a socket opened, closed or still
    # alive); a table nobody visits for SPADES_ABANDON_MINUTES is closed.
    last_human_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Table {self.public_id} ({self.status})"

    @property
    def group_name(self) -> str:
        """The channel-layer group of this table's sockets."""
        return f"table_{self.pk}"


class Seat(models.Model):
    class Kind(models.TextChoices):
        HUMAN = "human", "Human"
        BOT = "bot", "Bot"

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seats")
    position = models.PositiveSmallIntegerField(choices=POSITION_CHOICES)
    kind = models.CharField(max_length=5, choices=Kind.choices, default=Kind.HUMAN)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="seats",
    )
    # A guest is identified by the random id kept in their session.
    guest_id = models.CharField(max_length=64, blank=True, default="", db_index=True)
    guest_name = models.CharField(max_length=40, blank=True, default="")
    bot_name = models.CharField(max_length=40, blank=True, default="")
    # A human whose turn timer ran out is *away*: the stand-in moves for them
    # at once (game.master) until they act or say they are back. played_for
    # lists the actions it made for them since (public: they were played).
    away = models.BooleanField(default=False)
    played_for = models.JSONField(default=list, blank=True)
    # Timers that ran out since the player's own last move, the most ever in
    # a row at this seat, and when the last ran out: a study's drop-out rule
    # counts timers, not the stand-in's moves (one timer is followed by
    # several quick moves while the player is away).
    missed_in_a_row = models.PositiveSmallIntegerField(default=0)
    most_missed_in_a_row = models.PositiveSmallIntegerField(default=0)
    away_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["table", "position"]
        constraints = [
            models.UniqueConstraint(fields=["table", "position"], name="one_seat_per_position"),
            models.CheckConstraint(
                condition=models.Q(position__gte=0) & models.Q(position__lte=3),
                name="seat_position_0_to_3",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_position_display()}: {self.display_name}"

    @property
    def display_name(self) -> str:
        if self.kind == Seat.Kind.BOT:
            return BOT_PERSONAS[self.position]
        if self.user_id is not None and self.user is not None:
            return self.user.get_username()
        return self.guest_name or "Guest"

    def to_public_dict(self, bots_as_players: bool = False) -> dict[str, Any]:
        bot = self.kind == Seat.Kind.BOT and not bots_as_players  # Table.bots_as_players
        return {
            "position": self.position,
            "kind": Seat.Kind.BOT if bot else Seat.Kind.HUMAN,
            "name": self.display_name,
            "bot_name": self.bot_name if bot else None,
            "away": self.away,
            "played_for": self.played_for,
        }


class Action(models.Model):
    """One applied action. Append-only: rows are never updated or deleted."""

    # No index of its own: the unique (table, version) below serves every
    # lookup by table, and a second index was one more page (SQLite) or index
    # entry (PostgreSQL) written by every move.
    table = models.ForeignKey(
        Table, on_delete=models.CASCADE, related_name="actions", db_index=False
    )
    version = models.PositiveIntegerField(help_text="the table's version after this action")
    round_number = models.PositiveSmallIntegerField()
    seat = models.PositiveSmallIntegerField(choices=POSITION_CHOICES)
    action = models.JSONField(help_text="action_to_dict() of the engine action")
    created_at = models.DateTimeField(auto_now_add=True)
    by_stand_in = models.BooleanField(
        default=False, help_text="a stand-in bot moved for a human whose timer ran out"
    )
    # A human's decision time (docs/exports.md): the browser's measure from
    # drawing the decision to the click, never above the server's bound, the
    # time from sending the state frame that offered it to receiving the act.
    think_ms = models.PositiveIntegerField(null=True, blank=True)
    think_bound_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["table", "version"]
        constraints = [
            models.UniqueConstraint(fields=["table", "version"], name="one_action_per_version"),
        ]

    def __str__(self) -> str:
        return f"{self.table_id} v{self.version}: {self.action}"


class ChatLine(models.Model):
    """One line of table talk, kept so that the last lines come back on reload.

    Quick reactions are not stored: they are of the moment.
    """

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="chat_lines")
    created_at = models.DateTimeField(auto_now_add=True)
    seat = models.PositiveSmallIntegerField(choices=POSITION_CHOICES, null=True, blank=True)
    name = models.CharField(max_length=40)
    text = models.CharField(max_length=200)

    class Meta:
        indexes = [models.Index(fields=["table", "-id"], name="chat_line_recent")]

    def __str__(self) -> str:
        return f"{self.table_id} {self.name}: {self.text}"


class RoundRecordRow(models.Model):
    """A finished round: its full record (``record_of``) and columns to query by."""

    # Indexed only where a reader filters (exports: time, rules, make-ups; the
    # flush: untallied rows), since every round's end writes each index. The
    # table is the unique (table, round_number)'s first column, the rules key
    # round_rules_time's.
    table = models.ForeignKey(
        Table, on_delete=models.CASCADE, related_name="round_records", db_index=False
    )
    round_number = models.PositiveSmallIntegerField()
    finished_at = models.DateTimeField(default=timezone.now, db_index=True)
    version = models.PositiveIntegerField(help_text="the table version of the round's last action")
    rules = models.JSONField()
    dealer = models.PositiveSmallIntegerField(choices=POSITION_CHOICES)
    # Who sat where: 'human'/'bot' per seat N, E, S, W, e.g. "HBHB" with bot names.
    seat_kinds = models.CharField(max_length=4)
    bot_names = models.JSONField(help_text="bot name per seat, null for a human")
    stand_in_moves = models.PositiveSmallIntegerField(default=0)
    # Who really played (game.research.round_columns): the cards a stand-in played for each
    # seat, '1' per seat whose bid was the stand-in's, and whether that makes the
    # round a stand-in round (left out of the analyses unless asked for).
    stand_in_n = models.PositiveSmallIntegerField(default=0)
    stand_in_e = models.PositiveSmallIntegerField(default=0)
    stand_in_s = models.PositiveSmallIntegerField(default=0)
    stand_in_w = models.PositiveSmallIntegerField(default=0)
    stand_in_bids = models.CharField(max_length=4, default="0000")
    stand_in_round = models.BooleanField(default=False)
    bid_n = models.SmallIntegerField()
    bid_e = models.SmallIntegerField()
    bid_s = models.SmallIntegerField()
    bid_w = models.SmallIntegerField()
    blind_nils = models.CharField(max_length=4, help_text="'1' per seat that bid blind nil")
    bid_total = models.PositiveSmallIntegerField()
    tricks_n = models.PositiveSmallIntegerField()
    tricks_e = models.PositiveSmallIntegerField()
    tricks_s = models.PositiveSmallIntegerField()
    tricks_w = models.PositiveSmallIntegerField()
    points_ns = models.IntegerField()
    points_ew = models.IntegerField()
    score_ns = models.IntegerField(help_text="after the round")
    score_ew = models.IntegerField(help_text="after the round")
    bags_ns = models.PositiveSmallIntegerField(help_text="after the round")
    bags_ew = models.PositiveSmallIntegerField(help_text="after the round")
    nil_position_ns = models.CharField(max_length=24)
    nil_position_ew = models.CharField(max_length=24)
    record = models.JSONField(help_text="the round record, game.engine.record_of()")
    # Analysis columns (game.research.round_columns.derived_columns), so that the
    # dashboard aggregates in the database without reading the records.
    rules_key = models.CharField(max_length=12, default="")
    makeup_ns = models.CharField(max_length=2, default="", help_text="BB, HB or HH")
    makeup_ew = models.CharField(max_length=2, default="", help_text="BB, HB or HH")
    bot_n = models.CharField(max_length=40, default="", blank=True)
    bot_e = models.CharField(max_length=40, default="", blank=True)
    bot_s = models.CharField(max_length=40, default="", blank=True)
    bot_w = models.CharField(max_length=40, default="", blank=True)
    # Each partnership's bot key: 'BIS+SRP', 'A/B' for two different bots, '' for humans.
    bot_ns = models.CharField(max_length=81, default="", blank=True)
    bot_ew = models.CharField(max_length=81, default="", blank=True)
    nil_category = models.CharField(max_length=24, default="")
    nil_bids_ns = models.PositiveSmallIntegerField(default=0)
    nil_bids_ew = models.PositiveSmallIntegerField(default=0)
    nil_made_ns = models.PositiveSmallIntegerField(default=0)
    nil_made_ew = models.PositiveSmallIntegerField(default=0)
    made_ns = models.BooleanField(default=False, help_text="N/S made its contract")
    made_ew = models.BooleanField(default=False, help_text="E/W made its contract")
    round_type_n = models.PositiveSmallIntegerField(default=0, help_text="RoundType 1..10")
    round_type_e = models.PositiveSmallIntegerField(default=0)
    round_type_s = models.PositiveSmallIntegerField(default=0)
    round_type_w = models.PositiveSmallIntegerField(default=0)
    # The table's study condition (0: none) and pilot flag (Table's), as the round ended.
    study_condition = models.PositiveIntegerField(default=0)
    pilot = models.BooleanField(default=False)
    # The partnerships' rating bands at the match's start (Table's; 0: no rated human).
    band_ns = models.PositiveSmallIntegerField(default=0)
    band_ew = models.PositiveSmallIntegerField(default=0)
    # False from a live round's end until a tally flush adds it to the tallies
    # (game.research.tally_flush): the move's transaction leaves the tallies alone.
    tallied = models.BooleanField(default=True)

    class Meta:
        ordering = ["table", "round_number"]
        constraints = [
            models.UniqueConstraint(fields=["table", "round_number"], name="one_record_per_round"),
        ]
        indexes = [
            models.Index(fields=["makeup_ns", "makeup_ew"], name="round_makeups"),
            models.Index(fields=["rules_key", "finished_at"], name="round_rules_time"),
            models.Index(fields=["id"], condition=models.Q(tallied=False), name="round_untallied"),
        ]

    def __str__(self) -> str:
        return f"{self.table_id} round {self.round_number}"


class PendingRound(models.Model):
    """A round whose last card was a quick move, its record row still to write.

    The move writes only this (its version, who sat where): building the
    round's record and 60 columns was most of a round end's cost on the
    server's event loop. ``game.research.round_rows`` writes the row from the log
    and deletes this, in one transaction, within a second (the tally flush),
    or at the sweep, or before a reader that must be exact reads.
    """

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="pending_rounds")
    round_number = models.PositiveSmallIntegerField()
    version = models.PositiveIntegerField(help_text="the table version of the round's last card")
    finished_at = models.DateTimeField()
    seat_kinds = models.CharField(max_length=4)  # as at the round's end: a seat may be handed over
    bot_names = models.JSONField()

    def __str__(self) -> str:
        return f"{self.table_id} round {self.round_number} (pending)"


class MatchResult(models.Model):
    table = models.OneToOneField(Table, on_delete=models.CASCADE, related_name="result")
    finished_at = models.DateTimeField(default=timezone.now, db_index=True)
    winner = models.PositiveSmallIntegerField(
        choices=[(0, "North/South"), (1, "East/West")], help_text="the winning partnership"
    )
    score_ns = models.IntegerField()
    score_ew = models.IntegerField()
    bags_ns = models.PositiveSmallIntegerField()
    bags_ew = models.PositiveSmallIntegerField()
    rounds = models.PositiveSmallIntegerField()
    stand_in_rounds = models.PositiveSmallIntegerField(
        default=0, help_text="rounds of the match that were stand-in rounds"
    )
    # '1' per round type (1..10) a seat of the partnership had in one of the match's rounds.
    round_types_ns = models.CharField(max_length=10, default="0000000000")
    round_types_ew = models.CharField(max_length=10, default="0000000000")
    version = models.PositiveIntegerField(help_text="the table version of the last action")
    # Analysis columns, as on RoundRecordRow.
    rules_key = models.CharField(max_length=12, default="", db_index=True)
    makeup_ns = models.CharField(max_length=2, default="", help_text="BB, HB or HH")
    makeup_ew = models.CharField(max_length=2, default="", help_text="BB, HB or HH")
    bot_n = models.CharField(max_length=40, default="", blank=True)
    bot_e = models.CharField(max_length=40, default="", blank=True)
    bot_s = models.CharField(max_length=40, default="", blank=True)
    bot_w = models.CharField(max_length=40, default="", blank=True)
    study_condition = models.PositiveIntegerField(default=0, help_text="as on Table")
    pilot = models.BooleanField(default=False, help_text="as on Table")
    band_ns = models.PositiveSmallIntegerField(default=0, help_text="as on Table")
    band_ew = models.PositiveSmallIntegerField(default=0, help_text="as on Table")

    def __str__(self) -> str:
        return f"{self.table_id}: {self.get_winner_display()} {self.score_ns}-{self.score_ew}"


from game.ratings.models import Rating, RatingChange  # noqa: E402, F401
