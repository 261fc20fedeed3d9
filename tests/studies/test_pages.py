"""A participant's pages over HTTP: the link, consent or refusal, instructions,
the quiz and the waiting room; refusals that change nothing; and the raw
recruitment ID in no page, header, log line or session."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from django.apps import apps
from django.contrib.sessions.models import Session
from django.http import HttpResponse
from django.test import Client

from studies.models import ConsentDeclined, Participant, Study
from studies.views import SESSION_KEY

pytestmark = pytest.mark.django_db

RAW_ID = "5f1a9c3e7b2d4e6f80a1b2c3"
PARAMS = {"PROLIFIC_PID": RAW_ID, "STUDY_ID": "study77aa", "SESSION_ID": "sess42bb"}
SLUG = "partner-trust-pilot"
RIGHT = {"q1": "1", "q2": "1", "q3": "1"}  # the example's answers, by option number
Stage = Participant.Stage


def link(params: dict[str, str] | None = None, slug: str = SLUG) -> str:
    return f"/study/{slug}/?{urlencode(PARAMS if params is None else params)}"


def page(name: str, slug: str = SLUG) -> str:
    return f"/study/{slug}/{name}/"


def stored_rows() -> int:
    models = [*apps.get_app_config("studies").get_models(), Session]
    return sum(m.objects.count() for m in models)


def consented(client: Client) -> Participant:
    response = client.post(link(), {"choice": "agree"})
    assert response.status_code == 302 and response["Location"] == page("instructions")
    return Participant.objects.get()


def at_quiz(client: Client) -> Participant:
    consented(client)
    client.get(page("instructions"))
    assert client.post(page("instructions"))["Location"] == page("quiz")
    return Participant.objects.get()


def answer(client: Client, answers: dict[str, str], attempt: int) -> HttpResponse:
    return client.post(page("quiz"), {**answers, "attempt": str(attempt)})


def test_the_whole_way_for_one_participant(study: Study, client: Client) -> None:
    consent = client.get(link())
    assert consent.status_code == 200 and "Information and consent" in consent.content.decode()
    assert "You are invited to take part in a research study" in consent.content.decode()
    assert not Participant.objects.exists()

    participant = consented(client)
    assert client.session[SESSION_KEY] == {SLUG: participant.pseudonym}
    assert participant.pilot and participant.stage == Stage.CONSENTED

    instructions = client.get(page("instructions"))
    assert "Spades is played by four players" in instructions.content.decode()
    assert Participant.objects.get().stage == Stage.INSTRUCTIONS
    assert client.post(page("instructions"))["Location"] == page("quiz")

    quiz = client.get(page("quiz")).content.decode()
    assert "Question 3: What does a partnership score" in quiz and "2 attempts" in quiz
    wrong = answer(client, {**RIGHT, "q1": "0", "q3": "2"}, attempt=0)
    assert wrong["Location"] == page("quiz") + "?wrong=1,3"
    again = client.get(wrong["Location"]).content.decode()
    assert "questions 1, 3 were not answered right" in again and "1 attempt left" in again
    assert again.count("Not right yet") == 2
    assert Participant.objects.get().quiz_attempts == 1

    passed = answer(client, RIGHT, attempt=1)
    assert passed["Location"] == page("waiting")
    waiting = client.get(page("waiting")).content.decode()
    assert 'id="waiting-number">1<' in waiting and "/static/js/study_waiting.js" in waiting
    assert "not shown to you" in waiting
    assert participant.condition.name not in waiting

    state = client.get(page("state"))
    assert state.status_code == 200 and state["Content-Type"] == "application/json"
    assert json.loads(state.content) == {"stage": "waiting", "waiting": 1, "page": page("waiting")}

    participant.refresh_from_db()
    assert participant.stage == Stage.WAITING and participant.quiz_attempts == 2
    assert list(participant.stage_times) == ["consented", "instructions", "quiz", "waiting"]


def test_a_participant_who_declines_sees_an_end_page_and_only_a_count_is_kept(
    study: Study, client: Client
) -> None:
    client.get(link())
    before = stored_rows()
    response = client.post(link(), {"choice": "decline"})
    assert response.status_code == 302 and response["Location"] == page("declined")
    end = client.get(response["Location"]).content.decode()
    assert "nothing about you was stored" in end
    assert stored_rows() == before + 1 and ConsentDeclined.objects.get().count == 1
    assert not Participant.objects.exists() and SESSION_KEY not in client.session
