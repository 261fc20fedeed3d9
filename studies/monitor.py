"""A study as it runs, for the staff monitor (``studies.monitor_views``).

Participants are named by pseudonym only: nothing here reads
:class:`~studies.models.RecruitmentId`, so no raw recruitment ID can reach
the monitor's page or its JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from datetime import datetime
from typing import Any

from django.db.models import Count
from django.utils import timezone

from game.models import Table
from game.moves.matches import load_match
from studies.models import (
    Assignment,
    AuditEntry,
    ConsentDeclined,
    Participant,
    Study,
    StudyTable,
)

Stage = Participant.Stage
SEAT_LETTERS = ("N", "E", "S", "W")
OUT_STAGES = (Stage.DROPPED, Stage.COMPLETED, Stage.FAILED_QUIZ)


def _seconds_since(iso: str, now: datetime) -> int | None:
    try:
        then = datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return None
    return max(0, int((now - then).total_seconds()))


def _match_of(table: Table) -> dict[str, Any]:
    """The match's score (N-S, E-W) and round, read from its log."""
    if table.status not in (Table.Status.PLAYING, Table.Status.FINISHED):
        return {"score_ns": None, "score_ew": None, "round": None}
    match = load_match(table)
    return {
        "score_ns": int(match.scores[0]),
        "score_ew": int(match.scores[1]),
        "round": None if match.is_over else match.round.round_number,
    }


# Rows a monitor page lists of each kind; the counts above them are of all.
PAGE_SIZE = 25


def _tables(study: Study, page: int) -> list[dict[str, Any]]:
    """The study's tables, newest first, one page of them: each listed table's
    score is read from its log, so the page, not the study, sets the cost."""
    first = (page - 1) * PAGE_SIZE
    found = (
        StudyTable.objects.filter(study=study)
        .select_related("condition", "table")
        .prefetch_related("seats__participant")
        .order_by("-created_at", "-pk")[first : first + PAGE_SIZE]
    )
    out = []
    for st in found:
        table = st.table
        out.append(
            {
                "table": table.public_id,
                "condition": st.condition.name,
                "status": table.status,
                "seats": [
                    {
                        "seat": SEAT_LETTERS[s.position],
                        "pseudonym": s.participant.pseudonym,
                        "pilot": s.participant.pilot,
                        "dropped": s.dropped,
                    }
                    for s in st.seats.all()
                ],
                "stand_ins": st.filled_by_stand_in,
                **_match_of(table),
            }
        )
    return out


def _people(study: Study, stage: str, now: datetime, newest: bool) -> list[dict[str, Any]]:
    """One page of the study's participants at ``stage`` (the longest there
    first, or with ``newest`` the latest)."""
    order = "-updated_at" if newest else "updated_at"
    found = (
        Participant.objects.filter(study=study, stage=stage)
        .select_related("condition")
        .order_by(order, "pk")[:PAGE_SIZE]
    )
    return [
        {
            "pseudonym": p.pseudonym,
            "condition": p.condition.name,
            "pilot": p.pilot,
            "seconds": _seconds_since(str(p.stage_times.get(stage, "")), now),
        }
        for p in found
    ]


def snapshot(study: Study, page: int = 1) -> dict[str, Any]:
    """Everything the monitor shows of ``study``, JSON-ready: every count, and
    ``page`` of the tables (each list at most :data:`PAGE_SIZE` long), in a
    fixed number of queries however many take part."""
    now = timezone.now()
    conditions = [c.name for c in study.conditions.order_by("position")]
    counted = (
        Participant.objects.filter(study=study)
        .values_list("stage", "condition__name", "pilot")
        .annotate(n=Count("pk"))
    )
    by_stage: Counter[str] = Counter()
    by_stage_condition: Counter[tuple[str, str]] = Counter()
    pilots = 0
    for stage, condition, pilot, n in counted:
        by_stage[stage] += n
        by_stage_condition[(stage, condition)] += n
        pilots += n if pilot else 0
    assigned = Counter(
        dict(
            Assignment.objects.filter(study=study)
            .values_list("condition__name")
            .annotate(n=Count("pk"))
        )
    )
    declined = ConsentDeclined.objects.filter(study=study).values_list("count", flat=True).first()
    tables_total = StudyTable.objects.filter(study=study).count()
    pages = max(1, -(-tables_total // PAGE_SIZE))
    page = min(max(1, page), pages)
    data: dict[str, Any] = {
        "study": study.slug,
        "title": study.title,
        "pilot_study": study.pilot,
        "conditions": conditions,
        "participants": sum(by_stage.values()),
        "pilots": pilots,
        "stages": [
            {
                "stage": stage,
                "label": label,
                "count": by_stage[stage],
                "by_condition": [by_stage_condition[(stage, c)] for c in conditions],
            }
            for stage, label in Stage.choices
        ],
        "assigned": [{"condition": c, "count": assigned[c]} for c in conditions],
        "declined": declined or 0,
        "waiting": _people(study, Stage.WAITING, now, newest=False),
        "waiting_total": by_stage[Stage.WAITING],
        "tables": _tables(study, page),
        "tables_total": tables_total,
        "page": page,
        "pages": pages,
        "dropped": _people(study, Stage.DROPPED, now, newest=True),
        "dropped_total": by_stage[Stage.DROPPED],
        "completed": by_stage[Stage.COMPLETED],
        "failed_quiz": by_stage[Stage.FAILED_QUIZ],
        "screened_out": by_stage[Stage.SCREENED_OUT],
        "intake": study.intake,
        "audit": [
            {"at": e.at.isoformat(timespec="seconds"), "action": e.get_action_display(),
             "participant": e.participant, "by": e.by, "reason": e.reason}
            for e in AuditEntry.objects.filter(study=study).order_by("-at", "-pk")[:PAGE_SIZE]
        ],  # fmt: skip
    }
    # What changed since a poll (waiting times aside, which always do).
    steady = {**data, "waiting": [w["pseudonym"] for w in data["waiting"]], "dropped": []}
    text = json.dumps(steady, sort_keys=True, default=str)
    data["digest"] = hashlib.sha256(text.encode()).hexdigest()[:16]
    data["at"] = now.isoformat()
    return data
