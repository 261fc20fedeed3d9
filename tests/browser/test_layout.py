"""The whole table fits the screen: at each common size, while bidding and
while playing, every card of the hand and every bid button lies inside the
viewport, the seat boxes, the trick and the hand never overlap, and every
card shows a strip of its face at least 28 px wide with its rank and suit."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.boxes import COVERED, boxes_of, check_table_fits, inside

pytestmark = pytest.mark.browser

VIEWPORTS = {
    "1366x768": (1366, 768),
    "1280x720": (1280, 720),
    "1920x1080": (1920, 1080),
    "phone-portrait-390x844": (390, 844),
    "phone-landscape-844x390": (844, 390),
}


MIN_STRIP = 28  # px of each card's face left uncovered, from its left edge

# Per card of the hand: how wide its visible left strip is (to the next card's left
# edge in the same row, else its whole width), and whether its top-left corner (rank
# and suit) is the topmost thing at its centre.
STRIPS = """() => {
  const cards = [...document.querySelectorAll('#hand .card')];
  return cards.map((card, i) => {
    const r = card.getBoundingClientRect();
    const next = cards[i + 1] && cards[i + 1].getBoundingClientRect();
    const sameRow = next && Math.abs(next.y - r.y) < r.height / 2;
    const c = card.querySelector('.tl').getBoundingClientRect();
    const top = document.elementFromPoint(c.x + c.width / 2, c.y + c.height / 2);
    return [sameRow ? next.x - r.x : r.width, !!top && card.contains(top)];
  });
}"""


def check_strips(page: Page, what: str) -> None:
    """Every card shows at least MIN_STRIP px of its face and its rank and suit."""
    strips = page.evaluate(STRIPS)
    assert strips, f"{what}: no cards"
    narrow = [round(w, 1) for w, _ in strips if w < MIN_STRIP]
    assert narrow == [], f"{what}: card strips under {MIN_STRIP} px: {narrow}"
    hidden = sum(1 for _, shown in strips if not shown)
    assert hidden == 0, f"{what}: {hidden} cards' rank and suit are covered"


@pytest.mark.parametrize("name", list(VIEWPORTS))
def test_the_table_fits_the_screen(
    name: str, daphne_server: str, new_page: Callable[..., Page], screenshot_dir: Path
) -> None:
    width, height = VIEWPORTS[name]
    # Where things rest, not where they fly: cards in flight are test_table_motion's.
    page = new_page(width, height, reduced_motion=True)
    page.goto(daphne_server + "/")
    page.fill("#id_play_name", "Fitting Fay")
    page.get_by_role("button", name="Play now").click()
    expect(page).to_have_url(re.compile(r"/t/[\w-]+/$"))
    bids = page.locator(".bid-panel .bid-btn")
    expect(bids.first).to_be_visible(timeout=20_000)
    expect(page.locator("#hand .card")).to_have_count(13)
    page.screenshot(path=str(screenshot_dir / f"layout-{name}-bidding.png"))
    check_table_fits(page, width, height, f"{name} bidding")
    check_strips(page, f"{name} bidding")
    # A round summary (as after a round) leaves every bid button and card reachable.
    page.evaluate("document.getElementById('round-summary').hidden = false")
    for selector in (".bid-panel .bid-btn", "#hand .card"):
        covered = page.evaluate(COVERED, selector)
        assert covered == 0, f"{name}: the round summary covers {covered} of {selector}"
    page.evaluate("document.getElementById('round-summary').hidden = true")
    page.locator(".bid-panel .bid-btn", has_text=re.compile(r"^3$")).click()
    deadline = time.monotonic() + 30
    while not page.locator("#hand .card.legal").count():
        assert time.monotonic() < deadline
        page.wait_for_timeout(100)
    page.wait_for_timeout(300)  # the trick's cards settle
    page.screenshot(path=str(screenshot_dir / f"layout-{name}-playing.png"))
    check_table_fits(page, width, height, f"{name} playing")
    check_strips(page, f"{name} playing")
    # Who won the trick is said beside the status, never over the cards: with
    # the longest such line in place, nothing overlaps and it is on screen.
    page.evaluate(
        "document.getElementById('trick-note').textContent = 'Sofia (BIS+SRP) wins the trick · '"
    )
    [[note]] = boxes_of(page, "#trick-note")
    assert inside(note, width, height), f"{name}: the trick note at {note} is off screen"
    check_table_fits(page, width, height, f"{name} trick note")
    illegal = page.locator("#hand .card.illegal")
    if illegal.count():  # a refusal is shown by the hand, inside the screen
        # Where a player clicks an overlapped card: its visible left strip (its
        # centre may lie under the next card, a playable one).
        illegal.first.click(force=True, position={"x": 5, "y": 30})
        error = page.locator("#error")
        expect(error).to_be_visible()
        page.screenshot(path=str(screenshot_dir / f"layout-{name}-refused.png"))
        [[box]] = boxes_of(page, "#error")
        assert inside(box, width, height), f"{name}: the error at {box} is off screen"
        [[hand]] = boxes_of(page, "#hand")
        assert abs(box[1] + box[3] - hand[1]) < 40, f"{name}: the error is not by the hand"
