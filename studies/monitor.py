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

from django.utils import timezone

from game.models import Table
from game.moves.matches import load_match
from studies.models import Assignment, ConsentDeclined, Participant, Study, StudyTable

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


def _tables(study: Study) -> list[dict[str, Any]]:
    found = (
        StudyTable.objects.filter(study=study)
        .select_related("condition", "table")
        .prefetch_related("seats__participant")
        .order_by("-created_at")
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


def _people(people: list[Participant], stage: str, now: datetime) -> list[dict[str, Any]]:
    return [
        {
            "pseudonym": p.pseudonym,
            "condition": p.condition.name,
            "pilot": p.pilot,
            "seconds": _seconds_since(str(p.stage_times.get(stage, "")), now),
        }
        for p in people
        if p.stage == stage
    ]


def snapshot(study: Study) -> dict[str, Any]:
    """Everything the monitor shows of ``study``, JSON-ready."""
    now = timezone.now()
    conditions = [c.name for c in study.conditions.order_by("position")]
    people = list(
        Participant.objects.filter(study=study).select_related("condition").order_by("created_at")
    )
    by_stage = Counter(p.stage for p in people)
    by_stage_condition = Counter((p.stage, p.condition.name) for p in people)
    assigned = Counter(
        Assignment.objects.filter(study=study).values_list("condition__name", flat=True)
    )
    declined = ConsentDeclined.objects.filter(study=study).values_list("count", flat=True).first()
    data: dict[str, Any] = {
        "study": study.slug,
        "title": study.title,
        "pilot_study": study.pilot,
        "conditions": conditions,
        "participants": len(people),
        "pilots": sum(p.pilot for p in people),
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
        "waiting": _people(people, Stage.WAITING, now),
        "tables": _tables(study),
        "dropped": _people(people, Stage.DROPPED, now),
        "completed": by_stage[Stage.COMPLETED],
        "failed_quiz": by_stage[Stage.FAILED_QUIZ],
    }
    # What changed since a poll (waiting times aside, which always do).
    steady = {**data, "waiting": [w["pseudonym"] for w in data["waiting"]], "dropped": []}
    text = json.dumps(steady, sort_keys=True, default=str)
    data["digest"] = hashlib.sha256(text.encode()).hexdigest()[:16]
    data["at"] = now.isoformat()
    return data
