"""axe-core (vendored by the axe-playwright-python dev dependency) finds no
serious or critical accessibility violation on the lobby, the table and the
staff dashboard."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from tests.support import analytics_fixtures
from tests.support.browser_checks import serious_violations

pytestmark = pytest.mark.browser


def test_the_lobby_and_the_table(daphne_server: str, new_page: Callable[..., Page]) -> None:
    page = new_page()
    page.goto(daphne_server + "/")
    assert serious_violations(page) == []
    page.fill("#id_play_name", "Reading Rae")
    page.get_by_role("button", name="Play now").click()
    expect(page).to_have_url(re.compile(r"/t/[\w-]+/$"))
    expect(page.locator(".bid-panel .bid-btn").first).to_be_visible(timeout=20_000)
    expect(page.get_by_role("heading", level=1)).to_have_count(1)
    assert serious_violations(page) == []
    page.locator(".bid-panel .bid-btn", has_text=re.compile(r"^3$")).click()
    legal = page.locator("#hand .card.legal")
    expect(legal.first).to_be_visible(timeout=20_000)
    assert serious_violations(page) == []
    # Each card is read once by name; cards that cannot be played say so.
    hand = page.get_by_role("group", name="Your hand")
    names = [b.get_attribute("aria-label") for b in hand.get_by_role("button").all()]
    assert len(names) == 13 and all(re.fullmatch(r"\w+ of (clubs|diamonds|hearts|spades)", n or "")
                                    for n in names), names  # fmt: skip
    illegal = page.locator("#hand .card.illegal")
    assert all(c.get_attribute("aria-disabled") == "true" for c in illegal.all())
    # Keyboard play: Enter plays the focused card, and focus stays in the hand.
    legal.first.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#hand .card")).to_have_count(12, timeout=15_000)
    page.wait_for_timeout(300)
    assert page.evaluate("document.getElementById('hand').contains(document.activeElement)")


@pytest.mark.django_db(transaction=True)
def test_the_dashboard(live_server: LiveServer, page: Page) -> None:
    analytics_fixtures.build()
    get_user_model().objects.create_user("staffer", password="pw-staff-123", is_staff=True)
    page.goto(live_server.url + "/accounts/login/?next=/dashboard/")
    assert serious_violations(page) == []
    page.fill("input[name=username]", "staffer")
    page.fill("input[name=password]", "pw-staff-123")
    page.locator("main form button[type=submit], main form input[type=submit]").first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Human-vs-bot dashboard")
    assert serious_violations(page) == []
