"""A player's think time: measured by the page, bounded by the server, stored with the act."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from playwright.sync_api import Page, expect

from tests.support.table_steps import become_guest, create_table

PAUSE_MS = 1500


def stored_bids(database: str) -> list[tuple[int | None, int | None]]:
    """(think_ms, think_bound_ms) of every bid a person made, in order."""
    with sqlite3.connect(database) as db:
        return db.execute(
            "SELECT think_ms, think_bound_ms FROM game_action "
            "WHERE by_stand_in = 0 AND json_extract(action, '$.type') = 'bid' "
            "AND think_bound_ms IS NOT NULL ORDER BY id"
        ).fetchall()


def test_a_pause_before_a_bid_is_stored_as_its_think_time(
    daphne_server, new_page: Callable[..., Page]
) -> None:
    page = new_page(1366, 768)
    become_guest(page, daphne_server, "Pensive Pat")
    create_table(
        page, daphne_server, ["me", "RB+SRP", "RB+SRP", "RB+SRP"], unchecked=("blind_nil",)
    )
    # The pause is timed in the page from the first frame that shows the bid
    # buttons, the moment the page itself counts from (the test's own polling
    # would notice them up to a few hundred ms late on a loaded machine, and a
    # loaded machine may draw that frame 100 ms and more after the buttons
    # enter the document). The click is made in the page when it is over.
    page.evaluate(
        """() => new MutationObserver((_, observer) => {
            if (document.querySelector(".bid-panel .bid-btn")) {
                observer.disconnect();
                requestAnimationFrame(() => { window.bidsShownAt = performance.now(); });
            }
        }).observe(document.body, {childList: true, subtree: true})"""
    )
    page.get_by_role("button", name="Start the match").click()
    bids = page.locator(".bid-panel .bid-btn")
    page.wait_for_function("() => window.bidsShownAt !== undefined", timeout=20_000)
    page.evaluate(
        """(pause) => new Promise((done) => setTimeout(() => {
            window.clickedAt = performance.now();
            document.querySelector(".bid-panel .bid-btn").click();
            done();
        }, pause - (performance.now() - window.bidsShownAt)))""",
        PAUSE_MS,
    )
    # The pause as it happened (a busy page fires its timer a little late).
    paused = page.evaluate("() => window.clickedAt - window.bidsShownAt")
    assert paused >= PAUSE_MS - 1
    expect(bids).to_have_count(0)
    stored: list[tuple[int | None, int | None]] = []
    for _ in range(50):
        stored = stored_bids(daphne_server.database)
        if stored:
            break
        page.wait_for_timeout(100)
    assert len(stored) == 1, stored
    think, bound = stored[0]
    assert think is not None and bound is not None
    assert abs(think - paused) <= 100, (think, paused, bound)
    assert think <= bound
