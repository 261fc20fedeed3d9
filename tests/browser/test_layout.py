"""The whole table fits the screen: at each common size, while bidding and
while playing, every card of the hand and every bid button lies inside the
viewport, and the seat boxes, the trick and the hand never overlap."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

VIEWPORTS = {
    "1366x768": (1366, 768),
    "1280x720": (1280, 720),
    "1920x1080": (1920, 1080),
    "phone-portrait-390x844": (390, 844),
    "phone-landscape-844x390": (844, 390),
}

Box = tuple[float, float, float, float]  # x, y, width, height

# How many of the elements matching a selector are not the topmost element near their
# left edge (a hand's cards overlap: only each card's left strip shows).
COVERED = """(selector) => [...document.querySelectorAll(selector)].filter((e) => {
  const r = e.getBoundingClientRect();
  const top = document.elementFromPoint(r.x + 5, r.y + r.height / 2);
  return !(top && (top === e || e.contains(top)));
}).length"""


def _box(page: Page, selector: str) -> list[Box]:
    boxes = []
    for handle in page.query_selector_all(selector):
        b = handle.bounding_box()
        if b is not None and b["width"] > 0 and b["height"] > 0:
            boxes.append((b["x"], b["y"], b["width"], b["height"]))
    return boxes


def _inside(box: Box, width: int, height: int) -> bool:
    x, y, w, h = box
    return x >= -0.5 and y >= -0.5 and x + w <= width + 0.5 and y + h <= height + 0.5


def _overlap(a: Box, b: Box) -> bool:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    return ax < bx + bw - 1 and bx < ax + aw - 1 and ay < by + bh - 1 and by < ay + ah - 1


def _check(page: Page, width: int, height: int, what: str) -> None:
    wanted = _box(page, "#hand .card") + _box(page, ".bid-panel .bid-btn")
    assert wanted, what
    outside = [b for b in wanted if not _inside(b, width, height)]
    assert outside == [], f"{what}: {len(outside)} of {len(wanted)} outside {width}x{height}"
    hand = _box(page, "#hand")
    seats = _box(page, ".seat-box")
    trick = _box(page, "#trick .slot .card")
    parts = [("seat", b) for b in seats] + [("trick", b) for b in trick]
    parts += [("hand", b) for b in hand] + [("trick note", b) for b in _box(page, "#trick-note")]
    for i, (name_a, a) in enumerate(parts):
        for name_b, b in parts[i + 1 :]:
            if name_a == name_b == "trick":
                continue  # the trick's own cards may touch
            assert not _overlap(a, b), f"{what}: a {name_a} box covers a {name_b} box"


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
    _check(page, width, height, f"{name} bidding")
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
    _check(page, width, height, f"{name} playing")
    # Who won the trick is said beside the status, never over the cards: with
    # the longest such line in place, nothing overlaps and it is on screen.
    page.evaluate(
        "document.getElementById('trick-note').textContent = 'Sofia (BIS+SRP) wins the trick · '"
    )
    [note] = _box(page, "#trick-note")
    assert _inside(note, width, height), f"{name}: the trick note at {note} is off screen"
    _check(page, width, height, f"{name} trick note")
    illegal = page.locator("#hand .card.illegal")
    if illegal.count():  # a refusal is shown by the hand, inside the screen
        illegal.first.click(force=True)
        error = page.locator("#error")
        expect(error).to_be_visible()
        page.screenshot(path=str(screenshot_dir / f"layout-{name}-refused.png"))
        [box] = _box(page, "#error")
        assert _inside(box, width, height), f"{name}: the error at {box} is off screen"
        [hand] = _box(page, "#hand")
        assert abs(box[1] + box[3] - hand[1]) < 40, f"{name}: the error is not by the hand"
