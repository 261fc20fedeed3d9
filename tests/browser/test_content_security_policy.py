"""Every page runs under the Content-Security-Policy (spadesite/security.py)
with no console error: no inline script or style that the policy would block,
and the table's websocket allowed."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from pytest_django.live_server_helper import LiveServer

from spadesite.security import DEFAULT_POLICY
from tests.support import analytics_fixtures
from tests.support.browser_checks import watch

pytestmark = pytest.mark.browser


def _policy_of(page: Page, url: str) -> str:
    response = page.goto(url)
    assert response is not None and response.ok, url
    return response.headers.get("content-security-policy", "")


def test_the_playing_pages_pass_the_policy(
    daphne_server: str, new_page: Callable[..., Page]
) -> None:
    page = new_page()
    problems = watch(page)
    for path in ("/", "/tables/new/", "/accounts/login/", "/accounts/signup/"):
        assert _policy_of(page, daphne_server + path) == DEFAULT_POLICY, path
    page.goto(daphne_server + "/")
    page.fill("#id_play_name", "Careful Carla")
    page.get_by_role("button", name="Play now").click()
    expect(page).to_have_url(re.compile(r"/t/[\w-]+/$"))
    # The socket connects under connect-src 'self'; bid, then play a card.
    deadline = time.monotonic() + 60
    while not page.locator("#hand .card.legal").count():
        assert time.monotonic() < deadline, problems
        bids = page.locator(".bid-panel .bid-btn", has_text=re.compile(r"^3$"))
        if bids.count():
            # The panel goes once the bid is taken: a click that finds it going
            # must not wait 30 s for a button that will not come back.
            with contextlib.suppress(PlaywrightTimeoutError):
                bids.click(timeout=2_000)
        page.wait_for_timeout(100)
    page.locator("#hand .card.legal").first.click()
    expect(page.locator("#hand .card")).to_have_count(12, timeout=15_000)
    page.goto(daphne_server + "/profile/")
    assert problems == []


@pytest.mark.django_db(transaction=True)
def test_the_staff_pages_pass_the_policy(live_server: LiveServer, page: Page) -> None:
    analytics_fixtures.build()
    get_user_model().objects.create_user(
        "staffer", password="pw-staff-123", is_staff=True, is_superuser=True
    )
    problems = watch(page)
    page.goto(live_server.url + "/accounts/login/?next=/dashboard/")
    page.fill("input[name=username]", "staffer")
    page.fill("input[name=password]", "pw-staff-123")
    page.locator("main form button[type=submit], main form input[type=submit]").first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Human-vs-bot dashboard")
    # Chart.js drew under the policy: its canvases were sized.
    box = page.locator("#chart-bid-sums").bounding_box()
    assert box is not None and box["width"] > 200
    assert _policy_of(page, live_server.url + "/dashboard/") == DEFAULT_POLICY
    page.goto(live_server.url + "/admin/")
    expect(page.locator("#site-name")).to_be_visible()
    assert problems == []
