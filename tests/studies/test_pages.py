"""A participant's pages over HTTP: the link, consent or refusal, instructions,
the quiz and the waiting room; refusals that change nothing; and the raw
recruitment ID in no page, header, log line or session."""

from __future__ import annotations

import json
import logging

import pytest
from django.apps import apps
from django.contrib.sessions.models import Session
from django.core import serializers
from django.test import Client

from studies import participants, stages
from studies.loading import load_study
from studies.models import ConsentDeclined, Participant, Study
from studies.views import SESSION_KEY
from tests.studies.conftest import example_text
from tests.support.study_pages import (
    ALL_PARTICIPANTS,
    PARAMS,
    RAW_ID,
    RIGHT,
    SLUG,
    answer,
    at_quiz,
    consented,
    everything_said,
    link,
    page,
)

pytestmark = pytest.mark.django_db

Stage = Participant.Stage


@pytest.fixture
def study(study_file) -> Study:
    """The example with four participant seats in each condition: the few
    participants of these tests wait, and no table is formed
    (tests/studies/test_tables.py tests that)."""
    text = example_text()
    for line in [line for line in text.splitlines() if line.startswith("seats = ")]:
        text = text.replace(line, ALL_PARTICIPANTS)
    return load_study(study_file(text))[0]


def stored_rows() -> int:
    models = [*apps.get_app_config("studies").get_models(), Session]
    return sum(m.objects.count() for m in models)


def test_the_whole_way_for_one_participant(study: Study, client: Client) -> None:
    consent = client.get(link())
    assert consent.status_code == 200 and "Information and consent" in consent.content.decode()
    assert "You are invited to take part in a research study" in consent.content.decode()
    # No action: the form posts back to the link, whose ID the page never holds.
    assert '<form method="post" class="study-choices">' in consent.content.decode()
    assert "csrfmiddlewaretoken" in consent.content.decode()
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
    # The right answer (question 2's) stays chosen; the wrong ones are asked again.
    assert again.count("checked") == 1 and 'id="q2-1" name="q2" value="1" required checked' in again
    assert Participant.objects.get().quiz_attempts == 1

    passed = answer(client, RIGHT, attempt=1)
    assert passed["Location"] == page("waiting")
    waiting = client.get(page("waiting")).content.decode()
    assert 'id="waiting-number">1<' in waiting and "/static/js/study_waiting.js" in waiting
    assert "not shown to you" in waiting
    assert participant.condition.name not in waiting

    state = client.get(page("state"))
    assert state.status_code == 200 and state["Content-Type"] == "application/json"
    assert json.loads(state.content) == {
        "stage": "waiting",
        "waiting": 1,
        "table": None,
        "page": page("waiting"),
    }

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
    assert 'href="https://app.prolific.com/submissions/complete?cc=NOCONSNT"' in end
    assert stored_rows() == before + 1 and ConsentDeclined.objects.get().count == 1
    assert not Participant.objects.exists() and SESSION_KEY not in client.session


def test_failing_the_quiz_ends_the_study_for_good(study: Study, client: Client) -> None:
    at_quiz(client)
    assert answer(client, {**RIGHT, "q2": "0"}, attempt=0)["Location"] == page("quiz") + "?wrong=2"
    assert answer(client, {**RIGHT, "q2": "2"}, attempt=1)["Location"] == page("end")
    end = client.get(page("end")).content.decode()
    assert "the study ends here for you. Please return your submission" in end  # the file's
    participant = Participant.objects.get()
    assert participant.stage == Stage.FAILED_QUIZ and "failed_quiz" in participant.stage_times
    # Never let back in: every page and the link itself lead to the same end.
    for url in (page("quiz"), page("instructions"), page("waiting"), link(), page("end")):
        response = client.get(url)
        assert response.status_code in (200, 302)
        assert response.status_code == 200 or response["Location"] == page("end")
    assert client.get(page("end")).content.decode() == end
    assert answer(client, RIGHT, attempt=2).status_code == 409
    assert Participant.objects.get().stage == Stage.FAILED_QUIZ
    assert json.loads(client.get(page("state")).content)["stage"] == "failed_quiz"


def test_an_incomplete_quiz_uses_no_attempt_and_keeps_the_choices(
    study: Study, client: Client
) -> None:
    at_quiz(client)
    response = answer(client, {"q1": "1", "q3": "7"}, attempt=0)
    text = response.content.decode()
    assert response.status_code == 200 and "questions 2, 3 have no answer" in text
    assert 'id="q1-1" name="q1" value="1" required checked' in text
    assert Participant.objects.get().quiz_attempts == 0


def test_a_reload_or_second_visit_resumes_and_never_makes_a_second_participant(
    study: Study, client: Client
) -> None:
    participant = at_quiz(client)
    for url in (link(), page("instructions"), page("waiting"), f"/study/{SLUG}/"):
        assert client.get(url)["Location"] == page("quiz")
    other_browser, second_tab = Client(), Client()
    assert other_browser.get(link())["Location"] == page("quiz")
    assert other_browser.session[SESSION_KEY] == {SLUG: participant.pseudonym}
    # A consent form left open in another tab: its "I agree" finds the same participant.
    second_tab.get(link())
    assert second_tab.post(link(), {"choice": "agree"})["Location"] == page("quiz")
    assert Participant.objects.count() == 1 and Participant.objects.get().stage == Stage.QUIZ


def test_an_unknown_study_is_a_clear_404(study: Study, client: Client) -> None:
    for url in (link(slug="no-such-study"), page("quiz", "no-such-study"), "/study/x%3Cb/"):
        response = client.get(url)
        assert response.status_code == 404
        assert "There is no such study" in response.content.decode()
    assert client.get(page("state", "no-such-study")).status_code == 403


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({}, "This link is missing your participant ID"),
        ({"STUDY_ID": "abc"}, "This link is missing your participant ID"),
        ({"PROLIFIC_PID": "a" * 65}, "Your participant ID in this link is longer than 64"),
        ({"PROLIFIC_PID": "ab<script>cd"}, "participant ID in this link may hold letters"),
        ({"PROLIFIC_PID": "abc", "SESSION_ID": "x/y"}, "session ID in this link may hold letters"),
    ],
)
def test_a_bad_recruitment_id_is_a_clear_400_that_stores_nothing(
    study: Study, client: Client, params: dict[str, str], says: str
) -> None:
    before = stored_rows()
    for response in (client.get(link(params)), client.post(link(params), {"choice": "agree"})):
        text = response.content.decode()
        assert response.status_code == 400 and "This study link is not complete" in text
        assert says.lower() in text.lower() and "recruitment site" in text  # a next step
        assert "PROLIFIC_PID" not in text and "SESSION_ID" not in text  # no parameter names
        assert "aaaaaaaa" not in text and "script>cd" not in text and "x/y" not in text
    assert stored_rows() == before and not Participant.objects.exists()


def test_a_page_without_a_participant_in_the_session_asks_for_the_link(
    study: Study, client: Client
) -> None:
    for url in (page("instructions"), page("quiz"), page("waiting"), page("end")):
        response = client.get(url)
        assert response.status_code == 403 and "open the study from its link" in (
            response.content.decode()
        )
    assert client.post(page("quiz"), RIGHT).status_code == 403
    assert client.get(page("state")).status_code == 403
    assert not Participant.objects.exists()


def snapshot() -> tuple[object, ...]:
    p = Participant.objects.get()
    declined = ConsentDeclined.objects.filter().values_list("count", flat=True).first()
    return p.stage, dict(p.stage_times), p.quiz_attempts, declined


def test_an_out_of_order_or_replayed_post_is_refused_and_changes_nothing(
    study: Study, client: Client
) -> None:
    at_quiz(client)
    before = snapshot()
    refusals = [
        client.post(page("instructions")),  # Continue again, from the back button
        client.post(link(), {"choice": "decline"}),  # declining after agreeing
        answer(client, RIGHT, attempt=5),  # not the attempt shown
        client.post(page("quiz"), RIGHT),  # no attempt at all
    ]
    for response in refusals:
        text = response.content.decode()
        assert response.status_code == 409 and "Nothing was changed" in text
        assert f'href="{page("quiz")}"' in text
    assert snapshot() == before
    # The same answers sent twice (a double click) count once.
    assert answer(client, {**RIGHT, "q1": "0"}, attempt=0).status_code == 302
    assert answer(client, {**RIGHT, "q1": "0"}, attempt=0).status_code == 409
    assert Participant.objects.get().quiz_attempts == 1
    assert client.post(page("waiting")).status_code == 409  # no form there
    with pytest.raises(ValueError, match="no move from quiz to instructions"):
        stages.move(Participant.objects.get(), Stage.QUIZ, Stage.INSTRUCTIONS)


def test_the_waiting_count_is_of_the_participants_own_condition(
    study: Study, client: Client
) -> None:
    first = at_quiz(client)
    answer(client, RIGHT, attempt=0)
    # Four more arrivals, all waiting: the blocks of two conditions give the
    # first one's condition to two or three of the five.
    for n in range(4):
        other = participants.consent(study, {"PROLIFIC_PID": f"other{n}"})
        for expected, to in (
            (Stage.CONSENTED, Stage.INSTRUCTIONS),
            (Stage.INSTRUCTIONS, Stage.QUIZ),
            (Stage.QUIZ, Stage.WAITING),
        ):
            other = stages.move(other, expected, to)
    same = Participant.objects.filter(condition=first.condition, stage=Stage.WAITING).count()
    assert same in (2, 3) and Participant.objects.filter(stage=Stage.WAITING).count() == 5
    assert json.loads(client.get(page("state")).content)["waiting"] == same
    assert f'id="waiting-number">{same}<' in client.get(page("waiting")).content.decode()


def test_a_study_that_is_not_a_pilot_makes_no_pilot_participants(
    study_file, client: Client
) -> None:
    load_study(study_file(example_text().replace("pilot = true", "pilot = false")))
    assert not consented(client).pilot


def test_the_study_texts_are_escaped(study_file, client: Client) -> None:
    text = example_text().replace("You are invited", "<script>alert(1)</script> You are invited")
    load_study(study_file(text))
    consent = client.get(link()).content.decode()
    assert "<script>alert" not in consent and "&lt;script&gt;alert(1)&lt;/script&gt;" in consent


def test_the_raw_id_is_in_no_page_header_log_or_session(
    study: Study, caplog: pytest.LogCaptureFixture
) -> None:
    """Every page of the way, for a participant who passes, one who fails the
    quiz and one who declines, and the refusals: the raw IDs only in
    RecruitmentId."""
    secrets = (RAW_ID, PARAMS["SESSION_ID"], PARAMS["STUDY_ID"], "failer01", "decliner01")
    passer, failer, decliner = Client(), Client(), Client()
    said: list[str] = []
    with caplog.at_level(logging.DEBUG):
        steps = [
            (passer, "get", link(), {}),
            (passer, "post", link(), {"choice": "agree"}),
            (passer, "get", page("instructions"), {}),
            (passer, "post", page("instructions"), {}),
            (passer, "post", page("instructions"), {}),  # refused
            (passer, "get", page("quiz"), {}),
            (passer, "post", page("quiz"), {"q1": "0", "attempt": "0"}),  # incomplete
            (passer, "post", page("quiz"), {**RIGHT, "q1": "0", "attempt": "0"}),
            (passer, "get", page("quiz") + "?wrong=1", {}),
            (passer, "post", page("quiz"), {**RIGHT, "attempt": "1"}),
            (passer, "get", page("waiting"), {}),
            (passer, "get", page("state"), {}),
            (passer, "get", link(), {}),
            (passer, "post", link(), {"choice": "decline"}),  # refused
            (passer, "get", link({"PROLIFIC_PID": RAW_ID + "!"}), {}),  # 400
            (failer, "post", link({**PARAMS, "PROLIFIC_PID": "failer01"}), {"choice": "agree"}),
            (failer, "get", page("instructions"), {}),
            (failer, "post", page("instructions"), {}),
            (failer, "post", page("quiz"), {**RIGHT, "q2": "0", "attempt": "0"}),
            (failer, "post", page("quiz"), {**RIGHT, "q2": "0", "attempt": "1"}),
            (failer, "get", page("end"), {}),
            (failer, "get", page("state"), {}),
            (decliner, "get", link({"PROLIFIC_PID": "decliner01"}), {}),
            (decliner, "post", link({"PROLIFIC_PID": "decliner01"}), {"choice": "decline"}),
            (decliner, "get", page("declined"), {}),
            (decliner, "get", page("quiz"), {}),  # 403
            (decliner, "get", link({"PROLIFIC_PID": "decliner01"}, slug="nope"), {}),  # 404
        ]
        for client, method, url, data in steps:
            said.append(everything_said(getattr(client, method)(url, data)))
    assert Participant.objects.count() == 2 and ConsentDeclined.objects.get().count == 1
    assert {p.stage for p in Participant.objects.all()} == {Stage.WAITING, Stage.FAILED_QUIZ}
    for secret in secrets:
        assert not [text for text in said if secret in text], secret
        assert secret not in caplog.text
    for session in Session.objects.all():
        decoded = json.dumps(session.get_decoded())
        assert not [s for s in secrets if s in decoded], decoded
    found: dict[str, set[str]] = {}
    for model in apps.get_models():
        for row in model._default_manager.all():
            dumped = serializers.serialize("json", [row])
            for secret in secrets:
                if secret in dumped:
                    found.setdefault(model.__name__, set()).add(secret)
    assert set(found) == {"RecruitmentId"} and "decliner01" not in found["RecruitmentId"]
    assert "Bad Request: /study/partner-trust-pilot/" in caplog.text  # logged, without the query
    pseudonyms = {p.pseudonym for p in Participant.objects.all()}
    assert all(p in caplog.text for p in pseudonyms)


def test_without_the_optional_texts_the_site_says_its_own(study_file, client: Client) -> None:
    text = example_text()
    text = text[: text.index("failure_text")] + text[text.index("[[quiz.questions]]") :]
    text = "\n".join(line for line in text.splitlines() if "no_consent_url" not in line)
    load_study(study_file(text))
    client.post(link({"PROLIFIC_PID": "other01"}), {"choice": "decline"})
    declined = client.get(page("declined")).content.decode()
    assert "return your submission there" in declined and "NOCONSNT" not in declined
    at_quiz(client)
    answer(client, {**RIGHT, "q1": "0"}, attempt=0)
    answer(client, {**RIGHT, "q1": "0"}, attempt=1)
    assert "so this study ends here" in client.get(page("end")).content.decode()


def test_a_study_without_a_quiz_goes_from_the_instructions_to_the_waiting_room(
    study_file, client: Client
) -> None:
    text = example_text()
    load_study(study_file(text[: text.index("[quiz]")] + text[text.index("[[questionnaire") :]))
    consented(client)
    instructions = client.get(page("instructions")).content.decode()
    assert "Next: a few questions" not in instructions
    assert client.post(page("instructions"))["Location"] == page("waiting")
    assert client.get(page("quiz"))["Location"] == page("waiting")
    assert list(Participant.objects.get().stage_times) == ["consented", "instructions", "waiting"]


def test_consent_without_the_csrf_token_is_refused(study: Study) -> None:
    strict = Client(enforce_csrf_checks=True)
    strict.get(link())
    assert strict.post(link(), {"choice": "agree"}).status_code == 403
    assert not Participant.objects.exists()
