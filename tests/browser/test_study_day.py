"""A study day off the happy path, in Chromium over Daphne: the example study
with four participants, each on a path of its own.

- **Alone in the names condition**: waits past the timeout, the stand-in takes
  the partner's seat under a player's name; they complete, and their debrief
  says which seats were programs (not "your partner was another participant").
- **Misses a timer and comes back**: lets their turn timer run out once, reads
  on the page what happens if they stay away, presses "I'm back", plays on and
  completes: questionnaire, code and bonus like anyone who completed.
- **Leaves for good**: alone in the names condition too, presses "Stop taking
  part": their end page says why their session ended, debriefs them about the
  stand-in they were shown as a person, and gives the drop-out's own code and
  redirect; they are paid no bonus.
- **Completes** in the bots-shown condition.

Then the export: outcomes, codes, pay (nothing negative, nothing for the one
who left, Prolific's bulk-bonus file) and the stand-in flags in every file.
"""

from __future__ import annotations

import contextlib
import csv
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect

from studies.assignment import sequence
from tests.support.study_browser import (
    EXAMPLE,
    LIKERT,
    RIGHT,
    SEED,
    SLUG,
    WAIT_SECONDS,
    heading,
    manage,
    query,
    reach_table,
    read_csv,
    way_in,
)
from tests.support.table_steps import step

pytestmark = pytest.mark.browser

TURN_SECONDS = 15
CODE = "C7XK2P9Q"
DROPPED_CODE = "DROPPED1"
DONE_URL = "https://app.prolific.com/submissions/complete?cc=C7XK2P9Q"
DROPPED_URL = "https://app.prolific.com/submissions/complete?cc=DROPPED1"
SHOWN, HIDDEN = "human-with-bot-partner", "two-humans"
MATCH_SECONDS = 240


def study_file(tmp_path: Path) -> Path:
    """The example with one-round matches, short timers and a code per ending."""
    text = EXAMPLE.read_text()
    replacements = {
        "winning_goal = 100": "winning_goal = 10",
        "losing_goal = -100": "losing_goal = -10",
        "turn_seconds = 45": f"turn_seconds = {TURN_SECONDS}",
        # Bots at a pace: a player marked away has time to press "I'm back".
        "bot_delay = 1.5": "bot_delay = 0.4",
        "timeout_seconds = 60": f"timeout_seconds = {WAIT_SECONDS}",
        '# codes = { failed_quiz = "FAILQZ01", dropped = "DROPPED1" }':
            'codes = { failed_quiz = "FAILQZ01", dropped = "DROPPED1" }',
        "# redirects = { failed_quiz = "
        '"https://app.prolific.com/submissions/complete?cc=FAILQZ01" }':
            f'redirects = {{ dropped = "{DROPPED_URL}" }}',
    }  # fmt: skip
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "study.toml"
    path.write_text(text)
    return path


def questionnaire(page: Page) -> None:
    page.locator("#after-match-link").click()
    heading(page, "A few questions about your experience")
    for item, value in LIKERT.items():
        page.locator(f"#item-{item}-{value}").check()
    page.locator("#item-comments").fill("Fine.")
    page.get_by_role("button", name="Send my answers").click()


def completed(page: Page) -> None:
    heading(page, "Thank you: you have completed the study")
    expect(page.locator("#completion-code")).to_have_text(CODE)
    expect(page.locator("#completion-link")).to_have_attribute("href", DONE_URL)


def test_a_study_day_off_the_happy_path(
    daphne_server, new_page: Callable[..., Page], tmp_path: Path, screenshot_dir: Path
) -> None:
    started = time.monotonic()
    assert manage(daphne_server, "load_study", str(study_file(tmp_path))).strip() == SLUG
    order = [(SHOWN, HIDDEN)[n] for n in sequence(SEED, 2, 4)]
    raw_ids = [f"day-pid-{n}" for n in range(4)]
    condition_of = dict(zip(raw_ids, order, strict=True))
    alone, leaver = (r for r in raw_ids if condition_of[r] == HIDDEN)
    returner, finisher = (r for r in raw_ids if condition_of[r] == SHOWN)

    def at_platform(route: Route) -> None:
        route.fulfill(body="Submission complete", content_type="text/plain")

    pages: dict[str, Page] = {}
    for raw_id in raw_ids:  # consent in this order: the assignment follows it
        page = new_page(1280, 860)
        page.route("https://app.prolific.com/**", at_platform)
        page.on("dialog", lambda dialog: dialog.accept())
        pages[raw_id] = page
        way_in(page, daphne_server, raw_id)

    def quiz_and_table(raw_id: str) -> None:
        for text in RIGHT:
            pages[raw_id].get_by_label(text, exact=True).check()
        pages[raw_id].get_by_role("button", name="Check my answers").click()
        reach_table(pages[raw_id])

    # The names condition's two arrive apart: each waits alone, then the stand-in
    # takes their partner's seat. The first leaves for good at once, and is told
    # what that means.
    quiz_and_table(leaver)
    leaving = pages[leaver]
    expect(leaving.locator("#leave-btn")).to_be_visible(timeout=10_000)
    leaving.locator("#leave-btn").click()
    heading(leaving, "This session has ended")
    expect(leaving.locator("#why-ended")).to_contain_text("You stopped taking part")
    expect(leaving.locator("#debrief")).to_contain_text("all three other players were computer")
    expect(leaving.locator("#debrief")).to_contain_text("meant for another participant")
    expect(leaving.locator("#completion-code")).to_have_text(DROPPED_CODE)
    expect(leaving.locator("#completion-link")).to_have_attribute("href", DROPPED_URL)
    leaving.screenshot(path=str(screenshot_dir / "study-day-left.png"))
    for raw_id in (alone, returner, finisher):
        quiz_and_table(raw_id)

    # The others play; the returner lets one turn timer run out first.
    playing = [alone, returner, finisher]
    came_back = False
    deadline = time.monotonic() + MATCH_SECONDS
    over: set[str] = set()
    while len(over) < len(playing):
        assert time.monotonic() < deadline, f"matches not over in time: {sorted(over)}"
        for raw_id in playing:
            page = pages[raw_id]
            if raw_id in over:
                continue
            if raw_id == returner and not came_back:
                note = page.locator("#away-note")
                if note.is_visible():
                    expect(page.locator("#away-rule")).to_contain_text("If you stay away for")
                    expect(page.locator("#away-rule")).to_contain_text("3 times in a row")
                    page.screenshot(path=str(screenshot_dir / "study-day-away.png"))
                    page.locator("#back-btn").click()
                    expect(note).to_be_hidden()
                    came_back = True
                elif page.locator("#match-over").is_visible():
                    pytest.fail("the match ended before the returner's timer ran out")
                continue  # their turn comes and goes: they do not act
            if step(page):
                over.add(raw_id)
    assert came_back

    for raw_id in playing:
        page = pages[raw_id]
        questionnaire(page)
        if raw_id == alone:  # shown a program under a player's name: told so
            heading(page, "About this study")
            told = page.locator(".study-text")
            # The file's stand_in_debrief, not the condition's (untrue for them).
            expect(told).to_contain_text("all three other players were computer programs")
            expect(told).to_contain_text("meant for another participant")
            expect(told).not_to_contain_text("your two opponents were computer programs")
            page.screenshot(path=str(screenshot_dir / "study-day-stand-in-debrief.png"))
            page.get_by_role("button", name="Continue").click()
        completed(page)

    # ----- the export -----
    out = tmp_path / "export"
    manage(daphne_server, "export_study", SLUG, "--out", str(out), "--with-payments",
           "--include-pilot")  # fmt: skip
    pseudonym = dict(query(daphne_server, "SELECT r.raw_id, p.pseudonym FROM "
                           "studies_recruitmentid r JOIN studies_participant p "
                           "ON p.id = r.participant_id"))  # fmt: skip
    people = {row["pseudonym"]: row for row in read_csv(out / "participants.csv")}
    row = {raw_id: people[pseudonym[raw_id]] for raw_id in raw_ids}
    assert {r: (row[r]["outcome"], row[r]["dropped_why"]) for r in raw_ids} == {
        alone: ("completed", ""),
        returner: ("completed", ""),
        finisher: ("completed", ""),
        leaver: ("dropped", "left"),
    }
    assert row[alone]["stand_in_seats"] == row[leaver]["stand_in_seats"] == "S"
    assert row[returner]["stand_in_seats"] == row[finisher]["stand_in_seats"] == ""

    payments = {p["pseudonym"]: p for p in read_csv(out / "payments.csv")}
    paid = {r: payments[pseudonym[r]] for r in raw_ids}
    for raw_id in (alone, returner, finisher):
        p = paid[raw_id]
        assert (p["outcome"], p["paid"], p["completion_code"]) == ("completed", "true", CODE)
        assert float(p["bonus"]) >= 0
    assert (paid[leaver]["outcome"], paid[leaver]["paid"]) == ("dropped", "false")
    assert paid[leaver]["completion_code"] == DROPPED_CODE
    assert paid[leaver]["bonus"] in ("", "0.00")
    with (out / "bulk_bonus.csv").open(newline="") as f:
        bulk = list(csv.reader(f))
    assert bulk == [
        [p["recruitment_id"], p["bonus"]]
        for p in payments.values()
        if p["paid"] == "true" and float(p["bonus"]) > 0
    ]
    assert leaver not in {line[0] for line in bulk}
    assert all(float(amount) > 0 for _, amount in bulk)

    # The tables: who sat where, and the stand-in's fill flagged in every file.
    tables = dict(query(daphne_server, "SELECT p.pseudonym, t.public_id FROM studies_studyseat s "
                        "JOIN studies_participant p ON p.id = s.participant_id "
                        "JOIN studies_studytable st ON st.id = s.study_table_id "
                        "JOIN game_table t ON t.id = st.table_id"))  # fmt: skip
    table_of = {r: tables[pseudonym[r]] for r in raw_ids}
    filled = {table_of[alone], table_of[leaver]}
    rounds = read_csv(out / "rounds.csv")
    actions = read_csv(out / "actions.csv")
    for public_id in table_of.values():
        mine = [r for r in rounds if r["table"] == public_id]
        assert mine, public_id
        fill = "true" if public_id in filled else "false"
        assert {r["stand_in_fill"] for r in mine} == {fill}
        assert {a["stand_in_fill"] for a in actions if a["table"] == public_id} == {fill}
        if public_id in filled:
            assert {r["stand_in_round"] for r in mine} == {"true"}
    # The returner's timer: the stand-in's moves for them are flagged, and some
    # of their moves are their own.
    theirs = [a for a in actions if a["table"] == table_of[returner] and a["seat"] == "S"]
    assert any(a["by_stand_in"] == "true" for a in theirs)
    assert any(a["by_stand_in"] == "false" and a["think_ms"] for a in theirs)
    (timers,) = query(daphne_server, "SELECT s.most_missed_in_a_row FROM game_seat s "
                      "JOIN game_table t ON t.id = s.table_id "
                      "WHERE t.public_id = ? AND s.position = 2", table_of[returner])  # fmt: skip
    assert timers == (1,)
    book = (out / "codebook.md").read_text()
    assert "| `dropped_why` |" in book
    with contextlib.suppress(Exception):
        pages[finisher].wait_for_url(DONE_URL, timeout=20_000)
    assert re.search(r"cc=C7XK2P9Q", pages[finisher].url)
    print(f"study day run: {time.monotonic() - started:.1f}s")
