"""The staff dashboard in Chromium: log in as staff, filter, and look at the charts."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from bots.tournament import TournamentConfig
from game.storage import store_tournament
from tests.server import analytics_fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_staff_dashboard_in_chromium(live_server: LiveServer, page: Page,
                                     screenshot_dir: Path) -> None:  # fmt: skip
    analytics_fixtures.build()  # human+bot and human+human rounds
    store_tournament(TournamentConfig(ns="RB+SRP", ew="MS+SRP", games=12, seed=7))
    get_user_model().objects.create_user("staffer", password="pw-staff-123", is_staff=True)

    page.goto(live_server.url + "/dashboard/")
    expect(page).to_have_url(live_server.url + "/accounts/login/?next=/dashboard/")
    page.fill("input[name=username]", "staffer")
    page.fill("input[name=password]", "pw-staff-123")
    page.locator("main form button[type=submit], main form input[type=submit]").first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Human-vs-bot dashboard")

    page.get_by_label("bot+bot").check()
    page.get_by_role("button", name="Apply filters").click()
    expect(page).to_have_url(live_server.url + "/dashboard/?date_from=&date_to=&rules=&makeup=BB")
    expect(page.locator("#dash-total")).to_contain_text("finished matches")
    expect(page.get_by_label("bot+bot")).to_be_checked()
    # Chart.js drew the three figures (a canvas it has sized is not 0x0).
    for canvas in ("chart-points-by-bid-sum", "chart-bid-sums", "chart-points-histogram"):
        box = page.locator(f"#{canvas}").bounding_box()
        assert box is not None and box["width"] > 200 and box["height"] > 200
    assert page.evaluate("typeof Chart") == "function"
    page.screenshot(path=str(screenshot_dir / "dashboard.png"), full_page=True)
