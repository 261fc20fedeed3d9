"""The researcher's hand on a running study (studies.intake and the monitor's
forms): the intake paused, opened and closed, places per condition, a
participant seated now, dropped or excluded, each with a reason in the audit
log; every refusal says why and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from game.models import Seat, Table
from studies import intake, participants, waiting_room
from studies.loading import load_study
from studies.models import AuditEntry, Participant, Study, StudySeat
from tests.studies.conftest import example_text
from tests.support.inline import InlineScheduler
from tests.support.live_tables import live as live  # the fixture
from tests.support.study_pages import link
from tests.support.study_tables import CHEAP

pytestmark = pytest.mark.django_db
Stage = Participant.Stage
ONE, TWO = 0, 1  # the example's conditions: one participant (S); two (N and S)


@pytest.fixture(autouse=True)
def bots_inline(live: InlineScheduler) -> InlineScheduler:
    return live


def arrive(study: Study, n: int) -> Participant:
    return participants.consent(study, {"PROLIFIC_PID": f"INTAKE{n:04d}"})


def waiting(study: Study, n: int, condition: int) -> Participant:
    p = arrive(study, n)
    p.condition = study.conditions.get(position=condition)
    p.move_to(Stage.WAITING)
    p.save()
    return p


def stored() -> tuple[int, int, int]:
    return (Participant.objects.count(), AuditEntry.objects.count(),
            Study.objects.filter(intake="open").count())  # fmt: skip


def test_a_paused_study_turns_newcomers_away_politely_and_keeps_its_participants(
    cheap_study: Study,
) -> None:
    known = Client()
    known.post(link(), {"choice": "agree"})
    intake.set_intake(cheap_study, "paused", "ada", "a bug in the quiz text")
    newcomer = Client()
    params = {"PROLIFIC_PID": "NEWCOMER1"}
    for answer in (newcomer.get(link(params)), newcomer.post(link(params), {"choice": "agree"})):
        assert answer.status_code == 503 and answer["Retry-After"]
        assert "paused for a moment" in answer.content.decode()
    assert Participant.objects.count() == 1  # nothing stored about the newcomer
    assert known.get(link()).status_code == 302  # the one who consented goes on
    intake.set_intake(cheap_study, "open", "ada", "fixed")
    assert newcomer.get(link(params)).status_code == 200  # the consent form again
    intake.set_intake(cheap_study, "closed", "ada", "all places filled")
    closed = newcomer.get(link(params))
    assert closed.status_code == 200 and "This study is closed" in closed.content.decode()
    actions = list(AuditEntry.objects.values_list("action", "by", "reason"))
    assert actions == [("pause", "ada", "a bug in the quiz text"), ("open", "ada", "fixed"),
                       ("close", "ada", "all places filled")]  # fmt: skip


@pytest.mark.parametrize(
    ("state", "says"),
    [("paused", "paused already"), ("shut", "open, paused or closed")],
)
def test_a_wrong_intake_change_is_refused_and_changes_nothing(
    cheap_study: Study, state: str, says: str
) -> None:
    intake.set_intake(cheap_study, "paused", "ada", "first")
    before = stored()
    with pytest.raises(intake.IntakeError, match=says):
        intake.set_intake(cheap_study, state, "ada", "again")
    assert stored() == before


def test_a_closed_study_does_not_open_again_and_a_reason_is_required(cheap_study: Study) -> None:
    with pytest.raises(intake.IntakeError, match="reason"):
        intake.set_intake(cheap_study, "closed", "ada", "   ")
    intake.set_intake(cheap_study, "closed", "ada", "done")
    with pytest.raises(intake.IntakeError, match="does not open again"):
        intake.set_intake(cheap_study, "open", "ada", "oops")
    assert Study.objects.get().intake == "closed"


def test_places_fill_a_condition_and_then_the_study(study_file: Any) -> None:
    text = example_text().replace("BIS+SRP", CHEAP).replace("RB+SRP", CHEAP)
    text = text.replace('disclosure = "bots"\nplaces = 150', 'disclosure = "bots"\nplaces = 1')
    text = text.replace('disclosure = "names"', 'disclosure = "names"\nplaces = 2')
    study = load_study(study_file(text))[0]
    conditions = [arrive(study, n).condition.position for n in range(3)]
    assert sorted(conditions) == [ONE, TWO, TWO]  # one place, then two
    newcomer = Client()
    answer = newcomer.post(link({"PROLIFIC_PID": "LATE0001"}), {"choice": "agree"})
    assert answer.status_code == 200 and "all the participants it needs" in answer.content.decode()
    assert Participant.objects.count() == 3


def test_a_waiting_participant_is_seated_now_with_the_stand_in(cheap_study: Study) -> None:
    p = waiting(cheap_study, 1, TWO)
    intake.advance(cheap_study, p.pseudonym, "ada", "waited long enough")
    p.refresh_from_db()
    assert p.stage == Stage.PLAYING
    seat = StudySeat.objects.get(participant=p)
    assert seat.study_table.filled_by_stand_in == 1
    with pytest.raises(intake.IntakeError, match="not waiting"):
        intake.advance(cheap_study, p.pseudonym, "ada", "again")
    with pytest.raises(intake.IntakeError, match="no participant"):
        intake.advance(cheap_study, "pnosuchone", "ada", "who?")
    assert AuditEntry.objects.filter(action="advance").count() == 1


def test_a_playing_participant_dropped_hands_the_seat_to_the_stand_in(cheap_study: Study) -> None:
    p = waiting_room.advance(waiting(cheap_study, 2, ONE))
    assert p.stage == Stage.PLAYING
    intake.drop(cheap_study, p.pseudonym, "ada", "left the lab")
    p.refresh_from_db()
    seat = StudySeat.objects.get(participant=p)
    assert p.stage == Stage.DROPPED and seat.dropped
    table = seat.study_table.table
    held = Seat.objects.get(table=table, position=seat.position)
    assert held.kind == Seat.Kind.BOT or table.status != Table.Status.PLAYING
    with pytest.raises(intake.IntakeError, match="not waiting or playing"):
        intake.drop(cheap_study, p.pseudonym, "ada", "twice")


def test_an_excluded_participant_is_flagged_once(cheap_study: Study) -> None:
    p = arrive(cheap_study, 3)
    intake.exclude(cheap_study, p.pseudonym, "ada", "answered the quiz for a friend")
    with pytest.raises(intake.IntakeError, match="excluded already"):
        intake.exclude(cheap_study, p.pseudonym, "ada", "again")
    assert Participant.objects.get().excluded
    assert AuditEntry.objects.get().participant == p.pseudonym


def test_the_monitor_acts_for_staff_only_with_a_reason(cheap_study: Study) -> None:
    url = reverse("study_monitor:act", args=[cheap_study.slug])
    outsider = Client()
    assert outsider.post(url, {"op": "pause", "reason": "x"}).status_code in (302, 403)
    assert Study.objects.get().intake == "open"
    staff = get_user_model().objects.create_user("ada", password="x", is_staff=True)
    client = Client()
    client.force_login(staff)
    page = reverse("study_monitor:study", args=[cheap_study.slug])
    for form, state, says in (
        ({"op": "pause", "reason": ""}, "open", "give a reason"),
        ({"op": "melt", "reason": "x"}, "open", "not an action"),
        ({"op": "pause", "reason": "lunch"}, "paused", "Done: the study paused"),
        ({"op": "exclude", "pseudonym": "pnobody", "reason": "x"}, "paused", "no participant"),
    ):
        answer = client.post(url, form, follow=True)
        assert answer.redirect_chain[-1][0] == page
        assert says in answer.content.decode() and Study.objects.get().intake == state
    shown = client.get(page).content.decode()
    assert "Intake: <span id=\"mon-intake-state\">paused" in shown and "lunch" in shown


def test_a_conditions_own_instructions_are_shown_to_it(study_file: Any) -> None:
    text = example_text().replace(
        'disclosure = "names"', 'disclosure = "names"\ninstructions = "You sit North or South."'
    )
    study = load_study(study_file(text))[0]
    seen = set()
    for n in range(2):
        client = Client()
        client.post(link({"PROLIFIC_PID": f"INSTR{n}"}), {"choice": "agree"})
        page = client.get(reverse("studies:instructions", args=[study.slug])).content.decode()
        seen.add("You sit North or South." in page)
    assert seen == {True, False}  # the one condition's own, the other the study's
