"""docs/studies.md's piloting procedure, step by step: a pilot study's run,
``reset_study --pilot``, then the real run's file (``pilot = false``) loaded
over it and its participants counted as the study's."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from studies import participants
from studies.export import export_study
from studies.loading import load_study
from studies.models import Participant, Study
from tests.studies.conftest import example_text
from tests.support.study_export import rows_of

PILOT_LINE = "pilot = true "


@pytest.mark.django_db
def test_a_pilot_run_is_cleared_and_the_real_run_starts_from_the_first_slot(
    study_file: Any, tmp_path: Path
) -> None:
    assert PILOT_LINE in example_text()
    pilot: Study = load_study(study_file())[0]
    assert pilot.pilot
    tried = participants.consent(pilot, {"PROLIFIC_PID": "RAWPILOT1"})
    assert Participant.objects.get(pk=tried.pk).pilot
    call_command("reset_study", pilot.slug, "--pilot", "--by", "ana", stdout=io.StringIO())
    assert not Participant.objects.filter(study=pilot).exists()

    # The real run: the same file, but for its one line, loaded over the pilot.
    real_text = example_text().replace(PILOT_LINE, "pilot = false")
    study, created = load_study(study_file(real_text))
    assert not created and study.pk == pilot.pk and not study.pilot
    assert study.definition_hash == hashlib.sha256(real_text.encode()).hexdigest()
    first = participants.consent(study, {"PROLIFIC_PID": "RAWREAL1"})
    assert not first.pilot and first.assignment.sequence == 0
    export_study(study, tmp_path)  # pilots left out: the real participant only
    assert [r["pseudonym"] for r in rows_of(tmp_path / "participants.csv")] == [first.pseudonym]
    assert (tmp_path / "study.toml").read_text() == real_text
