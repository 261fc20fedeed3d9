"""How a participant's study ended, and what that ending is paid.

The outcome is the ending stage a participant reached (``completed``,
``screened_out``, ``failed_quiz``, ``dropped``; empty while they are still under way), with the
time they reached it. Only a paid outcome earns the bonus: ``completed``,
and, if the study file's ``[bonus] partial_after_rounds = N`` says so,
``dropped`` after N rounds at the table. Points are the participant's
partnership's scores, at the end of each match or, for a drop-out, after the
last round finished before they dropped: the stand-in's later play earns them
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from game.models import MatchResult, RoundRecordRow
from studies.models import Participant, StudySeat
from studies.study_types import OUTCOMES

Stage = Participant.Stage


def outcome_of(participant: Participant) -> str:
    """completed, screened_out, failed_quiz or dropped; "" while under way."""
    return participant.stage if participant.stage in OUTCOMES else ""


def outcome_at(participant: Participant) -> datetime | None:
    outcome = outcome_of(participant)
    when = participant.stage_times.get(outcome) if outcome else None
    return datetime.fromisoformat(when) if when else None


def _rounds(participant: Participant, seat: StudySeat) -> Any:
    """Their table's finished rounds that count for them: a drop-out's up to their drop."""
    rounds = RoundRecordRow.objects.filter(table__study_match__study_table=seat.study_table_id)
    if participant.stage == Stage.DROPPED and (until := outcome_at(participant)) is not None:
        rounds = rounds.filter(finished_at__lte=until)
    return rounds


def rounds_played(participant: Participant) -> int:
    """Rounds finished at their study table while they were there."""
    seat = StudySeat.objects.filter(participant=participant).first()
    return 0 if seat is None else _rounds(participant, seat).count()


def points_won(participant: Participant) -> int | None:
    """Their partnership's scores added up over their study table's matches:
    the final scores, or for a drop-out each match's score after its last
    round before they dropped; None while nothing is finished (or never seated)."""
    seat = StudySeat.objects.filter(participant=participant).first()
    if seat is None:
        return None
    column = "score_ns" if seat.position % 2 == 0 else "score_ew"
    if participant.stage != Stage.DROPPED:
        results = MatchResult.objects.filter(table__study_match__study_table=seat.study_table_id)
        scores = list(results.values_list(column, flat=True))
        return sum(scores) if scores else None
    last: dict[int, int] = {}  # table -> score after its last round that counts
    for table, score in (
        _rounds(participant, seat).order_by("round_number").values_list("table_id", column)
    ):
        last[table] = score
    return sum(last.values()) if last else None


def is_paid(participant: Participant, rule: Mapping[str, Any] | None) -> bool:
    """Whether their outcome earns the bonus under the study's ``[bonus]`` rule."""
    outcome = outcome_of(participant)
    if outcome == "completed":
        return True
    after = (rule or {}).get("partial_after_rounds")
    return outcome == "dropped" and after is not None and rounds_played(participant) >= after


def bonus_for(points: int, rule: Mapping[str, Any]) -> Decimal:
    """The study's bonus rule (``[bonus]``): per_point x max(points, 0), at
    most ``cap``, to the cent: never below zero."""
    amount = Decimal(str(rule["per_point"])) * max(points, 0)
    if rule.get("cap") is not None:
        amount = min(amount, Decimal(str(rule["cap"])))
    return amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
