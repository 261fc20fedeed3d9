"""The staff's study monitor in Chromium, a study in progress: the counts, the
waiting room and a table by pseudonym, the export link, no raw recruitment
ID, no console error under the Content-Security-Policy (its polling script
runs), and a screenshot (artifacts/screenshots/study-monitor.png)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from studies.loading import load_study
from studies.models import Participant
from tests.studies.conftest import example_text
from tests.support.browser_checks import serious_violations, watch
from tests.support.study_tables import RAW, TWO, person, seated

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
Stage = Participant.Stage
CHEAP = "Random+Random"


def test_the_study_monitor_in_chromium(
    live_server: LiveServer, page: Page, screenshot_dir: Path, tmp_path: Path, settings
) -> None:
    settings.SPADES_BOT_DELAY = 0
    source = tmp_path / "study.toml"
    source.write_text(example_text().replace("BIS+SRP", CHEAP).replace("RB+SRP", CHEAP))
    study = load_study(source)[0]
    person(study, 1, Stage.INSTRUCTIONS)
    person(study, 2, Stage.QUIZ, TWO)
    person(study, 3, Stage.FAILED_QUIZ, TWO)
    waiting = person(study, 4, Stage.WAITING, TWO)
    person(study, 5, Stage.DROPPED)
    person(study, 6, Stage.COMPLETED)
    playing = seated(study, 7)
    assert playing.stage == Stage.PLAYING
    get_user_model().objects.create_user("staffer", password="pw-staff-123", is_staff=True)

    problems = watch(page)
    url = f"{live_server.url}/dashboard/studies/{study.slug}/"
    page.goto(url)
    page.fill("input[name=username]", "staffer")
    page.fill("input[name=password]", "pw-staff-123")
    page.locator("main form button[type=submit], main form input[type=submit]").first.click()
    expect(page).to_have_url(url)
    expect(page.get_by_role("heading", level=1)).to_have_text(study.title)
    expect(page.locator("#mon-summary")).to_contain_text("1 completed, 1 dropped out")
    expect(page.locator("#mon-waiting")).to_contain_text(waiting.pseudonym)
    expect(page.locator("#mon-tables")).to_contain_text(playing.pseudonym)
    expect(page.locator("#mon-tables a", has_text="watch")).to_have_count(1)
    expect(page.get_by_role("link", name="Download export (zip)")).to_be_visible()
    expect(page.locator("#mon-exports")).not_to_contain_text("with payments")
    assert RAW not in page.content()
    # The polling script fetched the JSON at least once without a console error.
    with page.expect_response(lambda r: "/state.json" in r.url, timeout=15000) as got:
        pass
    assert got.value.ok
    assert serious_violations(page) == []
    page.screenshot(path=str(screenshot_dir / "study-monitor.png"), full_page=True)
    assert problems == []
