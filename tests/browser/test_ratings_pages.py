"""The ratings in Chromium over a real Daphne server: a guest plays two short
matches against a named level by clicking (bids and cards, as
tests/browser/test_study_end_to_end.py's participants do), sees the rating
move on the profile, signs up and keeps it, finds both matches with their
figures, and the leaderboard lists the account and the level's bot; axe finds
no serious violation on either page (screenshots in artifacts/screenshots/).
Goals of 1 and 0 make each match one round (rarely two): well under a minute."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser_checks import serious_violations
from tests.support.table_steps import become_guest, create_table, step

pytestmark = pytest.mark.browser

# The server's own settings (its environment): two rated matches reach the board.
DAPHNE_ENV = {"SPADES_LEADERBOARD_MIN_MATCHES": "2"}
MATCH_SECONDS = 60
LEVEL = "level:Beginner"


def play_a_match(page: Page, url: str) -> None:
    """A new table, the guest at South and the Beginner level's bot at the other
    three seats (each says which bot it is); every bid and card clicked."""
    create_table(page, url, [LEVEL, LEVEL, "me", LEVEL], goal=1, losing_goal=0,
                 unchecked=("blind_nil",))  # fmt: skip
    page.get_by_role("button", name="Start the match").click()
    expect(page.locator("#seating")).to_be_hidden()
    kinds = [page.locator(f'.seat-box[data-rel="{r}"] .bot-kind').inner_text() for r in (1, 2, 3)]
    assert kinds == ["bot · RB+WRP"] * 3, kinds
    deadline = time.monotonic() + MATCH_SECONDS
    while not step(page):
        assert time.monotonic() < deadline, "the match did not end in time"
        page.wait_for_timeout(50)


def test_a_guest_is_rated_keeps_it_by_signing_up_and_reaches_the_leaderboard(
    daphne_server: str, new_page: Callable[..., Page], screenshot_dir: Path
) -> None:
    url, page = daphne_server, new_page(1280, 860)
    become_guest(page, url, "Rosa")
    expect(page.locator("#id_level")).to_contain_text("Beginner — RB+WRP (not rated yet)")
    seen = []
    for number in (1, 2):
        play_a_match(page, url)
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
    # Both matches' figures: each was a round or more of the guest's bids and cards.
    games = page.locator(".profile-games tbody tr")
    for n in range(2):
        expect(games.nth(n).locator("td").nth(2)).to_have_text(re.compile(r"^(Won|Lost)$"))
    # The rounds cell: "2", or "2 · replays" with the link to the match's replays.
    cells = [games.nth(n).locator("td").nth(4).inner_text() for n in range(2)]
    per_game = [int(re.match(r"\d+", c).group()) for c in cells]  # type: ignore[union-attr]
    rounds = page.locator("#play-figures tr", has_text="Rounds").locator("td").first
    assert min(per_game) >= 1 and int(rounds.inner_text()) == sum(per_game)
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
