"""The ratings in Chromium: a guest plays two short matches against a named level,
sees the rating move on the profile, signs up and keeps it, finds both matches,
and the leaderboard lists the account and the level's bot; axe finds no serious
violation on either page (screenshots in artifacts/screenshots/). The guest's
cards are played by the test through the server's own write path (random legal
moves), the bots inline: what is under test is the pages, not the table's
clicking (tests/browser/test_table_play.py)."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from game.engine import Rules
from game.models import Table
from tests.browser.test_accessibility import serious_violations
from tests.server.conftest import live as live  # the fixture: bots inline, no pacing
from tests.server.helpers import play_humans

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def play_a_match(page: Page, url: str, rng: random.Random) -> None:
    page.goto(url + "/")
    page.select_option("#id_level", "Beginner")
    page.get_by_role("button", name=re.compile("Play now|Start a new game")).click()
    expect(page).to_have_url(re.compile(r"/t/[\w-]+/$"))
    table = Table.objects.get(public_id=page.url.rstrip("/").rsplit("/", 1)[1])
    table.rules = Rules(winning_goal=1, losing_goal=0).to_dict()  # one round, rarely two
    table.save(update_fields=["rules"])
    assert [s.bot_name for s in table.seats.order_by("position")] == ["RB+WRP"] * 2 + [""] + [
        "RB+WRP"
    ]
    assert play_humans(table, rng).status == Table.Status.FINISHED


def test_a_guest_is_rated_keeps_it_by_signing_up_and_reaches_the_leaderboard(
    live_server: LiveServer, page: Page, screenshot_dir: Path, live: Any, settings: Any
) -> None:
    settings.SPADES_LEADERBOARD_MIN_MATCHES = 2
    url, rng = live_server.url, random.Random(45)
    page.goto(url + "/")
    page.locator(".guest-panel input[name=name]").fill("Rosa")
    page.locator(".guest-panel button[type=submit]").click()
    expect(page.locator("#id_level")).to_contain_text("Beginner — RB+WRP (not rated yet)")
    seen = []
    for number in (1, 2):
        play_a_match(page, url, rng)
        page.goto(url + "/profile/")
        expect(page.locator("#rated-matches")).to_have_text(str(number))
        seen.append(page.locator("#rating-mu").inner_text())
        expect(page.locator("#rating-chart polyline")).to_have_count(2)
    assert seen[0] != "25.0" and seen[1] != seen[0]  # it moved, twice
    expect(page.locator("#play-figures")).to_be_visible()
    page.screenshot(path=str(screenshot_dir / "profile-guest.png"), full_page=True)

    page.goto(url + "/accounts/signup/")
    page.fill("#id_username", "rosa")
    page.fill("#id_password1", "pw-sp4des!x")
    page.fill("#id_password2", "pw-sp4des!x")
    page.locator("form button[type=submit], form input[type=submit]").last.click()
    page.goto(url + "/profile/")
    expect(page.locator("h1")).to_contain_text("rosa")
    expect(page.locator("#rated-matches")).to_have_text("2")
    expect(page.locator("#rating-mu")).to_have_text(seen[1])  # kept
    expect(page.locator(".profile-games tbody tr")).to_have_count(2)
    page.screenshot(path=str(screenshot_dir / "profile-account.png"), full_page=True)
    assert serious_violations(page) == []

    page.goto(url + "/leaderboard/")
    expect(page.locator("#people tbody tr")).to_have_count(1)
    expect(page.locator("#people")).to_contain_text("rosa")
    expect(page.locator("#bots")).to_contain_text("RB+WRP")
    page.goto(url + "/")
    expect(page.locator("#id_level")).to_contain_text(re.compile(r"Beginner — RB\+WRP \(rating"))
    page.goto(url + "/leaderboard/")
    page.screenshot(path=str(screenshot_dir / "leaderboard.png"), full_page=True)
    assert serious_violations(page) == []
