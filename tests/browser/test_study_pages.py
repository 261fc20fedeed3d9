"""A participant's way in Chromium, on a phone-sized screen: consent, the
instructions, a wrong and a right quiz, and the waiting room, whose script
(under the Content-Security-Policy) updates the count and follows the stage.
axe-core finds no serious violation on any page, and nothing scrolls sideways."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from pytest_django.live_server_helper import LiveServer

from studies import participants, stages
from studies.models import Participant, Study
from tests.support.browser_checks import serious_violations, watch
from tests.support.study_browser import waiting_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LINK = "/study/partner-trust-pilot/?PROLIFIC_PID=browser0001&STUDY_ID=s1&SESSION_ID=x1"
Stage = Participant.Stage


@pytest.fixture
def phone(chromium: Browser) -> Iterator[Page]:
    context = chromium.new_context(viewport={"width": 360, "height": 740})
    try:
        yield context.new_page()
    finally:
        context.close()


def checked(page: Page) -> None:
    assert serious_violations(page) == [], page.url
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), page.url
    expect(page.get_by_role("heading", level=1)).to_have_count(1)


def a_waiting_participant(study: Study, raw_id: str) -> Participant:
    other = participants.consent(study, {"PROLIFIC_PID": raw_id})
    for expected, to in (
        (Stage.CONSENTED, Stage.INSTRUCTIONS),
        (Stage.INSTRUCTIONS, Stage.QUIZ),
        (Stage.QUIZ, Stage.WAITING),
    ):
        other = stages.move(other, expected, to)
    return other


def test_a_participant_on_a_phone(live_server: LiveServer, phone: Page, tmp_path: Path) -> None:
    study = waiting_study(tmp_path)
    problems = watch(phone)
    phone.goto(live_server.url + LINK)
    expect(phone.get_by_role("heading", level=1)).to_have_text("Information and consent")
    checked(phone)
    phone.get_by_role("button", name="I agree").click()
    expect(phone.get_by_role("heading", level=1)).to_have_text("Instructions")
    checked(phone)
    phone.get_by_role("button", name="Continue").click()
    expect(phone.get_by_role("heading", level=1)).to_have_text("A few questions about the game")
    checked(phone)
    phone.get_by_label("The player on your left").check()
    phone.get_by_label("Spades", exact=True).check()
    phone.get_by_label("50 points").check()
    phone.get_by_role("button", name="Check my answers").click()
    expect(phone.get_by_role("alert")).to_contain_text("question 1 was not answered right")
    checked(phone)
    phone.get_by_label("The player across the table").check()
    phone.get_by_label("Spades", exact=True).check()
    phone.get_by_label("50 points").check()
    phone.get_by_role("button", name="Check my answers").click()
    expect(phone.get_by_role("heading", level=1)).to_have_text("Waiting room")
    checked(phone)
    expect(phone.locator("#waiting-number")).to_have_text("1")

    me = Participant.objects.get(stage=Stage.WAITING)
    others = [a_waiting_participant(study, f"browser000{n}") for n in (2, 3, 4)]
    same = 1 + sum(o.condition_id == me.condition_id for o in others)
    expect(phone.locator("#waiting-number")).to_have_text(str(same), timeout=15_000)
    # Where the stage moves on, the page follows it.
    Participant.objects.filter(pk=me.pk).update(stage=Stage.DROPPED)
    expect(phone.get_by_role("heading", level=1)).to_have_text(
        "This session has ended", timeout=15_000
    )
    checked(phone)
    assert problems == []
