"""Where things are on the page: bounding boxes, inside the viewport, overlaps."""

from __future__ import annotations

from playwright.sync_api import Page

Box = tuple[float, float, float, float]  # x, y, width, height

# How many of the elements matching a selector are not the topmost element near their
# left edge (a hand's cards overlap: only each card's left strip shows).
COVERED = """(selector) => [...document.querySelectorAll(selector)].filter((e) => {
  const r = e.getBoundingClientRect();
  const top = document.elementFromPoint(r.x + 5, r.y + r.height / 2);
  return !(top && (top === e || e.contains(top)));
}).length"""


# The boxes of several selectors read in one go, so that a state frame
# redrawing the hand between two reads cannot tear the picture; read once no
# card is in flight (a card played for you travels from the hand to the trick,
# a finished trick to its winner: boxes include transforms), and without the
# swept cards (hidden, left where the sweep took them).
READ_BOXES = """async (selectors) => {
  const flying = () => document.getAnimations().some((a) => a.playState === "running"
    && a.effect && a.effect.target instanceof Element && a.effect.target.matches(".card"));
  for (let waited = 0; flying() && waited < 5000; waited += 25) {
    await new Promise((done) => setTimeout(done, 25));
  }
  return selectors.map((s) => [...document.querySelectorAll(s)]
    .filter((e) => getComputedStyle(e).visibility !== "hidden")
    .map((e) => e.getBoundingClientRect())
    .filter((r) => r.width > 0 && r.height > 0)
    .map((r) => [r.x, r.y, r.width, r.height]));
}"""


def boxes_of(page: Page, *selectors: str) -> list[list[Box]]:
    """For each selector, the boxes of its visible elements (viewport pixels)."""
    found = page.evaluate(READ_BOXES, list(selectors))
    return [[(x, y, w, h) for x, y, w, h in boxes] for boxes in found]


def inside(box: Box, width: int, height: int) -> bool:
    x, y, w, h = box
    return x >= -0.5 and y >= -0.5 and x + w <= width + 0.5 and y + h <= height + 0.5


def overlap(a: Box, b: Box) -> bool:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    return ax < bx + bw - 1 and bx < ax + aw - 1 and ay < by + bh - 1 and by < ay + ah - 1


def check_table_fits(page: Page, width: int, height: int, what: str, *more: str) -> None:
    """Every card of the hand, every bid button (and what ``more`` selects) lies
    inside the viewport, and no seat box, trick card, the hand or the trick
    note covers another."""
    cards, buttons, hand, seats, trick, notes, *extra = boxes_of(
        page, "#hand .card", ".bid-panel .bid-btn", "#hand", ".seat-box",
        "#trick .slot .card", "#trick-note", *more,
    )  # fmt: skip
    wanted = cards + buttons + [b for boxes in extra for b in boxes]
    assert cards or buttons, f"{what}: no card and no bid button"
    outside = [b for b in wanted if not inside(b, width, height)]
    assert outside == [], f"{what}: {len(outside)} of {len(wanted)} outside {width}x{height}"
    parts = [("seat", b) for b in seats] + [("trick", b) for b in trick]
    parts += [("hand", b) for b in hand] + [("trick note", b) for b in notes]
    for i, (name_a, a) in enumerate(parts):
        for name_b, b in parts[i + 1 :]:
            if name_a == name_b == "trick":
                continue  # the trick's own cards may touch
            assert not overlap(a, b), f"{what}: a {name_a} box covers a {name_b} box"
