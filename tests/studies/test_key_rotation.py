"""The site's secret key rotated during a study (DJANGO_SECRET_KEY_FALLBACKS
holding the old one): a returning participant is found by their recruitment
ID, keeps their seat and is not taken for a drop-out; without the old key
among the fallbacks they would be strangers, which is why docs/studies.md
says to keep it there until the study ends."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client, override_settings
from django.utils import timezone

from game.models import Seat
from studies import participants, playing
from studies.models import (
    DroppedWhy,
    Participant,
    RecruitmentId,
    Study,
    StudySeat,
    keyed_hash,
)
from tests.support.inline import InlineScheduler
from tests.support.live_tables import live as live  # the fixture
from tests.support.study_pages import link

pytestmark = pytest.mark.django_db
NEW_KEY = "a-new-secret-key-after-rotation-" + "k" * 30
TIMEOUTS = {"dropout_missed_turns": 3, "dropout_absent_seconds": 120}
RAW = {"PROLIFIC_PID": "ROTATE0001", "STUDY_ID": "s", "SESSION_ID": "x"}


@pytest.fixture(autouse=True)
def bots_inline(live: InlineScheduler) -> InlineScheduler:
    return live


def seated(study: Study) -> tuple[Participant, StudySeat]:
    """A participant of the one-participant condition, seated at once."""
    from studies import stages, waiting_room

    p = participants.consent(study, RAW)
    p.condition = study.conditions.get(position=0)
    p.save()
    for expected, to in (
        (Participant.Stage.CONSENTED, Participant.Stage.INSTRUCTIONS),
        (Participant.Stage.INSTRUCTIONS, Participant.Stage.QUIZ),
        (Participant.Stage.QUIZ, Participant.Stage.WAITING),
    ):
        p = stages.move(p, expected, to)
    p = waiting_room.advance(p)
    assert p.stage == Participant.Stage.PLAYING
    return p, StudySeat.objects.select_related("study_table__table", "participant").get(
        participant=p
    )


def test_a_rotated_key_with_the_old_one_as_fallback_loses_no_participant(
    cheap_study: Study,
) -> None:
    old = settings.SECRET_KEY
    p, seat = seated(cheap_study)
    with override_settings(SECRET_KEY=NEW_KEY, SECRET_KEY_FALLBACKS=[old]):
        assert participants.find(cheap_study, RAW["PROLIFIC_PID"]) == p
        # Hashed again under the key in use: the old key may go once all are back.
        assert RecruitmentId.objects.get().key_hash == keyed_hash(cheap_study.slug,
                                                                  RAW["PROLIFIC_PID"])  # fmt: skip
        assert playing.dropped_why(seat, TIMEOUTS, timezone.now()) is None
        # A new browser, the same link: their page, then their own seat at the table.
        browser = Client()
        assert browser.get(link(RAW))["Location"] == f"/study/{cheap_study.slug}/table/"
        table_url = browser.get(f"/study/{cheap_study.slug}/table/")["Location"]
        assert table_url == playing.table_url(p)
        held = Seat.objects.get(table=seat.study_table.table, position=seat.position)
        assert browser.session["guest_id"] == held.guest_id
        assert browser.get(table_url).context["seat"] == seat.position
    with override_settings(SECRET_KEY=NEW_KEY, SECRET_KEY_FALLBACKS=[]):
        assert participants.find(cheap_study, RAW["PROLIFIC_PID"]) == p  # hashed again above


def test_a_rotation_without_the_old_key_would_make_strangers_of_them(cheap_study: Study) -> None:
    seated(cheap_study)
    with override_settings(SECRET_KEY=NEW_KEY, SECRET_KEY_FALLBACKS=[]):
        assert participants.find(cheap_study, RAW["PROLIFIC_PID"]) is None
        seat = StudySeat.objects.select_related("study_table__table", "participant").get()
        assert playing.dropped_why(seat, TIMEOUTS, timezone.now()) == DroppedWhy.LEFT
