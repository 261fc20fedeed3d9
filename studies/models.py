"""A study, its conditions, its participants and their assignment.

Privacy is in the schema: the raw recruitment ID (Prolific's PROLIFIC_PID)
is kept in :class:`RecruitmentId` only, because paying people needs it and
nothing else does. Every other row, log line and export names a participant
by :attr:`Participant.pseudonym`, a random token that is not derived from
the ID. A returning participant is found by a keyed hash of the ID (HMAC
with SECRET_KEY), never by scanning raw IDs. Nothing is stored about anyone
before they consent; a refusal only counts (:class:`ConsentDeclined`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

RAW_ID_MAX = 64
RAW_ID_CHARS = r"^[A-Za-z0-9._-]+$"
raw_id_validator = RegexValidator(RAW_ID_CHARS, "letters, digits, '-', '_' and '.' only")


def new_pseudonym() -> str:
    """Random, so that nothing about the recruitment ID can be learned from it."""
    return "p" + secrets.token_hex(8)


def keyed_hash(study_slug: str, raw_id: str, key: str | None = None) -> str:
    """HMAC-SHA256 of the raw ID, keyed with SECRET_KEY (or ``key``) and scoped
    to the study: finds a returning participant; useless to anyone without the key."""
    message = f"{study_slug}\x00{raw_id}".encode()
    secret = (key or settings.SECRET_KEY).encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def site_keys() -> list[str]:
    """The key in use, then the keys rotated out that are still accepted
    (``SECRET_KEY_FALLBACKS``): a rotation during a study loses nobody."""
    return [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]


class Study(models.Model):
    slug = models.SlugField(max_length=50, unique=True)
    title = models.CharField(max_length=200)
    # The study file as loaded: its text (the pre-registered definition, read
    # again by studies.definition.parse) and the parsed form, for queries.
    source = models.TextField()
    source_name = models.CharField(max_length=255, help_text="the file it was loaded from")
    definition = models.JSONField(encoder=DjangoJSONEncoder)
    definition_hash = models.CharField(max_length=64, help_text="SHA-256 of the file's text")
    seed = models.BigIntegerField(help_text="of the blocked assignment to conditions")
    pilot = models.BooleanField(default=False)

    class Intake(models.TextChoices):
        """Whether newcomers may join (studies.intake): the researcher's hand.
        Paused and closed turn newcomers away politely; whoever consented
        already goes on."""

        OPEN = "open"
        PAUSED = "paused"
        CLOSED = "closed"

    intake = models.CharField(max_length=8, choices=Intake.choices, default=Intake.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "studies"
        permissions = [
            ("view_payments", "Can download a study's payments (raw recruitment IDs)"),
        ]

    def __str__(self) -> str:
        return self.slug


class Condition(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="conditions")
    name = models.CharField(max_length=100)
    position = models.PositiveSmallIntegerField(help_text="its place in the study file, from 0")
    seat_plan = models.JSONField(help_text="N E S W: 'participant' or a bot's registry name")
    disclosure = models.CharField(max_length=10, default="bots")
    # At most this many participants are assigned to it (the file's places);
    # None: no cap. A full condition's slots go to the others.
    places = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "position"], name="condition_position"),
            models.UniqueConstraint(fields=["study", "name"], name="condition_name"),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.name}"


class DroppedWhy(models.TextChoices):
    """Why a participant was dropped (the end page says it, the export has it)."""

    WAITING = "waiting", "Left the waiting room"
    TIMERS = "timers", "Turn timers ran out in a row"
    AWAY = "away", "Away from the table too long"
    LEFT = "left", "Left the table"
    RESEARCHER = "researcher", "Dropped by the researcher"


class Participant(models.Model):
    class Stage(models.TextChoices):
        CONSENTED = "consented"
        SCREENING = "screening"
        INSTRUCTIONS = "instructions"
        QUIZ = "quiz"
        WAITING = "waiting"
        PLAYING = "playing"
        QUESTIONNAIRE = "questionnaire"
        DEBRIEF = "debrief"
        COMPLETED = "completed"
        FAILED_QUIZ = "failed_quiz", "Failed the quiz"
        SCREENED_OUT = "screened_out", "Screened out"
        DROPPED = "dropped"

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="participants")
    pseudonym = models.CharField(max_length=20, unique=True, default=new_pseudonym)
    condition = models.ForeignKey(Condition, on_delete=models.PROTECT, related_name="participants")
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.CONSENTED)
    # When each stage was entered: {stage: ISO time}, for the export's durations.
    stage_times = models.JSONField(default=dict, encoder=DjangoJSONEncoder)
    pilot = models.BooleanField(default=False)
    quiz_attempts = models.PositiveSmallIntegerField(default=0)
    # When the waiting room's page last asked for news (studies.waiting_room).
    last_seen = models.DateTimeField(null=True, blank=True)
    # When they entered the waiting room (also in stage_times): a column, so that
    # a poll asks the database for the longest wait instead of reading everyone.
    waiting_since = models.DateTimeField(null=True, blank=True)
    # Withdrawn at their request (manage.py withdraw_participant): what the
    # consent promises is removed, and the row stays (the foreign keys to it
    # are PROTECT) only so that nothing is left pointing nowhere.
    withdrawn = models.BooleanField(default=False)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    # Left out of the analyses by the researcher (studies.intake.exclude; the
    # reason is in the audit log): their data stay, flagged.
    excluded = models.BooleanField(default=False)
    # Why a dropped participant left (studies.playing, waiting_room, intake).
    dropped_why = models.CharField(max_length=16, choices=DroppedWhy.choices, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            # The waiting room's census of a condition, asked at every poll.
            models.Index(fields=["condition", "stage"], name="participant_condition_stage"),
        ]

    def __str__(self) -> str:
        return self.pseudonym

    def __repr__(self) -> str:
        return f"<Participant {self.pseudonym} {self.stage}>"

    def move_to(self, stage: Participant.Stage, why: str = "") -> None:
        """Enter ``stage``, noting when (the caller saves)."""
        now = timezone.now()
        self.stage = stage
        self.stage_times[str(stage)] = now.isoformat()
        if stage == Participant.Stage.DROPPED:
            self.dropped_why = why
        if stage == Participant.Stage.WAITING:
            self.waiting_since = now


class RecruitmentId(models.Model):
    """The one place the raw recruitment ID is stored: paying people needs it.

    Never shown in a list, a ``__str__``, a ``repr`` or a log line.
    """

    participant = models.OneToOneField(
        Participant, on_delete=models.CASCADE, related_name="recruitment"
    )
    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="+")
    raw_id = models.CharField(max_length=RAW_ID_MAX, validators=[raw_id_validator])
    # The platform's study and session ids of this visit (identifying too).
    raw_study_id = models.CharField(max_length=RAW_ID_MAX, blank=True, default="")
    raw_session_id = models.CharField(max_length=RAW_ID_MAX, blank=True, default="")
    key_hash = models.CharField(max_length=64, help_text="keyed_hash(study, raw id)")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "key_hash"], name="recruitment_key_hash")
        ]

    def __str__(self) -> str:
        return f"recruitment ID of {self.participant_id}"

    def __repr__(self) -> str:
        return f"<RecruitmentId of participant {self.participant_id}>"


class ConsentDeclined(models.Model):
    """How many declined consent in a study: a count, nothing about who."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="declined")
    count = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.count} declined {self.study.slug}"


class Assignment(models.Model):
    """Which condition a participant got and from which slot of which block, so
    that the assignment can be audited and replayed (studies.assignment)."""

    participant = models.OneToOneField(
        Participant, on_delete=models.CASCADE, related_name="assignment"
    )
    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="assignments")
    condition = models.ForeignKey(Condition, on_delete=models.PROTECT, related_name="+")
    sequence = models.PositiveIntegerField(help_text="the study's nth assignment, from 0")
    block = models.PositiveIntegerField()
    position_in_block = models.PositiveSmallIntegerField()
    seed = models.CharField(max_length=64, help_text="the block's shuffle seed")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["study", "sequence"], name="assignment_slot")
        ]

    def __str__(self) -> str:
        return f"{self.participant} -> {self.condition.name} (block {self.block})"


class StudyTable(models.Model):
    """A table the waiting room formed for participants of one condition
    (``studies.waiting_room``): the game's table, and who of them sat where."""

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="tables")
    condition = models.ForeignKey(Condition, on_delete=models.PROTECT, related_name="tables")
    table = models.OneToOneField("game.Table", on_delete=models.PROTECT, related_name="study_table")
    created_at = models.DateTimeField(auto_now_add=True)
    filled_by_stand_in = models.PositiveSmallIntegerField(
        default=0,
        help_text="participant seats the study's stand-in bot took after the waiting timeout",
    )
    participants = models.ManyToManyField(
        Participant, through="StudySeat", related_name="study_tables"
    )

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.condition.name}: table {self.table_id}"


class StudyMatch(models.Model):
    """One match of a study table's participants: the first when the waiting
    room seats them, then one more at a new game table (a rematch, the same
    seats) until the study's ``matches = N`` are played (``studies.playing``).
    ``StudyTable.table`` is the one being played now."""

    study_table = models.ForeignKey(StudyTable, on_delete=models.CASCADE, related_name="matches")
    number = models.PositiveSmallIntegerField(help_text="the match of the study table, from 1")
    table = models.OneToOneField("game.Table", on_delete=models.PROTECT, related_name="study_match")

    class Meta:
        ordering = ["study_table", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["study_table", "number"], name="one_study_match_per_number"
            )
        ]

    def __str__(self) -> str:
        return f"{self.study_table_id} match {self.number}: table {self.table_id}"


class StudySeat(models.Model):
    """A participant's seat at a study table: one table per participant, ever."""

    study_table = models.ForeignKey(StudyTable, on_delete=models.CASCADE, related_name="seats")
    participant = models.OneToOneField(
        Participant, on_delete=models.PROTECT, related_name="study_seat"
    )
    position = models.PositiveSmallIntegerField(help_text="0-3: N E S W")
    dropped = models.BooleanField(
        default=False,
        help_text="dropped out: missed_turns stand-in moves in a row, or left the seat",
    )

    class Meta:
        ordering = ["study_table", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["study_table", "position"], name="one_participant_per_study_seat"
            )
        ]

    def __str__(self) -> str:
        return f"{self.participant} at {self.study_table_id}/{self.position}"


class Answer(models.Model):
    """One answer of a participant: to a screening question (``s1``...), a quiz
    question in one attempt, or a questionnaire item. ``value`` is the chosen
    option's text (screening, quiz), the Likert choice's number from 1, the
    lowest label (Likert item), or the text written (text item)."""

    class Kind(models.TextChoices):
        QUIZ = "quiz"
        QUESTIONNAIRE = "questionnaire"
        SCREENING = "screening"

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="answers")
    kind = models.CharField(max_length=13, choices=Kind.choices)
    item_id = models.CharField(max_length=64, help_text="q1, q2... (quiz) or the item's id")
    value = models.TextField()
    attempt = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="the quiz attempt, from 1; empty for the questionnaire"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["participant", "kind", "attempt", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "item_id", "attempt"],
                condition=models.Q(kind="quiz"),
                name="one_quiz_answer_per_attempt",
            ),
            models.UniqueConstraint(
                fields=["participant", "item_id"],
                condition=models.Q(kind="questionnaire"),
                name="one_questionnaire_answer",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.participant_id} {self.kind} {self.item_id}"


class StudyClock(models.Model):
    """The site's last sign of life as the waiting rooms saw it (one row,
    ``studies.clock``): absence from a waiting room is counted from a
    participant's own silence, never from the server's (an outage)."""

    alive_at = models.DateTimeField(help_text="when a server process last answered a poll")
    outage_seconds = models.FloatField(default=0, help_text="outages credited so far, in all")

    def __str__(self) -> str:
        return f"alive at {self.alive_at:%Y-%m-%d %H:%M:%S}"


class StudyOutage(models.Model):
    """A gap in the site's life that ``studies.clock`` credited: no participant's
    absence counts during it (waiting or away from a table)."""

    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"down {self.started_at:%Y-%m-%d %H:%M:%S} to {self.ended_at:%H:%M:%S}"


class AuditEntry(models.Model):
    """A researcher's hand on a study's data (a withdrawal, a pilot reset):
    who did what to whom, when and why. The participant is named by pseudonym
    only, as text, so the entry outlives the rows it speaks of."""

    class Action(models.TextChoices):
        WITHDRAW = "withdraw", "Withdrew a participant"
        RESET_PILOT = "reset_pilot", "Cleared the pilot data"
        OPEN = "open", "Opened the study to newcomers"
        PAUSE = "pause", "Paused the study's intake"
        CLOSE = "close", "Closed the study"
        ADVANCE = "advance", "Seated a waiting participant now"
        DROP = "drop", "Dropped a participant"
        EXCLUDE = "exclude", "Excluded a participant from the analyses"

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="audit")
    participant = models.CharField(
        max_length=20, blank=True, default="", help_text="the pseudonym; empty: the study"
    )
    action = models.CharField(max_length=16, choices=Action.choices)
    reason = models.TextField()
    at = models.DateTimeField(default=timezone.now)
    by = models.CharField(max_length=150, help_text="who ran it (the command's --by)")

    class Meta:
        ordering = ["study", "at", "pk"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        who = f" {self.participant}" if self.participant else ""
        return f"{self.study.slug}: {self.action}{who} at {self.at:%Y-%m-%d %H:%M}"
