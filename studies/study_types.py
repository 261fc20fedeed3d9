"""The parts of a study, as frozen dataclasses: what a study file defines
(``studies.definition`` reads and checks the file into these). Frozen: a
study's definition is pre-registered and never changes while it runs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

from game.engine.rules import Rules

PARTICIPANT = "participant"
SEATS = ("N", "E", "S", "W")  # positions 0-3, as game.models.POSITION_CHOICES
DEFAULT_TEXT_MAX = 2000


@dataclass(frozen=True)
class SeatPlan:
    """Who sits where, N E S W: ``PARTICIPANT`` or a bot's registry name."""

    seats: tuple[str, str, str, str]

    @property
    def participant_positions(self) -> tuple[int, ...]:
        return tuple(p for p, who in enumerate(self.seats) if who == PARTICIPANT)

    @property
    def bot_positions(self) -> tuple[int, ...]:
        return tuple(p for p, who in enumerate(self.seats) if who != PARTICIPANT)


@dataclass(frozen=True)
class Condition:
    name: str
    seat_plan: SeatPlan
    disclosure: str = "bots"
    debrief: str = ""
    # The debrief of one whose partner or opponent seat the waiting room's
    # stand-in took (shown under a name): "" means the site's text, which names
    # the seats (studies.stand_in).
    stand_in_debrief: str = ""
    # The condition's own instructions ("" : the study's), e.g. where it seats
    # the participant; and its cap of participants (None: none).
    instructions: str = ""
    places: int | None = None


@dataclass(frozen=True)
class Question:
    text: str
    options: tuple[str, ...]
    answer: str


@dataclass(frozen=True)
class ScreeningQuestion:
    text: str
    options: tuple[str, ...]
    eligible: tuple[str, ...]  # the answers that let a participant take part


@dataclass(frozen=True)
class Screening:
    """Questions asked after consent: an answer outside a question's
    ``eligible`` ends the study for the participant (``screened_out``)."""

    questions: tuple[ScreeningQuestion, ...]
    failure_text: str = ""  # "": the site's


@dataclass(frozen=True)
class Quiz:
    questions: tuple[Question, ...]
    attempts: int
    failure_text: str = ""  # shown when the attempts run out; "": the site's


@dataclass(frozen=True)
class LikertItem:
    id: str
    text: str
    scale: tuple[str, ...]  # the labels, lowest first
    required: bool = True


@dataclass(frozen=True)
class TextItem:
    id: str
    text: str
    max_length: int = DEFAULT_TEXT_MAX
    required: bool = True


@dataclass(frozen=True)
class Questionnaire:
    items: tuple[LikertItem | TextItem, ...]


@dataclass(frozen=True)
class Recruitment:
    """The query parameters a recruitment platform sends (Prolific's by default)."""

    id_param: str = "PROLIFIC_PID"
    study_param: str = "STUDY_ID"
    session_param: str = "SESSION_ID"


# The endings a participant can reach, each of which may have its own code.
OUTCOMES = ("completed", "screened_out", "failed_quiz", "dropped")


@dataclass(frozen=True)
class Completion:
    code: str
    redirect_url: str
    no_consent_url: str = ""  # where one who declines tells the platform; "": none
    # An outcome's own code and redirect (failed_quiz, dropped), shown on its end
    # page and in payments.csv: Prolific approves or returns by code.
    codes: dict[str, str] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)

    def code_of(self, outcome: str) -> str:
        return self.code if outcome == "completed" else self.codes.get(outcome, "")


@dataclass(frozen=True)
class Bonus:
    per_point: Decimal  # paid per point the participant's partnership wins
    currency: str
    cap: Decimal | None = None
    # A drop-out who played this many rounds is paid for them; None: completed only.
    partial_after_rounds: int | None = None


@dataclass(frozen=True)
class Play:
    matches: int | None  # exactly one of matches and rounds is set
    rounds: int | None
    turn_seconds: int = 30
    bot_delay: float | None = None  # a bot's think time; None: the site's
    rated: bool = True  # its matches count for the players' and bots' ratings (Table.rated)
    # What participants may say at the table (Table.talk): nothing by default, since
    # a chat line is personal data and a bot shown as a player never answers one.
    talk: str = "off"


@dataclass(frozen=True)
class Timeouts:
    waiting_seconds: int  # the waiting room's wait before stand-ins fill empty seats
    stand_in_bot: str
    dropout_missed_turns: int  # timers run out in a row before a participant drops
    # A waiting participant whose page has not asked for news this long has left: dropped.
    dropout_absent_seconds: int = 120


@dataclass(frozen=True)
class Study:
    slug: str
    title: str
    seed: int  # of the blocked assignment (studies.assignment)
    pilot: bool
    rules: Rules
    play: Play
    conditions: tuple[Condition, ...]
    consent: str
    instructions: str
    quiz: Quiz | None
    questionnaire: Questionnaire | None
    recruitment: Recruitment
    completion: Completion
    timeouts: Timeouts
    bonus: Bonus | None
    screening: Screening | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (decimals as strings), for storing and exports."""
        return _plain(asdict(self))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value) if isinstance(value, Decimal) else value
