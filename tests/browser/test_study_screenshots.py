"""Every page a study's participant can meet, on a laptop (1366x768) and on a
phone (360x740): a screenshot each in ``artifacts/screenshots/study-*``, for a
person to look at, and each checked as people meet it: one heading, nothing
scrolling sideways, no site link out of the study, no parameter name such as
PROLIFIC_PID, and the serious accessibility rules of axe-core. (The table
page's own screenshot is the end-to-end run's, over Daphne.)"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

import pytest
from django.db import OperationalError
from playwright.sync_api import Browser, Page, expect
from pytest_django.live_server_helper import LiveServer

from studies import intake
from studies.models import Participant, Study
from tests.support.browser_checks import serious_violations
from tests.support.study_browser import waiting_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

Stage = Participant.Stage
SLUG = "partner-trust-pilot"
SIZES = {"laptop": (1366, 768), "phone": (360, 740)}


def link(raw_id: str) -> str:
    return f"/study/{SLUG}/?PROLIFIC_PID={raw_id}&STUDY_ID=s1&SESSION_ID=x{raw_id}"


@pytest.fixture(params=sorted(SIZES))
def sized(request: pytest.FixtureRequest, chromium: Browser) -> Iterator[Callable[[], Page]]:
    """New pages (each its own cookies) of one size; the size's name on them."""
    width, height = SIZES[request.param]
    contexts = []

    def make() -> Page:
        context = chromium.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        page.size_name = request.param  # type: ignore[attr-defined]
        return page

    yield make
    for context in contexts:
        context.close()


def shot(page: Page, name: str, screenshot_dir: Path) -> None:
    expect(page.get_by_role("heading", level=1)).to_have_count(1)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), name
    assert page.locator("header a").count() == 0, f"{name}: a link out of the study"
    assert "PROLIFIC_PID" not in page.inner_text("body"), name
    assert serious_violations(page) == [], name
    size = page.size_name  # type: ignore[attr-defined]
    page.screenshot(path=str(screenshot_dir / f"study-{name}-{size}.png"), full_page=True)


def test_every_study_page_at_two_sizes(
    live_server: LiveServer, sized: Callable[[], Page], tmp_path: Path, screenshot_dir: Path
) -> None:
    waiting_study(tmp_path)
    url = live_server.url
    walker = sized()
    walker.goto(url + link("SHOTS0001"))
    shot(walker, "consent", screenshot_dir)
    walker.get_by_role("button", name="I agree").click()
    expect(walker.get_by_role("heading", level=1)).to_have_text("Instructions")
    shot(walker, "instructions", screenshot_dir)
    walker.get_by_role("button", name="Continue").click()
    shot(walker, "quiz", screenshot_dir)
    walker.get_by_label("The player on your left").check()
    walker.get_by_label("Spades", exact=True).check()
    walker.get_by_label("50 points").check()
    walker.get_by_role("button", name="Check my answers").click()
    expect(walker.get_by_role("alert")).to_contain_text("not answered right")
    shot(walker, "quiz-wrong", screenshot_dir)
    walker.get_by_label("The player across the table").check()
    walker.get_by_role("button", name="Check my answers").click()
    expect(walker.get_by_role("heading", level=1)).to_have_text("Waiting room")
    shot(walker, "waiting", screenshot_dir)

    # The way out, a participant at each of its stages (a session of their own).
    me = Participant.objects.get(stage=Stage.WAITING)
    Participant.objects.filter(pk=me.pk).update(stage=Stage.QUESTIONNAIRE)
    walker.goto(url + f"/study/{SLUG}/questionnaire/")
    shot(walker, "questionnaire", screenshot_dir)
    if me.condition.disclosure == "names":
        Participant.objects.filter(pk=me.pk).update(stage=Stage.DEBRIEF)
        walker.goto(url + f"/study/{SLUG}/debrief/")
        shot(walker, "debrief", screenshot_dir)
    Participant.objects.filter(pk=me.pk).update(stage=Stage.COMPLETED)
    walker.goto(url + f"/study/{SLUG}/completed/")
    shot(walker, "completion", screenshot_dir)
    Participant.objects.filter(pk=me.pk).update(stage=Stage.DROPPED)
    walker.goto(url + f"/study/{SLUG}/end/")
    shot(walker, "end-dropped", screenshot_dir)
    Participant.objects.filter(pk=me.pk).update(stage=Stage.FAILED_QUIZ)
    walker.goto(url + f"/study/{SLUG}/end/")
    shot(walker, "end-failed-quiz", screenshot_dir)

    # Refusals and the site's own troubles, each with a next step.
    newcomer = sized()
    newcomer.goto(url + f"/study/{SLUG}/?STUDY_ID=s1")
    shot(newcomer, "bad-link", screenshot_dir)
    newcomer.goto(url + link("SHOTS0002"))
    newcomer.get_by_role("button", name="I do not agree").click()
    shot(newcomer, "declined", screenshot_dir)
    with mock.patch("studies.participants.enter", side_effect=OperationalError("pool")):
        newcomer.goto(url + link("SHOTS0003"))
    shot(newcomer, "busy", screenshot_dir)
    for state, name in (("paused", "paused"), ("closed", "closed")):
        intake.set_intake(Study.objects.get(), state, "staff", "screenshots")
        newcomer.goto(url + link("SHOTS0004"))
        shot(newcomer, name, screenshot_dir)
    newcomer.goto(url + "/study/no-such-study/")
    shot(newcomer, "no-study", screenshot_dir)
    assert Participant.objects.count() == 1  # nobody turned away was stored
