"""Motion, sound, the tab's title and table talk, in Chromium.

Bots here pause 0.4 s a move (1 s before leading a new trick: game/master.py
TRICK_PAUSE), as at a real table, so a finished trick stays long enough to
be gathered to its winner.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

DAPHNE_ENV = {"SPADES_BOT_DELAY": "0.4"}

# Every Element.animate call, for the test to read: which card, from where, to what.
ANIMATION_LOG = """
window.__animations = [];
const animate = Element.prototype.animate;
Element.prototype.animate = function (frames, options) {
  const last = frames[frames.length - 1];
  window.__animations.push({
    card: (this.dataset && this.dataset.card) || null,
    inTrick: !!this.closest('#trick'),
    from: frames[0].transform || '',
    to: last.transform || '',
    opacity: last.opacity === undefined ? null : last.opacity,
  });
  return animate.call(this, frames, options);
};
"""


def play_now(page: Page, server: str, name: str) -> None:
    page.goto(server + "/")
    page.fill("#id_play_name", name)
    page.get_by_role("button", name="Play now").click()
    expect(page).to_have_url(re.compile(r"/t/[\w-]+/$"))
    expect(page.locator(".bid-panel .bid-btn").first).to_be_visible(timeout=20_000)


def bid_three(page: Page) -> None:
    page.locator(".bid-panel .bid-btn", has_text=re.compile(r"^3$")).click()


def play_until(
    page: Page, done: Callable[[], bool], seconds: float = 60, played: list[str] | None = None
) -> list[str]:
    """Play the first legal card whenever it is our turn, until ``done()``; the
    cards played (also appended to ``played`` as they go)."""
    played = [] if played is None else played
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "timed out"
        legal = page.locator("#hand .card.legal")
        if legal.count() and "mine" in (page.locator("#status-bar").get_attribute("class") or ""):
            code = legal.first.get_attribute("data-card")
            try:
                legal.first.click(timeout=2000)
            except Exception:  # redrawn under the click: look again
                continue
            if code:
                played.append(code)
            page.wait_for_timeout(150)
        else:
            page.wait_for_timeout(100)
    return played


def animations(page: Page) -> list[dict[str, Any]]:
    return page.evaluate("window.__animations")


def test_cards_travel_to_the_trick_and_the_trick_to_its_winner(
    daphne_server: str, new_page: Callable[..., Page], screenshot_dir: Path
) -> None:
    page = new_page(1366, 768)
    page.add_init_script(ANIMATION_LOG)
    play_now(page, daphne_server, "Moving Mo")
    bid_three(page)

    mine: list[str] = []

    def arrivals() -> list[dict[str, Any]]:
        return [a for a in animations(page) if a["inTrick"] and a["to"] == "none"]

    def seen_enough() -> bool:
        # A frame that comes hard on the heels of another (a loaded machine)
        # is drawn without motion, so play on until the test has seen it all.
        swept = any(a["inTrick"] and a["opacity"] == 0 for a in animations(page))
        ours = {a["card"] for a in arrivals()} & set(mine)
        return swept and bool(ours) and len(arrivals()) >= 4

    play_until(page, seen_enough, played=mine)
    # Each card laid comes from somewhere: a real offset, not a fade in place.
    assert all(re.match(r"translate\((?!0px, 0px)", a["from"]) for a in arrivals())
    sweeps = [a for a in animations(page) if a["inTrick"] and a["opacity"] == 0]
    assert len(sweeps) >= 4 and all(a["to"].startswith("translate(") for a in sweeps)
    page.screenshot(path=str(screenshot_dir / "trick-won-1366x768.png"))
    sounds = page.evaluate("window.spadesTable.sounds")
    assert {"turn", "card", "trick"} <= set(sounds)


def test_no_motion_for_players_who_ask_for_less(
    daphne_server: str, new_page: Callable[..., Page]
) -> None:
    page = new_page(1366, 768, reduced_motion=True)
    page.add_init_script(ANIMATION_LOG)
    play_now(page, daphne_server, "Still Stella")
    bid_three(page)
    play_until(page, lambda: page.evaluate("window.spadesTable.view.tricks.length") >= 2)
    assert [a for a in animations(page) if a["inTrick"]] == []
    expect(page.locator("#trick .slot.swept")).to_have_count(0)


def test_sounds_play_and_mute_is_remembered(
    daphne_server: str, new_page: Callable[..., Page]
) -> None:
    page = new_page()
    play_now(page, daphne_server, "Loud Lou")
    assert "turn" in page.evaluate("window.spadesTable.sounds")
    config = page.evaluate("JSON.parse(document.getElementById('table-config').textContent)")
    assert set(config["sounds"]) == {"turn", "card", "trick", "nil-set"}
    for url in config["sounds"].values():
        response = page.request.get(daphne_server + url)
        assert response.ok and response.headers["content-type"] in ("audio/wav", "audio/x-wav")
        assert response.body()[:4] == b"RIFF"
    # The player's first click lets the page make sound: every file decodes.
    page.locator("#last-trick-btn").click()
    page.wait_for_function(
        "() => window.spadesTable.soundsReady.join() === 'card,nil-set,trick,turn'",
        timeout=10_000,
    )
    mute = page.locator("#mute-btn")
    expect(mute).to_have_text("Sound on")
    mute.click()
    expect(mute).to_have_text("Sound off")
    expect(mute).to_have_attribute("aria-pressed", "true")
    page.reload()
    expect(page.locator("#mute-btn")).to_have_text("Sound off")
    expect(page.locator(".bid-panel .bid-btn").first).to_be_visible()
    bid_three(page)
    play_until(page, lambda: page.evaluate("window.spadesTable.view.tricks.length") >= 1)
    assert page.evaluate("window.spadesTable.sounds") == []


def test_the_tab_title_says_your_turn_while_the_page_is_hidden(
    daphne_server: str, new_page: Callable[..., Page]
) -> None:
    page = new_page()
    play_now(page, daphne_server, "Tabbed Tess")
    title = page.title()
    assert not title.startswith("Your turn")

    def hide(hidden: bool) -> None:
        page.evaluate(
            """(hidden) => {
              Object.defineProperty(document, 'hidden', {value: hidden, configurable: true});
              document.dispatchEvent(new Event('visibilitychange'));
            }""",
            hidden,
        )

    hide(True)
    assert page.title() == f"Your turn \u2022 {title}"
    hide(False)
    assert page.title() == title
    # Not our turn: a hidden page keeps its title.
    bid_three(page)
    expect(page.locator("#status-bar")).not_to_have_class(re.compile(r"\bmine\b"))
    hide(True)
    if page.evaluate("window.spadesTable.view.to_act") != page.evaluate(
        "window.spadesTable.view.seat"
    ):
        assert page.title() == title


def test_spectators_name_themselves_chat_react_and_are_seen(
    daphne_server: str, new_page: Callable[..., Page], screenshot_dir: Path
) -> None:
    player = new_page(1366, 768)
    play_now(player, daphne_server, "Player Pat")
    # A "Play now" table is private: its invite panel lets a friend watch.
    invite = player.locator("#invite-url").input_value()
    assert "/join/" in invite

    watcher = new_page(1280, 860)
    watcher.goto(invite)
    expect(watcher.locator("#chat-input")).to_be_disabled()
    expect(player.locator("#watchers")).to_have_text("1 watching: a guest")
    watcher.fill("#chat-name", "Watcher Wes")
    watcher.get_by_role("button", name="Chat under this name").click()
    expect(watcher.locator("#chat-input")).to_be_enabled()
    expect(player.locator("#watchers")).to_have_text("1 watching: Watcher Wes")

    watcher.fill("#chat-input", "hello table")
    watcher.locator("#chat-form button").click()
    expect(player.locator("#chat-log li").last).to_have_text("Watcher Wes (watching): hello table")
    player.fill("#chat-input", "hi Wes")
    player.locator("#chat-form button").click()
    expect(watcher.locator("#chat-log li").last).to_contain_text("hi Wes")

    player.get_by_role("button", name="Well played").click()
    bubble = watcher.locator('.seat-box[data-rel="0"] .reaction-bubble')  # South, at the bottom
    expect(bubble).to_have_text("\U0001f44f")
    expect(bubble).to_have_attribute("aria-label", re.compile(r"Player Pat.*: well played"))
    player.screenshot(path=str(screenshot_dir / "table-talk-player.png"))
    watcher.screenshot(path=str(screenshot_dir / "table-talk-watcher.png"))

    # The talk is still there after a reload.
    watcher.reload()
    expect(watcher.locator("#chat-log li")).to_have_count(2)
    expect(watcher.locator("#chat-log li").first).to_contain_text("hello table")
    watcher.context.close()
    expect(player.locator("#watchers")).to_be_hidden()
