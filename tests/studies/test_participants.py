"""Consent, refusal and privacy: nothing stored before consent, one participant
per recruitment ID, and the raw ID in ``RecruitmentId`` only."""

from __future__ import annotations

import logging

import pytest
from django.apps import apps
from django.contrib import admin
from django.core import serializers

from studies import participants
from studies.loading import load_study
from studies.models import (
    Assignment,
    ConsentDeclined,
    Participant,
    RecruitmentId,
    Study,
    keyed_hash,
)
from studies.participants import RecruitmentError
from tests.studies.conftest import example_text

pytestmark = pytest.mark.django_db

RAW_ID = "5f1a9c3e7b2d4e6f80a1b2c3"
PARAMS = {"PROLIFIC_PID": RAW_ID, "STUDY_ID": "study77aa", "SESSION_ID": "sess42bb"}


def stored_rows() -> int:
    return sum(m.objects.count() for m in apps.get_app_config("studies").get_models())


def test_entering_stores_nothing_and_finds_nobody_before_consent(study: Study) -> None:
    before = stored_rows()
    assert participants.enter(study, PARAMS) is None
    assert stored_rows() == before


def test_consent_is_idempotent_for_a_second_tab_or_visit(study: Study) -> None:
    first = participants.consent(study, PARAMS)
    again = participants.consent(study, {"PROLIFIC_PID": RAW_ID})
    assert again.pk == first.pk and participants.enter(study, PARAMS) == first
    assert Participant.objects.count() == RecruitmentId.objects.count() == 1
    assert Assignment.objects.get().participant == first
    assert first.stage == Participant.Stage.CONSENTED and "consented" in first.stage_times
    assert first.pilot and first.pseudonym.startswith("p") and RAW_ID not in first.pseudonym


def test_the_same_id_in_another_study_is_another_participant(study: Study, study_file) -> None:
    other = load_study(study_file(example_text().replace("partner-trust-pilot", "other-one")))[0]
    a, b = participants.consent(study, PARAMS), participants.consent(other, PARAMS)
    assert a.pk != b.pk and a.pseudonym != b.pseudonym
    assert keyed_hash(study.slug, RAW_ID) != keyed_hash(other.slug, RAW_ID)


def test_declining_stores_only_a_count(study: Study) -> None:
    before = stored_rows()
    assert participants.decline(study) == 1 and participants.decline(study) == 2
    assert ConsentDeclined.objects.get(study=study).count == 2
    assert stored_rows() == before + 1  # the counter row, nothing about anyone
    assert not Participant.objects.exists()


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({}, "this link is missing your participant ID"),
        ({"PROLIFIC_PID": "   "}, "this link is missing your participant ID"),
        ({"PROLIFIC_PID": "a" * 65}, "longer than 64"),
        ({"PROLIFIC_PID": "abc;DROP TABLE"}, "letters, digits"),
        ({"PROLIFIC_PID": "abc", "SESSION_ID": "x/y"}, "your session ID in this link may hold"),
    ],
)
def test_a_bad_recruitment_id_is_refused_clearly_and_changes_nothing(
    study: Study, params: dict[str, str], says: str
) -> None:
    before = stored_rows()
    with pytest.raises(RecruitmentError, match=says) as caught:
        participants.consent(study, params)
    assert "DROP" not in str(caught.value)  # the message never repeats the ID
    assert stored_rows() == before


def test_the_raw_id_is_stored_in_recruitment_id_only(
    study: Study, caplog: pytest.LogCaptureFixture
) -> None:
    """Every row of every table, dumped through the ORM, after a consent and a
    refusal: the raw ID (and the platform's session ID) only in RecruitmentId."""
    with caplog.at_level(logging.DEBUG):
        participant = participants.consent(study, PARAMS)
        participants.consent(study, PARAMS)
        participants.decline(study)
    found = {}
    for model in apps.get_models():
        for row in model._default_manager.all():
            dumped = serializers.serialize("json", [row])
            for secret in (RAW_ID, PARAMS["SESSION_ID"]):
                if secret in dumped:
                    found.setdefault(model.__name__, set()).add(secret)
    assert found == {"RecruitmentId": {RAW_ID, PARAMS["SESSION_ID"]}}
    recruitment = RecruitmentId.objects.get()
    assert RAW_ID not in str(recruitment) + repr(recruitment) + repr(participant)
    assert RAW_ID not in repr(participants.read_params(study, PARAMS))
    assert RAW_ID not in caplog.text and participant.pseudonym in caplog.text


def test_the_admin_lists_no_raw_id() -> None:
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label == "studies":
            shown = [*model_admin.list_display, *model_admin.search_fields]
            assert not {"raw_id", "raw_session_id", "raw_study_id", "recruitment"} & set(shown)
    assert RecruitmentId not in admin.site._registry
