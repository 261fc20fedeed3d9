"""The studies as the staff dashboard's filters name them
(``game.research.study_keys``, registered by the app config)."""

from __future__ import annotations

from game.research.study_keys import StudyChoice
from studies.models import Condition, Study


def choices() -> list[StudyChoice]:
    by_study: dict[int, list[tuple[int, str]]] = {}
    for c in Condition.objects.order_by("study", "position").values("pk", "study_id", "name"):
        by_study.setdefault(c["study_id"], []).append((c["pk"], c["name"]))
    return [
        StudyChoice(s.slug, s.title, s.pilot, tuple(by_study.get(s.pk, ())))
        for s in Study.objects.order_by("slug").only("pk", "slug", "title", "pilot")
    ]
