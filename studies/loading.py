"""A study file into the database: ``manage.py load_study FILE``.

Loading again updates the study (by its slug) while nobody has taken part:
its conditions are replaced. Once a participant exists the study is frozen,
because changing conditions under running assignments would break the
pre-registered design. All in one transaction: an error changes nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from django.db import transaction

from studies import definition
from studies.models import Condition, Participant, Study


class StudyLoadError(ValueError):
    """A valid file that cannot be loaded now (the study already has participants)."""


def load_study(path: str | Path) -> tuple[Study, bool]:
    """The study of the file at ``path``, saved; and whether it is new.

    Raises ``definition.StudyFileError`` (every FILE:LINE problem) or
    :class:`StudyLoadError`, having changed nothing."""
    text = definition.read(path)
    parsed = definition.parse(text, str(path))
    with transaction.atomic():
        study = Study.objects.select_for_update().filter(slug=parsed.slug).first()
        created = study is None
        if study is not None and Participant.objects.filter(study=study).exists():
            raise StudyLoadError(
                f"{path}: study {parsed.slug!r} already has participants: it cannot change "
                "any more (give the changed study a new slug)"
            )
        study = study or Study(slug=parsed.slug)
        study.title = parsed.title
        study.source = text
        study.source_name = str(path)
        study.definition = parsed.to_json()
        study.definition_hash = hashlib.sha256(text.encode()).hexdigest()
        study.seed = parsed.seed
        study.pilot = parsed.pilot
        study.save()
        # No participant means no assignment either: the conditions may go.
        Condition.objects.filter(study=study).delete()
        Condition.objects.bulk_create(
            Condition(
                study=study,
                name=c.name,
                position=position,
                seat_plan=list(c.seat_plan.seats),
                disclosure=c.disclosure,
                places=c.places,
            )
            for position, c in enumerate(parsed.conditions)
        )
    return study, created
