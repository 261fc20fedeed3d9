"""Smoke test in a real browser: the home page loads and looks like itself."""

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

pytestmark = pytest.mark.browser


def test_home_page_in_chromium(live_server: LiveServer, page: Page, screenshot_dir: Path) -> None:
    page.goto(live_server.url + "/")
    expect(page).to_have_title("Spades — play with friends and research bots")
    expect(page.get_by_role("heading", level=1)).to_have_text("Spades")
    expect(page.get_by_role("button", name="Play now")).to_be_visible()
    # The stylesheet loaded: the hero text is drawn light on the green felt.
    assert page.eval_on_selector("h1", "el => getComputedStyle(el).color") == "rgb(251, 250, 246)"
    page.screenshot(path=str(screenshot_dir / "home.png"), full_page=True)
