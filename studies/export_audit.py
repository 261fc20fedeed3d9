"""The study export's audit log (``audit.csv``, ``studies.export``): the
researcher's hand on the study, each entry with its reason, and never a raw
recruitment ID, which a reason typed by hand might quote."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from studies.export_files import TIME, ExportFile, col
from studies.models import AuditEntry, RecruitmentId, Study

AUDIT = ExportFile(
    "audit.csv",
    "The study's audit log: every hand a researcher laid on it, oldest first.",
    (
        col("at", TIME, "when"),
        col("action", "text", "what: " + ", ".join(AuditEntry.Action.values)),
        col(
            "participant",
            "text",
            "the participant's pseudonym (possibly one no longer exported: withdrawn, or a "
            "cleared pilot); empty: the study as a whole",
        ),
        col(
            "reason",
            "text",
            "the reason given; a recruitment ID on record is blanked out in it (a withdrawn "
            "participant's is not on record: never type one)",
        ),
        col("by", "text", "who did it (their login)"),
    ),
)

def audit_rows(study: Study) -> Iterator[dict[str, Any]]:
    # A reason is typed by hand and may quote a raw recruitment ID (a withdrawal
    # request's): those stay in payments.csv only.
    raw_ids = RecruitmentId.objects.filter(study=study).values_list("raw_id", flat=True)
    longest_first = sorted(set(raw_ids), key=len, reverse=True)  # none hides in a longer one
    for entry in AuditEntry.objects.filter(study=study).order_by("at", "pk"):
        reason = entry.reason
        for raw in longest_first:
            reason = reason.replace(raw, "[recruitment ID]")
        yield {
            "at": entry.at,
            "action": entry.action,
            "participant": entry.participant,
            "reason": reason,
            "by": entry.by,
        }
