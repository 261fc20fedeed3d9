"""The whole site in Chromium over a real Daphne server: lobby, seats, invites, play.

Bots run inside the Daphne process with no pacing delay, so a short match
(small goals) against three bots ends in a few rounds of clicking.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support.boxes import check_table_fits
from tests.support.table_steps import become_guest, create_table, play_card

pytestmark = pytest.mark.browser

MATCH_TIMEOUT_SECONDS = 240


def test_new_table_form_shows_rule_errors(
    daphne_server: str, new_page: Callable[..., Page]
) -> None:
    page = new_page()
    become_guest(page, daphne_server, "Ada")
    page.goto(daphne_server + "/tables/new/")
    page.fill("#id_winning_goal", "100")
    page.fill("#id_losing_goal", "200")
    page.get_by_role("button", name="Open the table").click()
    expect(page.locator(".form-errors")).to_contain_text("losing goal must be below the winning")


def test_lobby_lists_a_new_table_without_reload(
    daphne_server: str, new_page: Callable[..., Page], screenshot_dir: Path
) -> None:
    watcher = new_page()
    watcher.goto(daphne_server + "/")
    host = new_page()
    become_guest(host, daphne_server, "Hosting Hannah")
    create_table(host, daphne_server, ["open", "BIS+SRP", "me", "open"], goal=300)
    row = watcher.locator(".table-row", has_text="Hosting Hannah")
    expect(row).to_be_visible(timeout=10_000)  # the list polls /tables.json
    expect(row.locator(".chip.open")).to_have_count(2)
    watcher.screenshot(path=str(screenshot_dir / "lobby.png"), full_page=True)

    # The host fills North from the seat's bot menu, grouped by how the bots play.
    north = host.locator(".seat-row", has_text="North")
    menu = north.locator("select.bot-select")
    expect(menu).to_have_value("BIS+SRP")
    expect(menu.locator("optgroup").first).to_have_attribute(
        "label", "Strong rule-based play (SRP)"
    )
    menu.select_option("BIS+UCT5")
    north.get_by_role("button", name="Add bot").click()
    expect(host.locator(".seat-row", has_text="North")).to_contain_text("BIS+UCT5")
    expect(row.locator(".chip.open")).to_have_count(1, timeout=10_000)


def test_guest_plays_a_whole_match_against_three_bots(
    daphne_server: str, new_page: Callable[..., Page], screenshot_dir: Path
) -> None:
    page = new_page()
    become_guest(page, daphne_server, "Grace")
    create_table(
        page,
        daphne_server,
        ["BIS+SRP", "BIS+SRP", "me", "BIS+SRP"],
        goal=80,
        losing_goal=-80,
        # Blind nil from the first round: the cards start face down ("Show my cards").
        extra={"blind_nil_min_deficit": "0"},
    )
    page.get_by_role("button", name="Start the match").click()
    expect(page.locator("#seating")).to_be_hidden()
    # The player sits at the bottom, the partner (North) at the top.
    expect(page.locator('.seat-box[data-rel="0"] .name')).to_contain_text("You")
    expect(page.locator('.seat-box[data-rel="2"] .name')).to_contain_text("North")

    took = {"bid": False, "trick": False, "illegal": False, "look": False}
    deadline = time.monotonic() + MATCH_TIMEOUT_SECONDS
    over = page.locator("#match-over")
    while not over.is_visible():
        assert time.monotonic() < deadline, "the match did not end in time"
        summary = page.locator("#round-summary")
        if summary.is_visible():
            expect(summary.locator(".breakdown")).to_be_visible()
            summary.get_by_role("button", name="Next round").click()
            continue
        look = page.get_by_role("button", name="Show my cards")
        if look.count() > 0 and page.locator(".bid-panel .bid-btn").count() == 0:
            # Far enough behind for blind nil: the cards stay face down until we look.
            with contextlib.suppress(PlaywrightTimeoutError, AssertionError):
                look.click(timeout=3000)
                expect(page.locator("#hand .card.back-card")).to_have_count(0)
                took["look"] = True
            continue
        bids = page.locator(".bid-panel .bid-btn")
        if bids.count() > 0:
            if not took["bid"]:
                page.screenshot(path=str(screenshot_dir / "bid.png"), full_page=True)
                took["bid"] = True
            target = page.locator(".bid-panel .bid-btn", has_text=re.compile(r"^3$"))
            # A round summary may come up over the panel: it is dismissed next time round.
            with contextlib.suppress(PlaywrightTimeoutError, AssertionError):
                (target if target.count() else bids.last).click(timeout=3000)
                expect(bids).to_have_count(0)  # the bid is in: the panel goes
            continue
        legal = page.locator("#hand .card.legal")
        if legal.count() > 0:
            illegal = page.locator("#hand .card.illegal")
            if not took["illegal"] and illegal.count() > 0:
                # aria-disabled (screen readers hear it cannot be played), yet
                # clickable on purpose: the click shows why. Playwright needs force.
                illegal.first.click(force=True)
                # Refused with the engine's reason, from the server's error frame.
                expect(page.locator("#error")).to_be_visible()
                expect(page.locator("#error")).not_to_be_empty()
                took["illegal"] = True
                continue
            if not took["trick"] and page.locator("#trick .slot .card").count() >= 2:
                page.screenshot(path=str(screenshot_dir / "trick.png"), full_page=True)
                took["trick"] = True
            # A summary may come up over the hand as the round ends: look again.
            with contextlib.suppress(PlaywrightTimeoutError, AssertionError):
                play_card(page, legal)
            continue
        page.wait_for_timeout(100)

    expect(page.locator("#match-winner")).to_contain_text(re.compile(r"You (win|lose)"))
    assert page.locator("#sheet tbody tr").count() >= 1
    page.screenshot(path=str(screenshot_dir / "match-over.png"), full_page=True)
    assert took["bid"] and took["trick"] and took["look"]

    # A rematch: a new table, same seats and rules, already playing.
    old_url = page.url
    page.get_by_role("button", name="Rematch").click()
    expect(page).not_to_have_url(old_url)
    expect(page.locator("#seating")).to_be_hidden()
    expect(page.locator("#goal")).to_have_text("to 80")


def test_reload_in_the_middle_restores_the_table(
    daphne_server: str, new_page: Callable[..., Page]
) -> None:
    page = new_page()
    page.goto(daphne_server + "/")
    page.fill("#id_play_name", "Reloading Rita")
    page.get_by_role("button", name="Play now").click()
    expect(page).to_have_url(re.compile(r"/t/[\w-]+/$"))
    deadline = time.monotonic() + 60
    played = 0
    while played < 2:
        assert time.monotonic() < deadline
        bids = page.locator(".bid-panel .bid-btn")
        if bids.count():
            page.locator(".bid-panel .bid-btn", has_text=re.compile(r"^2$")).click()
            expect(bids).to_have_count(0)
            continue
        legal = page.locator("#hand .card.legal")
        if legal.count():
            play_card(page, legal)
            played += 1
            expect(page.locator("#hand .card")).to_have_count(13 - played)
            continue
        page.wait_for_timeout(100)
    # The socket drops: the page reconnects with backoff and resyncs from its last version.
    version = page.evaluate("window.spadesTable.version")
    page.evaluate("window.spadesTable.socket.close()")
    page.wait_for_function("() => window.spadesTable.socket.readyState === WebSocket.OPEN")
    page.wait_for_function(f"() => window.spadesTable.version >= {version}")
    expect(page.locator("#hand .card")).to_have_count(11)
    bid_before = page.locator('.seat-box[data-rel="0"] .bid').inner_text()
    page.reload()
    expect(page.locator("#hand .card")).to_have_count(11)
    expect(page.locator('.seat-box[data-rel="0"] .bid')).to_have_text(bid_before)
    expect(page.locator("#status")).not_to_have_text("Connecting…")


def test_second_player_joins_a_private_table_by_invite_link(
    daphne_server: str, new_page: Callable[..., Page], screenshot_dir: Path
) -> None:
    host = new_page()
    become_guest(host, daphne_server, "Hilda")
    table_url = create_table(
        host, daphne_server, ["invite", "BIS+SRP", "me", "BIS+SRP"], private=True
    )
    invite = host.locator("#invite-url").input_value()
    assert "/join/" in invite
    expect(host.locator("#status")).to_have_text("Waiting for players: invite friends or add bots.")

    friend = new_page(390, 844)  # a phone-sized screen
    friend.goto(table_url)
    expect(friend.get_by_role("heading", name="This table is private")).to_be_visible()
    friend.goto(invite)
    expect(friend).to_have_url(table_url)
    friend.locator(".guest-inline input[name=name]").fill("Fred")
    friend.locator(".guest-inline button").click()
    north = friend.locator(".seat-row", has_text="North")
    north.get_by_role("button", name="Sit here").click()
    expect(friend.locator(".seat-row", has_text="North")).to_contain_text("Fred (you)")

    # The host sees Fred arrive without reloading, and starts.
    expect(host.locator(".seat-row", has_text="North")).to_contain_text("Fred")
    # The host is told to start; the others that the host will.
    expect(host.locator("#status")).to_have_text(
        "All four seats are taken: start the match when you are ready."
    )
    expect(friend.locator("#status")).to_have_text(
        "All four seats are taken: waiting for the host to start."
    )
    host.screenshot(path=str(screenshot_dir / "seating.png"))
    host.get_by_role("button", name="Start the match").click()
    expect(friend.locator("#seating")).to_be_hidden()
    # Fred (North) sits at the bottom of his screen with Hilda, his partner, on top.
    expect(friend.locator('.seat-box[data-rel="0"] .name')).to_contain_text("You")
    expect(friend.locator('.seat-box[data-rel="2"] .name')).to_contain_text("Hilda")
    expect(host.locator('.seat-box[data-rel="2"] .name')).to_contain_text("Fred")
    expect(friend.locator("#status")).not_to_have_text("Connecting…")
    friend.screenshot(path=str(screenshot_dir / "phone-table.png"), full_page=True)

    # Chat is escaped: markup arrives as text.
    friend.fill("#chat-input", "<b>hi</b> partner")
    friend.locator("#chat-form button").click()
    expect(host.locator("#chat-log li").last).to_contain_text("<b>hi</b> partner")
    assert host.locator("#chat-log b").count() == 0


def test_a_player_who_times_out_is_away_until_back(
    daphne_server: str, new_page: Callable[..., Page], screenshot_dir: Path
) -> None:
    page = new_page(1366, 768)
    become_guest(page, daphne_server, "Wandering Will")
    bots = "BIS+SRP"
    create_table(
        page,
        daphne_server,
        [bots, bots, "me", bots],
        goal=5000,
        # Long enough for a page drawing a backlog of frames on a loaded
        # machine to act in time once he is back (8 s was tight in CI).
        extra={"turn_seconds": "12"},
        unchecked=("blind_nil",),  # no card exchange: his turns are bids and cards
    )
    page.get_by_role("button", name="Start the match").click()
    # Will never bids: after 12 s the stand-in bids for him, never nil.
    note = page.locator("#away-note")
    expect(note).to_be_visible(timeout=20_000)
    expect(page.locator("#away-played")).to_contain_text(re.compile(r"Played for you: bid [1-9]"))
    assert "nil" not in page.locator("#away-played").inner_text()
    expect(page.locator('.seat-box[data-rel="0"]')).to_have_class(re.compile(r"\baway\b"))
    # Three bots of one kind, three names you can tell apart, each saying which bot.
    boxes = [page.locator(f'.seat-box[data-rel="{r}"]') for r in (1, 2, 3)]
    names = [b.locator(".name").inner_text() for b in boxes]
    kinds = [b.locator(".bot-kind").inner_text() for b in boxes]
    assert len(set(names)) == 3 and kinds == ["bot · BIS+SRP"] * 3, (names, kinds)
    page.screenshot(path=str(screenshot_dir / "away-notice-1366x768.png"))
    # The notice makes room for itself: the hand and "I'm back" stay on screen.
    check_table_fits(page, 1366, 768, "away", "#back-btn")
    # While he is away his seat costs the table no timer: 40 more moves (ten
    # of them his) go by in a few seconds; at 12 s per turn of his it takes 120 s.
    start, first = time.monotonic(), page.evaluate("window.spadesTable.version")
    while page.evaluate("window.spadesTable.version") < first + 40:
        assert time.monotonic() - start < 15
        page.wait_for_timeout(100)
    expect(page.locator("#away-played")).to_contain_text("played the")
    page.get_by_role("button", name="I'm back").click()
    expect(note).to_be_hidden()
    # The page hides the notice at once; the server says he is back by the
    # seat it sends (no longer marked away).
    mine = page.locator('.seat-box[data-rel="0"]')
    expect(mine).not_to_have_class(re.compile(r"\baway\b"))
    # Back: his own turn waits for him (his timer runs) and he moves himself.
    deadline = time.monotonic() + 30
    while True:
        assert time.monotonic() < deadline
        bids = page.locator(".bid-panel .bid-btn", has_text=re.compile(r"^[1-9]$"))
        legal = page.locator("#hand .card.legal")
        if "turn" in (mine.get_attribute("class") or "") and (bids.count() or legal.count()):
            break
        page.wait_for_timeout(50)
    page.wait_for_timeout(1500)  # a bot's pace would have moved for him by now
    expect(mine).to_have_class(re.compile(r"\bturn\b"))
    expect(mine.locator(".seat-timer")).to_be_visible()
    version = page.evaluate("window.spadesTable.version")
    if bids.count():
        bids.first.click()
    else:
        play_card(page, legal)
    # His own move is the next version (his timer, 12 s, has not run out).
    # A function, not an expression: Playwright evaluates an expression again at each
    # poll, which the page's CSP (no 'unsafe-eval') refuses once the first check is false.
    page.wait_for_function(f"() => window.spadesTable.version > {version}", timeout=10_000)
    expect(mine).not_to_have_class(re.compile(r"\baway\b"))
    expect(note).to_be_hidden()


def test_your_tables_returns_to_a_running_game(
    daphne_server: str, new_page: Callable[..., Page], screenshot_dir: Path
) -> None:
    page = new_page(1366, 768)
    page.goto(daphne_server + "/")
    page.fill("#id_play_name", "Returning Rosa")
    page.get_by_role("button", name="Play now").click()
    expect(page).to_have_url(re.compile(r"/t/[\w-]+/$"))
    table_url = page.url
    expect(page.locator(".bid-panel .bid-btn").first).to_be_visible(timeout=20_000)
    page.get_by_role("link", name="Lobby").click()
    listed = page.locator("#your-tables li")
    expect(listed).to_have_count(1)
    expect(listed).to_contain_text("you are South")
    expect(listed).to_contain_text("your turn")
    expect(page.get_by_role("button", name="Start a new game")).to_be_visible()
    page.screenshot(path=str(screenshot_dir / "your-tables.png"))
    page.get_by_role("link", name="Return to your game").click()
    expect(page).to_have_url(table_url)
    expect(page.locator(".bid-panel .bid-btn").first).to_be_visible()
    # Leaving is explicit (confirmed), and a bot plays the seat from then on.
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Leave the match").click()
    expect(page).to_have_url(daphne_server + "/")
    expect(page.locator("#your-tables")).to_have_count(0)
    expect(page.get_by_role("button", name="Play now")).to_be_visible()
