"""The staff dashboard in Chromium: log in as staff, filter the measured partnerships, read
the win rates by round type, and look at the charts."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from lab.tournaments.storage import store_tournament
from lab.tournaments.tournament import TournamentConfig
from tests.support import analytics_fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_staff_dashboard_in_chromium(live_server: LiveServer, page: Page,
                                     screenshot_dir: Path) -> None:  # fmt: skip
    analytics_fixtures.build()  # human+bot and human+human rounds, a stand-in round (R8)
    store_tournament(TournamentConfig(ns="RB+SRP", ew="MS+SRP", games=12, seed=7))
    get_user_model().objects.create_user("staffer", password="pw-staff-123", is_staff=True)

    page.goto(live_server.url + "/dashboard/")
    expect(page).to_have_url(live_server.url + "/accounts/login/?next=/dashboard/")
    page.fill("input[name=username]", "staffer")
    page.fill("input[name=password]", "pw-staff-123")
    page.locator("main form button[type=submit], main form input[type=submit]").first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Human-vs-bot dashboard")

    # The measured partnership: a human with RB+SRP, against bot+bot (table A's E/W).
    page.get_by_label("Measured partnership's bot").select_option("RB+SRP")
    page.locator("#filter-makeup").get_by_label("human+bot").check()
    page.locator("#filter-against").get_by_label("bot+bot").check()
    page.get_by_role("button", name="Apply filters").click()
    expect(page).to_have_url(
        live_server.url + "/dashboard/?date_from=&date_to=&rules=&bot=RB%2BSRP&makeup=HB&against=BB"
        "&study=&condition="
    )
    expect(page.locator("#dash-total")).to_contain_text("5 rounds, 2 finished matches")  # A and C
    expect(page.locator("#dash-stand-ins")).to_contain_text("Left out: 1 stand-in rounds")
    expect(page.locator("#dash-measured")).to_have_text(
        "Measured: human+bot partnership whose bots are RB+SRP against bot+bot; "
        "stand-in rounds left out; pilot data left out."
    )
    expect(page.locator("#dash-pilot")).to_contain_text("Left out as pilot data")
    expect(page.locator("#round-types-by-condition")).to_have_count(0)  # no study chosen
    # Win rates by round type: only the human+bot columns have partnership-rounds.
    table = page.locator("#round-type-win-rates table")
    expect(table.locator("thead th").nth(2)).to_have_text("human+bot")
    we_nil = table.locator('tr[data-type="we nil"] td')
    expect(we_nil.nth(5)).to_have_text("2")  # HB n: R3 (E, set) and R4 (W, made)
    expect(we_nil.nth(6)).to_contain_text("50.0%")  # won R4 only
    expect(we_nil.nth(1)).to_have_text("0")  # no human+human partnership measured
    # The match's winner by the round types it held: A, won by the human+bot side.
    held = page.locator("table.dash-match-types tr[data-type='we nil'] td")
    expect(held.nth(3)).to_have_text("1")  # HB n
    expect(held.nth(4)).to_contain_text("100.0%")
    expect(page.locator("#win-rates")).to_contain_text("human & RB+SRP")
    expect(page.locator("#win-rates")).not_to_contain_text("human+human")

    # Counting the stand-in round too: R8's nil, the stand-in's for E, joins "we nil".
    page.get_by_label("Include stand-in rounds").check()
    page.get_by_role("button", name="Apply filters").click()
    expect(page.locator("#dash-total")).to_contain_text("6 rounds, 3 finished matches")  # and D
    expect(page.locator("#dash-stand-ins")).to_contain_text("Counted: 1 stand-in rounds")
    expect(table.locator('tr[data-type="we nil"] td').nth(5)).to_have_text("3")
    expect(page.get_by_label("Include stand-in rounds")).to_be_checked()
    # Chart.js drew the three figures (a canvas it has sized is not 0x0).
    for canvas in ("chart-points-by-bid-sum", "chart-bid-sums", "chart-points-histogram"):
        box = page.locator(f"#{canvas}").bounding_box()
        assert box is not None and box["width"] > 200 and box["height"] > 200
    assert page.evaluate("typeof Chart") == "function"
    page.locator("#round-type-win-rates").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir / "dashboard.png"), full_page=True)
    page.locator("#round-type-win-rates").screenshot(
        path=str(screenshot_dir / "dashboard-win-rates-by-round-type.png")
    )
