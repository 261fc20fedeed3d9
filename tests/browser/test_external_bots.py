"""Bring your own bot, with a real browser (issue 60's first Done-when): the
reference client package (clients/python, ``python -m spades_bot_client``) in
a process of its own plays a whole match at a Daphne beside a guest clicking
in Chromium and two house bots; and four clients, each in its own process,
play a table of their own that the browser opened and watches: the package
twice, the one-file Python client needing only ``websockets``
(docs/examples/spades_bot.py) and the JavaScript one on Node's own WebSocket
(docs/examples/spades_bot.mjs). The rounds are stored with the external bot
as the seat's actor (its own moves, none its stand-in's), and its rating moves."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support.table_steps import become_guest, create_table, play_card

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "python"
EXAMPLES = ROOT / "docs" / "examples"
# Each client's command line, its URL and options appended.
CLIENTS = {
    "package": [sys.executable, "-m", "spades_bot_client"],
    "python": [sys.executable, str(EXAMPLES / "spades_bot.py")],
    "node": ["node", "--experimental-websocket", str(EXAMPLES / "spades_bot.mjs")],
}
MATCH_TIMEOUT_SECONDS = 300
ACCOUNT = """
from django.contrib.auth.models import User
from botapi import accounts
owner, _ = User.objects.get_or_create(username="author")
print(accounts.register(owner, "{name}", "a random legal bot", "author@example.org")[1])
"""


def _env(server: str) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{server.database}",  # type: ignore[attr-defined]
           "DJANGO_SETTINGS_MODULE": "spadesite.settings"}  # fmt: skip
    for key in ("REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"):
        env.pop(key, None)
    return env


def _register(server: str, name: str) -> str:
    """A bot account on the server's database; its token."""
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", ACCOUNT.format(name=name)],
                          cwd=ROOT, env=_env(server), check=True, timeout=120,
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.split()[-1]


@pytest.fixture
def bots(daphne_server: str) -> Iterator[Callable[[str, str], subprocess.Popen[str]]]:
    """Start reference clients, each in its own process, and stop them after the test."""
    started: list[subprocess.Popen[str]] = []
    url = daphne_server.replace("http://", "ws://") + "/ws/bot/"

    def start(token: str, seed: str, client: str = "package") -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [*CLIENTS[client], url, "--matches", "1", "--seed", seed],
            # Nothing of the repository on the path but the package: the clients stand alone.
            env={"SPADES_BOT_TOKEN": token, "PATH": os.environ.get("PATH", ""),
                 "PYTHONPATH": str(PACKAGE) if client == "package" else ""},
            cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)


def _report(process: subprocess.Popen[str]) -> dict:
    """The client's last line once it has stopped after its match."""
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def _query(server: str, sql: str, *args: object) -> list[tuple]:
    with sqlite3.connect(server.database) as db:  # type: ignore[attr-defined]
        return db.execute(sql, args).fetchall()


def _table_pk(server: str, url: str) -> int:
    public_id = re.search(r"/t/([\w-]+)/$", url).group(1)  # type: ignore[union-attr]
    return _query(server, "SELECT id FROM game_table WHERE public_id = ?", public_id)[0][0]


def _play_to_the_end(page: Page) -> None:
    """Bid 3 and play the first legal card until the match is over."""
    deadline = time.monotonic() + MATCH_TIMEOUT_SECONDS
    while not page.locator("#match-over").is_visible():
        assert time.monotonic() < deadline, "the match did not end in time"
        summary = page.locator("#round-summary")
        if summary.is_visible():
            summary.get_by_role("button", name="Next round").click()
            continue
        bids = page.locator(".bid-panel .bid-btn")
        if bids.count() > 0:
            target = page.locator(".bid-panel .bid-btn", has_text=re.compile(r"^3$"))
            with contextlib.suppress(PlaywrightTimeoutError, AssertionError):
                (target if target.count() else bids.last).click(timeout=3000)
                expect(bids).to_have_count(0)
            continue
        legal = page.locator("#hand .card.legal")
        if legal.count() > 0:
            with contextlib.suppress(PlaywrightTimeoutError, AssertionError):
                play_card(page, legal)
            continue
        page.wait_for_timeout(100)


def test_a_reference_client_bot_plays_a_guest_in_chromium_and_is_rated(
    daphne_server: str, new_page: Callable[..., Page], bots: Callable[..., subprocess.Popen[str]]
) -> None:
    token = _register(daphne_server, "livebot")
    client = bots(token, "3")  # connected before it is seated: told when it is
    page = new_page()
    become_guest(page, daphne_server, "Grace")
    url = create_table(page, daphne_server, ["BIS+SRP", "ext:livebot", "me", "BIS+SRP"],
                       goal=60, losing_goal=-60)  # fmt: skip
    # Shown as a bot at its seat, by its protocol name.
    expect(page.locator(".seat-row", has_text="East")).to_contain_text("ext:livebot")
    page.get_by_role("button", name="Start the match").click()
    expect(page.locator("#seating")).to_be_hidden()
    _play_to_the_end(page)
    expect(page.locator("#match-winner")).to_contain_text(re.compile(r"You (win|lose)"))

    report = _report(client)
    assert len(report["matches"]) == 1 and report["errors"] == []
    pk = _table_pk(daphne_server, url)
    assert _query(daphne_server, "SELECT status FROM game_table WHERE id = ?", pk) == [
        ("finished",)
    ]
    # Every move of East the bot's own, in time: none its stand-in's.
    moves, by_stand_in = _query(daphne_server, "SELECT count(*), sum(by_stand_in) FROM "
                                "game_action WHERE table_id = ? AND seat = 1", pk)[0]  # fmt: skip
    assert moves > 0 and by_stand_in == 0
    rows = _query(daphne_server, "SELECT seat_kinds, bot_n, bot_e, bot_s, bot_w FROM "
                  "game_roundrecordrow WHERE table_id = ?", pk)  # fmt: skip
    assert rows and set(rows) == {("BBHB", "BIS+SRP", "ext:livebot", "", "BIS+SRP")}
    rating = _query(daphne_server, "SELECT matches, mu FROM game_rating WHERE key = ?",
                    "b:ext:livebot")  # fmt: skip
    assert len(rating) == 1 and rating[0][0] == 1 and rating[0][1] != 25.0
    # On the leaderboard's bots, as a bot kind: its interval and n, as the house bots'.
    page.goto(daphne_server + "/leaderboard/")
    row = page.locator("#bots tbody tr", has_text="ext:livebot")
    expect(row.locator("td").nth(2)).to_contain_text(re.compile(r"^-?[\d.]+ to [\d.]+$"))
    expect(row.locator("td").nth(3)).to_have_text("1")


def test_four_reference_client_bots_play_a_table_the_browser_watches(
    daphne_server: str, new_page: Callable[..., Page], bots: Callable[..., subprocess.Popen[str]]
) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    names = [f"four{p}" for p in range(4)]
    kinds = ["package", "python", "package", "node"]
    clients = [bots(_register(daphne_server, n), str(p), kind)
               for p, (n, kind) in enumerate(zip(names, kinds, strict=True))]  # fmt: skip
    page = new_page()
    become_guest(page, daphne_server, "Host")
    url = create_table(page, daphne_server, [f"ext:{n}" for n in names], goal=60, losing_goal=-60)
    page.get_by_role("button", name="Start the match").click()
    # The host watches: the match ends without anyone clicking.
    expect(page.locator("#match-over")).to_be_visible(timeout=MATCH_TIMEOUT_SECONDS * 1000)
    for client in clients:
        report = _report(client)
        assert len(report["matches"]) == 1 and report["errors"] == []
    pk = _table_pk(daphne_server, url)
    counts = _query(daphne_server, "SELECT seat, count(*), sum(by_stand_in) FROM game_action "
                    "WHERE table_id = ? GROUP BY seat ORDER BY seat", pk)  # fmt: skip
    assert [(s, n > 0, stood) for s, n, stood in counts] == [(p, True, 0) for p in range(4)]
    rows = _query(daphne_server, "SELECT seat_kinds, bot_n, bot_e, bot_s, bot_w FROM "
                  "game_roundrecordrow WHERE table_id = ?", pk)  # fmt: skip
    assert rows and set(rows) == {("BBBB", *(f"ext:{n}" for n in names))}
