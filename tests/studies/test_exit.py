"""The way out over HTTP: the questionnaire (checked, stored, never twice), the
debrief only where the condition hid the bots, the completion page with its
code and redirect that nobody leaves again; the quiz's answers kept per
attempt; and the raw recruitment ID in none of these pages or log lines."""

from __future__ import annotations

import logging

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core import serializers
from django.test import Client

from studies import stages
from studies.definition import parse
from studies.loading import load_study
from studies.models import Answer, Participant, Study
from tests.studies.conftest import example_text
from tests.support.study_pages import (
    PARAMS,
    RAW_ID,
    RIGHT,
    answer,
    at_quiz,
    everything_said,
    link,
    page,
)

pytestmark = pytest.mark.django_db
Stage = Participant.Stage
GOOD = {
    "item-partner_trust": "4",
    "item-partner_skill": "5",
    "item-enjoyment": "1",
    "item-comments": "  Fun.\r\nMy partner bid well.  ",
}


def at_questionnaire(client: Client, condition: str | None = None) -> Participant:
    """A participant through the quiz, then (as the tables will) set to the
    questionnaire, in ``condition`` if named."""
    participant = at_quiz(client)
    answer(client, RIGHT, attempt=0)
    participant.refresh_from_db()
    if condition is not None:
        participant.condition = participant.study.conditions.get(name=condition)
    participant.move_to(Stage.PLAYING)
    participant.move_to(Stage.QUESTIONNAIRE)
    participant.save()
    return participant


def state_of() -> tuple[object, ...]:
    p = Participant.objects.get()
    return p.stage, dict(p.stage_times), Answer.objects.count()


def test_the_questionnaire_shows_accessible_items(study: Study, client: Client) -> None:
    at_questionnaire(client)
    assert client.get(page("waiting"))["Location"] == page("questionnaire")
    text = client.get(page("questionnaire")).content.decode()
    assert "<legend>1. I trusted my partner&#x27;s bids.</legend>" in text
    assert text.count('type="radio"') == 15 and text.count("Strongly agree") == 3
    assert 'id="item-partner_trust-1" name="item-partner_trust" value="1" required' in text
    assert '<label for="item-partner_trust-1">Strongly disagree</label>' in text
    assert '<label for="item-comments">4. Anything you would like' in text
    assert 'maxlength="1000" required' in text and "At most 1000 characters." in text


def test_the_questionnaire_stores_the_answers_and_moves_on(study: Study, client: Client) -> None:
    participant = at_questionnaire(client, "human-with-bot-partner")
    response = client.post(page("questionnaire"), GOOD)
    assert response.status_code == 302 and response["Location"] == page("completed")
    stored = {a.item_id: a.value for a in Answer.objects.filter(kind="questionnaire", attempt=None)}
    assert stored == {
        "partner_trust": "4",
        "partner_skill": "5",
        "enjoyment": "1",
        "comments": "Fun.\nMy partner bid well.",
    }
    participant.refresh_from_db()
    assert participant.stage == Stage.COMPLETED and "completed" in participant.stage_times
    assert "debrief" not in participant.stage_times
    # Sent again (a double click, the back button): refused, nothing more stored.
    again = client.post(page("questionnaire"), GOOD)
    assert again.status_code == 409 and "Nothing was changed" in again.content.decode()
    assert Answer.objects.filter(kind="questionnaire").count() == 4


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"item-partner_trust": "6"}, "Please choose one of the answers offered."),
        ({"item-partner_trust": "0"}, "Please choose one of the answers offered."),
        ({"item-enjoyment": "Agree"}, "Please choose one of the answers offered."),
        ({"item-partner_skill": ""}, "Please answer this question."),
        ({"item-comments": "   "}, "Please answer this question."),
        ({"item-comments": "x" * 1001}, "Please shorten this answer to 1000 characters"),
    ],
)
def test_a_wrong_questionnaire_is_shown_again_and_stores_nothing(
    study: Study, client: Client, change: dict[str, str], says: str
) -> None:
    at_questionnaire(client)
    before = state_of()
    response = client.post(page("questionnaire"), {**GOOD, **change})
    text = response.content.decode()
    assert response.status_code == 200 and says in text and "Nothing was saved yet" in text
    assert text.count('class="field-note"') == 1
    if "item-comments" not in change:  # the other answers are kept
        assert "My partner bid well.  </textarea>" in text
    if "item-partner_trust" not in change:
        assert 'name="item-partner_trust" value="4" required checked' in text
    assert state_of() == before


def test_a_text_answer_at_its_limit_is_taken_line_breaks_counted_once(
    study: Study, client: Client
) -> None:
    at_questionnaire(client)
    text = "a\r\n" * 499 + "aa"  # 1498 sent, 1000 once each break is one character
    assert client.post(page("questionnaire"), {**GOOD, "item-comments": text}).status_code == 302
    assert len(Answer.objects.get(item_id="comments").value) == 1000


def test_an_item_the_file_makes_optional_may_be_left_empty(study_file, client: Client) -> None:
    text = example_text().replace("max_length = 1000", "max_length = 1000\nrequired = false")
    assert [item.required for item in parse(text, "s.toml").questionnaire.items] == [
        True,
        True,
        True,
        False,
    ]
    load_study(study_file(text))
    at_questionnaire(client, "human-with-bot-partner")
    form = client.get(page("questionnaire")).content.decode()
    assert form.count("(optional)") == 1 and 'maxlength="1000" aria-describedby' in form
    response = client.post(page("questionnaire"), {**GOOD, "item-comments": " "})
    assert response.status_code == 302 and Participant.objects.get().stage == Stage.COMPLETED
    assert not Answer.objects.filter(item_id="comments").exists()
    assert Answer.objects.filter(kind="questionnaire").count() == 3


def test_hidden_bots_lead_to_the_debrief_then_the_completion(study: Study, client: Client) -> None:
    at_questionnaire(client, "two-humans")
    assert client.post(page("questionnaire"), GOOD)["Location"] == page("debrief")
    for url in (page("questionnaire"), page("completed"), link()):
        assert client.get(url)["Location"] == page("debrief")
    debrief = client.get(page("debrief")).content.decode()
    assert "your two opponents were computer programs (bots), not people." in debrief
    assert debrief.count("<p>") >= 2 and 'method="post"' in debrief
    assert client.post(page("debrief"))["Location"] == page("completed")
    participant = Participant.objects.get()
    assert participant.stage == Stage.COMPLETED
    assert list(participant.stage_times)[-3:] == ["questionnaire", "debrief", "completed"]


def test_a_debrief_text_is_escaped(study: Study, client: Client) -> None:
    at_questionnaire(client, "two-humans")
    definition = dict(study.definition)
    definition["conditions"][1]["debrief"] = "<b>Bots</b>\n\nsecond"
    Study.objects.filter(pk=study.pk).update(definition=definition)
    client.post(page("questionnaire"), GOOD)
    debrief = client.get(page("debrief")).content.decode()
    assert "<p>&lt;b&gt;Bots&lt;/b&gt;</p><p>second</p>" in debrief


def test_the_completion_page_shows_the_code_and_the_redirect_and_is_the_last(
    study: Study, client: Client
) -> None:
    at_questionnaire(client, "human-with-bot-partner")
    client.post(page("questionnaire"), GOOD)
    response = client.get(page("completed"))
    text = response.content.decode()
    assert response.status_code == 200 and '<code id="completion-code">C7XK2P9Q</code>' in text
    url = "https://app.prolific.com/submissions/complete?cc=C7XK2P9Q"
    assert f'id="completion-link" class="btn btn-gold btn-big" href="{url}"' in text
    assert "/static/js/study_completion.js" in text and "<script>" not in text
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert client.get(page("completed")).content.decode() == text  # a reload: the same
    before = state_of()
    for url in (page("instructions"), page("quiz"), page("waiting"), page("debrief"), link()):
        assert client.get(url)["Location"] == page("completed")
    refusals = [
        client.post(page("questionnaire"), GOOD),
        client.post(page("debrief")),
        client.post(page("instructions")),
        answer(client, RIGHT, attempt=1),
        client.post(link(), {"choice": "agree"}),
    ]
    assert [r.status_code for r in refusals[:4]] == [409] * 4
    assert refusals[4]["Location"] == page("completed")  # agreeing again finds them
    assert client.post(page("completed")).status_code == 405
    assert state_of() == before
    with pytest.raises(stages.OutOfOrder):
        stages.move(Participant.objects.get(), Stage.DEBRIEF, Stage.COMPLETED)


def test_each_quiz_attempt_is_stored_with_its_number(study: Study, client: Client) -> None:
    at_quiz(client)
    answer(client, {**RIGHT, "q2": "2"}, attempt=0)
    answer(client, {**RIGHT, "q2": "2"}, attempt=0)  # the double click: refused
    answer(client, RIGHT, attempt=1)
    rows = list(Answer.objects.filter(kind="quiz").values_list("attempt", "item_id", "value"))
    assert sorted(rows) == [
        (1, "q1", "The player across the table"),
        (1, "q2", "It changes every round"),
        (1, "q3", "50 points"),
        (2, "q1", "The player across the table"),
        (2, "q2", "Spades"),
        (2, "q3", "50 points"),
    ]
    assert Participant.objects.get().quiz_attempts == 2


def test_the_raw_id_is_in_none_of_the_way_outs_pages_or_logs(
    study: Study, caplog: pytest.LogCaptureFixture
) -> None:
    client = Client()
    secrets = (RAW_ID, PARAMS["SESSION_ID"], PARAMS["STUDY_ID"])
    with caplog.at_level(logging.DEBUG):
        at_questionnaire(client, "two-humans")
        said = [
            everything_said(response)
            for response in (
                client.get(page("questionnaire")),
                client.post(page("questionnaire"), {**GOOD, "item-enjoyment": "9"}),
                client.post(page("questionnaire"), GOOD),
                client.get(page("debrief")),
                client.post(page("debrief")),
                client.get(page("completed")),
                client.post(page("debrief")),  # refused
                client.get(link()),
            )
        ]
    assert Participant.objects.get().stage == Stage.COMPLETED
    for secret in secrets:
        assert not [text for text in said if secret in text], secret
        assert secret not in caplog.text
    holders = {
        model.__name__
        for model in apps.get_models()
        for row in model._default_manager.all()
        if any(s in serializers.serialize("json", [row]) for s in secrets)
    }
    assert holders == {"RecruitmentId"}


def test_the_admin_shows_a_participants_answers(study: Study, client: Client) -> None:
    participant = at_questionnaire(client, "human-with-bot-partner")
    client.post(page("questionnaire"), GOOD)
    staff = Client()
    staff.force_login(get_user_model().objects.create_superuser("staff", "s@example.org", "pw"))
    text = staff.get(f"/admin/studies/participant/{participant.pk}/change/").content.decode()
    assert "partner_trust" in text and "My partner bid well." in text
    assert RAW_ID not in text
