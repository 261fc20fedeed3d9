"""``payments.csv`` and ``bulk_bonus.csv`` of a study's export (``--with-payments``):
the only files with the raw recruitment ID, needed to pay people. The bonus
follows each participant's outcome (``studies.outcomes``); Prolific's bulk
bonus takes ``ID,amount`` lines with no header, amounts above zero only."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from game.research import round_rows
from studies import outcomes
from studies.export_files import BOOL, PSEUDONYM, TIME, ExportFile, col
from studies.models import Participant, RecruitmentId, Study

PAYMENTS = ExportFile(
    "payments.csv",
    "For paying participants: with bulk_bonus.csv, the only files with the raw recruitment "
    "ID. Keep them apart. The bonus is paid only for a paid outcome (completed; and dropped "
    "after the file's `partial_after_rounds`, if it gives them): per_point x max(points, 0), "
    "capped, rounded to 0.01, never below zero. `points` are the participant's "
    "partnership's scores added up over the study's matches (a drop-out's: each match's "
    "score after the last round before they dropped), empty until a round is finished.",
    (
        PSEUDONYM,
        col("recruitment_id", "text", "the raw recruitment ID (e.g. PROLIFIC_PID)"),
        col("outcome", "text", "completed, screened_out, failed_quiz or dropped; empty: under way"),
        col("outcome_at", TIME, "when they reached the outcome"),
        col("completed", BOOL, "reached the completion page"),
        col("completion_code", "text", "the code of their outcome (empty: none)"),
        col("rounds_played", "integer", "rounds finished while they were at the table", "rounds"),
        col("points", "integer", "points the partnership won; empty: not known", "points"),
        col("paid", BOOL, "their outcome earns the bonus"),
        col(
            "bonus",
            "decimal",
            "the bonus to pay (0.00: the outcome is not paid); empty: not known or no rule",
            "currency",
        ),
        col("currency", "text", "the bonus's currency (ISO 4217); empty: no bonus rule"),
    ),
)
BULK_BONUS = ExportFile(
    "bulk_bonus.csv",
    "Prolific's bulk bonus file (Submissions, Bulk bonus payments: paste it): no header, "
    "one line `ID,amount` per participant whose paid bonus is above zero, in the study's "
    "currency. Raw recruitment IDs: keep it with payments.csv.",
    (
        col("recruitment_id", "text", "the raw recruitment ID"),
        col("amount", "decimal", "the bonus, above zero", "currency"),
    ),
    header=False,
)


def payment_rows(study: Study, people: list[Participant]) -> Iterator[dict[str, Any]]:
    """One row per participant: their outcome, its code, and the bonus only
    where the outcome is paid (``studies.outcomes``)."""
    round_rows.record_pending()  # rounds that ended a moment ago count for the pay
    raw_ids = dict(
        RecruitmentId.objects.filter(participant__in=people).values_list("participant_id", "raw_id")
    )
    completion = study.definition["completion"]
    rule = study.definition.get("bonus")
    for p in people:
        outcome = outcomes.outcome_of(p)
        code = completion["code"] if outcome == "completed" else ""
        code = code or (completion.get("codes") or {}).get(outcome, "")
        points = outcomes.points_won(p)
        paid = outcomes.is_paid(p, rule)
        if not rule:
            bonus = None
        elif not paid:
            bonus = Decimal("0.00")  # known: this outcome earns none
        else:
            bonus = outcomes.bonus_for(points, rule) if points is not None else None
        yield {
            "pseudonym": p.pseudonym,
            "recruitment_id": raw_ids.get(p.pk, ""),
            "outcome": outcome,
            "outcome_at": outcomes.outcome_at(p),
            "completed": outcome == "completed",
            "completion_code": code,
            "rounds_played": outcomes.rounds_played(p),
            "points": points,
            "paid": paid,
            "bonus": bonus,
            "currency": rule["currency"] if rule else "",
        }


def bulk_bonus_rows(payments: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """Prolific's bulk bonus (``ID,amount``): the paid, positive bonuses only."""
    for row in payments:
        if row["paid"] and row["bonus"] and row["bonus"] > 0 and row["recruitment_id"]:
            yield {"recruitment_id": row["recruitment_id"], "amount": row["bonus"]}
