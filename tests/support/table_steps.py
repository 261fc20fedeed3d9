"""A guest's steps in Chromium: into the lobby under a name, a new table from
the form, a legal card played, and one move at the table when one is due."""

from __future__ import annotations

import contextlib
import re

from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError


def become_guest(page: Page, server: str, name: str) -> None:
    page.goto(server + "/")
    page.locator(".guest-panel input[name=name]").fill(name)
    page.locator(".guest-panel button[type=submit]").click()
    expect(page.locator(".hero-note")).to_contain_text(name)


def create_table(
    page: Page,
    server: str,
    seats: list[str],
    *,
    goal: int = 500,
    losing_goal: int = -200,
    private: bool = False,
    extra: dict[str, str] | None = None,
    unchecked: tuple[str, ...] = (),
) -> str:
    """Fill the new-table form; returns the table page URL."""
    page.goto(server + "/tables/new/")
    for position, choice in enumerate(seats):
        page.select_option(f"#id_seat_{position}", choice)
    page.fill("#id_winning_goal", str(goal))
    page.fill("#id_losing_goal", str(losing_goal))
    page.fill("#id_turn_seconds", "600")
    for name, value in (extra or {}).items():
        page.fill(f"#id_{name}", value)
    for name in unchecked:
        page.uncheck(f"#id_{name}")
    if private:
        page.check("#id_private")
    page.get_by_role("button", name="Open the table").click()
    expect(page).to_have_url(re.compile(r"/t/[\w-]+/$"))
    return page.url


def play_card(page: Page, legal: Locator) -> None:
    """Click the first legal card and wait until it has left the hand."""
    code = legal.first.get_attribute("data-card")
    legal.first.click(timeout=3000)
    expect(page.locator(f'#hand .card[data-card="{code}"]')).to_have_count(0)


def step(page: Page) -> bool:
    """One move of a participant at the table, if one is due; True when the match is over."""
    if page.locator("#match-over").is_visible():
        return True
    summary = page.locator("#round-summary")
    if summary.is_visible():
        with contextlib.suppress(PlaywrightTimeoutError):
            summary.get_by_role("button", name="Next round").click(timeout=2000)
        return False
    bids = page.locator(".bid-panel .bid-btn")
    if bids.count() > 0:
        three = page.locator(".bid-panel .bid-btn", has_text=re.compile(r"^3$"))
        with contextlib.suppress(PlaywrightTimeoutError, AssertionError):
            (three if three.count() else bids.last).click(timeout=2000)
            expect(bids).to_have_count(0, timeout=3000)
        return False
    legal = page.locator("#hand .card.legal")
    if legal.count() > 0:
        with contextlib.suppress(PlaywrightTimeoutError, AssertionError):
            code = legal.first.get_attribute("data-card", timeout=1000)
            legal.first.click(timeout=2000)
            expect(page.locator(f'#hand .card[data-card="{code}"]')).to_have_count(0, timeout=3000)
    return False

