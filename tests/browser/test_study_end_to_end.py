"""Issue 43's end-to-end run: the example study, shortened, in Chromium over Daphne.

Four participants arrive at different times, each in their own browser
context, and go the whole way: consent, instructions, the quiz (one fails an
attempt, then passes), the waiting room, a match at a study table played out
by clicking, the questionnaire, the debrief where their condition has one,
and the completion page. The assignment follows the study's seed
(``studies.assignment.sequence``), so the test knows which arrival lands in
which condition and times the arrivals for what it wants to see: in the
two-participant condition of hidden bots, two participants who wait together
share a table; in the other condition (here also two participant seats, bots
shown), each participant waits alone past the timeout and the stand-in takes
their partner's seat. Then what the database holds and every file
``export_study`` writes are checked against what the browsers did.
"""

from __future__ import annotations

import csv
import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect

from studies.assignment import sequence
from tests.support.analysis_check import agrees, direct_count, run
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

MATCH_SECONDS = 150
CODE = "C7XK2P9Q"
REDIRECT = "https://app.prolific.com/submissions/complete?cc=C7XK2P9Q"
WRONG_FIRST = ("The player on your left", "Spades", "50 points")
# The two conditions, in the file's order: the first is made a two-participant
# condition too (bots shown), so that one condition shows the timeout's stand-in.
SHOWN, HIDDEN = "human-with-bot-partner", "two-humans"
SHOWN_SEATS = 'seats = { N = "participant", E = "RB+SRP", S = "participant", W = "RB+SRP" }'


def short_study(tmp_path: Path) -> Path:
    """The example with one-round matches, no bot pacing and a short wait."""
    text = EXAMPLE.read_text()
    replacements = {
        "winning_goal = 100": "winning_goal = 10",
        "losing_goal = -100": "losing_goal = -10",
        "turn_seconds = 45": "turn_seconds = 300",
        "bot_delay = 1.5": "bot_delay = 0",
        'seats = { N = "BIS+SRP", E = "RB+SRP", S = "participant", W = "RB+SRP" }': SHOWN_SEATS,
        "timeout_seconds = 60": f"timeout_seconds = {WAIT_SECONDS}",
    }
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "study.toml"
    path.write_text(text)
    return path


def answer_quiz(page: Page, answers: tuple[str, ...]) -> None:
    for text in answers:
        page.get_by_label(text, exact=True).check()
    page.get_by_role("button", name="Check my answers").click()


def way_out(page: Page, debrief: bool) -> None:
    """From the match's end: the questionnaire, the debrief if any, the completion page."""
    page.locator("#after-match-link").click()
    heading(page, "A few questions about your experience")
    for item, value in LIKERT.items():
        page.locator(f"#item-{item}-{value}").check()
    page.locator("#item-comments").fill(f"Fine partner ({page.url[-4:]})")
    page.get_by_role("button", name="Send my answers").click()
    if debrief:
        heading(page, "About this study")
        expect(page.locator(".study-text")).to_contain_text("your two opponents were")
        page.get_by_role("button", name="Continue").click()
    heading(page, "Thank you: you have completed the study")
    expect(page.locator("#completion-code")).to_have_text(CODE)
    expect(page.locator("#completion-link")).to_have_attribute("href", REDIRECT)


def test_four_participants_through_the_example_study(
    daphne_server, new_page: Callable[..., Page], tmp_path: Path, screenshot_dir: Path
) -> None:
    started = time.monotonic()
    assert manage(daphne_server, "load_study", str(short_study(tmp_path))).strip() == SLUG
    conditions = [SHOWN, HIDDEN]
    order = [conditions[n] for n in sequence(SEED, 2, 4)]
    raw_ids = [f"e2e-pid-{n}" for n in range(4)]
    condition_of = dict(zip(raw_ids, order, strict=True))
    shown = [r for r in raw_ids if condition_of[r] == SHOWN]
    hidden = [r for r in raw_ids if condition_of[r] == HIDDEN]
    assert len(shown) == len(hidden) == 2  # balanced blocks of two

    returned: list[str] = []

    def arrived_at_platform(route: Route) -> None:
        returned.append(route.request.url)
        route.fulfill(body="Submission complete", content_type="text/plain")

    pages: dict[str, Page] = {}
    for raw_id in raw_ids:  # consent in this order: the assignment follows it
        page = new_page(1280, 860)
        # The completion page leaves for the platform after a few seconds: the
        # platform is played by the test (offline), which notes who arrived.
        page.route("https://app.prolific.com/**", arrived_at_platform)
        pages[raw_id] = page
        way_in(page, daphne_server, raw_id)

    # The first bots-shown participant fails the quiz once, then passes, and
    # waits alone until the stand-in takes their partner's seat.
    first, second = shown
    answer_quiz(pages[first], WRONG_FIRST)
    expect(pages[first].get_by_role("alert")).to_contain_text("question 1 was not answered right")
    answer_quiz(pages[first], RIGHT)
    heading(pages[first], "Waiting room")
    expect(pages[first].locator("#waiting-number")).to_have_text("1")
    waited = time.monotonic()
    reach_table(pages[first])
    assert time.monotonic() - waited >= WAIT_SECONDS - 1
    # The two hidden-bots participants arrive together and share a table at once.
    for raw_id in hidden:
        answer_quiz(pages[raw_id], RIGHT)
    for raw_id in hidden:
        reach_table(pages[raw_id])
    # The second bots-shown participant comes later: alone too, a stand-in partner.
    answer_quiz(pages[second], RIGHT)
    reach_table(pages[second])
    # The table stays in the study: no site links, no chat, bots in plain words
    # where they are shown, and a way out that says what it is.
    for raw_id, page in pages.items():
        expect(page.locator("#leave-btn")).to_have_text("Stop taking part")
        assert page.locator("header a").count() == 0
        assert page.locator(".chat-card").count() == 0
        if condition_of[raw_id] == SHOWN:
            expect(page.locator(".bot-kind:not([hidden])").first).to_have_text("computer player")
    pages[first].screenshot(path=str(screenshot_dir / "study-table.png"))

    deadline = time.monotonic() + MATCH_SECONDS
    over: set[str] = set()
    while len(over) < 4:
        assert time.monotonic() < deadline, f"matches not over in time: {sorted(over)}"
        for raw_id, page in pages.items():
            if raw_id not in over and step(page):
                over.add(raw_id)
    pages[hidden[0]].screenshot(path=str(screenshot_dir / "study-match-over.png"))
    for raw_id, page in pages.items():
        way_out(page, debrief=condition_of[raw_id] == HIDDEN)
    pages[hidden[0]].screenshot(path=str(screenshot_dir / "study-completed.png"))
    for page in pages.values():  # each is sent back on its own after the countdown
        page.wait_for_url(REDIRECT, timeout=20_000)
        expect(page.locator("body")).to_have_text("Submission complete")
    assert returned == [REDIRECT] * 4

    # ----- what the database holds -----
    pseudonym = dict(
        query(
            daphne_server,
            "SELECT r.raw_id, p.pseudonym FROM studies_recruitmentid r "
            "JOIN studies_participant p ON p.id = r.participant_id",
        )
    )
    by_pseudonym = {p: r for r, p in pseudonym.items()}
    assigned = query(
        daphne_server,
        "SELECT p.pseudonym, c.name, a.sequence FROM studies_assignment a "
        "JOIN studies_participant p ON p.id = a.participant_id "
        "JOIN studies_condition c ON c.id = a.condition_id ORDER BY a.sequence",
    )
    assert [(by_pseudonym[p], name, n) for p, name, n in assigned] == [
        (r, condition_of[r], n) for n, r in enumerate(raw_ids)
    ]
    counts = [sum(c == name for c in order) for name in conditions]
    assert max(counts) - min(counts) <= 1
    tables = query(
        daphne_server,
        "SELECT st.id, c.name, st.filled_by_stand_in, t.public_id FROM studies_studytable st "
        "JOIN studies_condition c ON c.id = st.condition_id "
        "JOIN game_table t ON t.id = st.table_id ORDER BY st.id",
    )
    seats = query(
        daphne_server,
        "SELECT s.study_table_id, p.pseudonym, s.position, s.dropped FROM studies_studyseat s "
        "JOIN studies_participant p ON p.id = s.participant_id "
        "ORDER BY s.study_table_id, s.position",
    )
    grouping = {
        table_id: [(by_pseudonym[p], pos) for t, p, pos, _ in seats if t == table_id]
        for table_id, *_ in tables
    }
    # In arrival order at the tables: the first alone (stand-in at S), the two
    # together (the first to wait at N), the last alone.
    assert [(name, filled) for _, name, filled, _ in tables] == [
        (SHOWN, 1),
        (HIDDEN, 0),
        (SHOWN, 1),
    ]
    assert list(grouping.values()) == [
        [(first, 0)],
        [(hidden[0], 0), (hidden[1], 2)],
        [(second, 0)],
    ]
    assert not any(dropped for *_, dropped in seats)
    kinds = query(
        daphne_server,
        "SELECT st.id, s.position, s.kind, s.bot_name FROM game_seat s "
        "JOIN studies_studytable st ON st.table_id = s.table_id ORDER BY st.id, s.position",
    )
    bots = {(t, pos): name for t, pos, kind, name in kinds if kind == "bot"}
    alone, together, later = (t for t, *_ in tables)
    stand_in_plan = {1: "RB+SRP", 2: "BIS+SRP", 3: "RB+SRP"}  # BIS+SRP: the stand_in_bot
    assert bots == {
        **{(alone, pos): name for pos, name in stand_in_plan.items()},
        (together, 1): "BIS+SRP",
        (together, 3): "BIS+SRP",
        **{(later, pos): name for pos, name in stand_in_plan.items()},
    }

    # ----- the export -----
    out = tmp_path / "export"
    manage(daphne_server, "export_study", SLUG, "--out", str(out), "--with-payments",
           "--include-pilot")  # fmt: skip
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "actions.csv",
        "answers.csv",
        "audit.csv",
        "bulk_bonus.csv",
        "codebook.md",
        "conditions.csv",
        "participants.csv",
        "payments.csv",
        "rounds.csv",
        "study.toml",
    ]
    # The study file itself, as loaded: it hashes to the codebook's SHA-256.
    source = (out / "study.toml").read_bytes()
    assert source == (tmp_path / "study.toml").read_bytes()
    assert f"SHA-256 `{hashlib.sha256(source).hexdigest()}`" in (out / "codebook.md").read_text()

    participants = read_csv(out / "participants.csv")
    assert [row["pseudonym"] for row in participants] == [pseudonym[r] for r in raw_ids]
    for raw_id, row in zip(raw_ids, participants, strict=True):
        assert row["condition"] == condition_of[raw_id]
        assert row["pilot"] == "true"
        assert row["stage"] == "completed"
        assert row["quiz_attempts"] == ("2" if raw_id == first else "1")
        assert (row["outcome"], row["outcome_at"]) == ("completed", row["entered_completed"])
        # Blocks of two in consent order: the nth arrival took slot n % 2 of block n // 2.
        n = raw_ids.index(raw_id)
        slot = (row["assignment_sequence"], row["assignment_block"], row["position_in_block"])
        assert slot == (str(n), str(n // 2), str(n % 2)) and row["assignment_seed"]
        # The two who waited alone had the stand-in at their partner's seat, S.
        assert row["stand_in_seats"] == ("S" if raw_id in (first, second) else "")
        entered = ["consented", "instructions", "quiz", "waiting", "playing", "questionnaire"]
        entered += ["debrief"] if raw_id in hidden else []
        entered += ["completed"]
        times = [row[f"entered_{s}"] for s in entered]
        assert all(times) and times == sorted(times), (raw_id, times)
        missing = {k for k, v in row.items() if k.startswith("entered_") and not v}
        never = ("screening", "failed_quiz", "screened_out", "dropped")
        assert missing == {f"entered_{s}" for s in never} | (
            set() if raw_id in hidden else {"entered_debrief"}
        ), (raw_id, missing)

    answers = read_csv(out / "answers.csv")
    expected = []
    for raw_id in raw_ids:
        attempts = [WRONG_FIRST, RIGHT] if raw_id == first else [RIGHT]
        for number, given in enumerate(attempts, 1):
            expected += [
                (pseudonym[raw_id], "quiz", f"q{q}", str(number), text)
                for q, text in enumerate(given, 1)
            ]
    questionnaire = {
        (pseudonym[r], "questionnaire", item, "", value)
        for r in raw_ids
        for item, value in LIKERT.items()
    }
    rows = [(a["pseudonym"], a["kind"], a["item_id"], a["attempt"], a["value"]) for a in answers]
    assert sorted(r for r in rows if r[1] == "quiz") == sorted(expected)
    given = [r for r in rows if r[1] == "questionnaire"]
    assert {r for r in given if r[2] != "comments"} == questionnaire
    comments = {r[0]: r[4] for r in given if r[2] == "comments"}
    assert set(comments) == set(pseudonym.values())
    assert all(c.startswith("Fine partner") for c in comments.values())

    assert read_csv(out / "conditions.csv") == [
        {"name": SHOWN, "seat_n": "participant", "seat_e": "RB+SRP", "seat_s": "participant",
         "seat_w": "RB+SRP", "disclosure": "bots"},
        {"name": HIDDEN, "seat_n": "participant", "seat_e": "BIS+SRP", "seat_s": "participant",
         "seat_w": "BIS+SRP", "disclosure": "names"},
    ]  # fmt: skip

    actions = read_csv(out / "actions.csv")
    letters = "NESW"
    for table_id, _, filled, public_id in tables:
        mine = [a for a in actions if a["table"] == public_id]
        (stored,) = query(
            daphne_server,
            "SELECT count(*) FROM game_action a JOIN game_table t ON t.id = a.table_id "
            "WHERE t.public_id = ?",
            public_id,
        )[0]
        assert len(mine) == stored > 0
        versions = [int(a["version"]) for a in mine]
        assert versions == sorted(versions)
        seated = {letters[pos]: pseudonym[r] for r, pos in grouping[table_id]}
        for a in mine:
            if a["seat"] in seated:
                assert (a["player_kind"], a["player"]) == ("participant", seated[a["seat"]])
                # Generous turn timers: every participant move is their own, timed.
                assert a["by_stand_in"] == "false", a
                think, bound = int(a["think_ms"]), int(a["think_bound_ms"])
                assert 0 <= think <= bound, a
            else:
                fill = filled and a["seat"] == "S"  # the waiting room's stand-in
                assert a["player_kind"] == ("stand-in" if fill else "bot")
                assert a["player"] == bots[(table_id, letters.index(a["seat"]))]
                assert a["by_stand_in"] == "false"
            assert a["stand_in_fill"] == ("true" if filled else "false")
        assert {a["seat"] for a in mine if a["player_kind"] == "participant"} == set(seated)
        assert {a["round"] for a in mine} >= {"1"}
        assert all(json.loads(a["action"])["type"] for a in mine)
    assert len(actions) == sum(
        query(
            daphne_server,
            "SELECT count(*) FROM game_action a JOIN studies_studytable st "
            "ON st.table_id = a.table_id",
        )[0]
    )

    rounds = read_csv(out / "rounds.csv")
    for table_id, name, filled, public_id in tables:
        mine = [r for r in rounds if r["table"] == public_id]
        stored = query(
            daphne_server,
            "SELECT r.round_number, r.score_ns, r.score_ew FROM game_roundrecordrow r "
            "JOIN game_table t ON t.id = r.table_id WHERE t.public_id = ? "
            "ORDER BY r.round_number",
            public_id,
        )
        assert [(int(r["round"]), int(r["score_ns"]), int(r["score_ew"])) for r in mine] == [
            tuple(row) for row in stored
        ]
        assert mine and {r["condition"] for r in mine} == {name}
        seated = {letters[pos].lower(): pseudonym[r] for r, pos in grouping[table_id]}
        for seat in "nesw":
            players = {(r[f"player_kind_{seat}"], r[f"player_{seat}"]) for r in mine}
            if seat in seated:
                assert players == {("participant", seated[seat])}
            else:
                kind = "stand-in" if filled and seat == "s" else "bot"
                assert players == {(kind, bots[(table_id, "nesw".index(seat))])}
        # A filled table's rounds: flagged, and stand-in rounds for the analyses.
        assert {(r["stand_in_fill"], r["actor_s"]) for r in mine} == (
            {("true", "stand-in")} if filled else {("false", "human")}
        )
        if filled:
            assert {r["stand_in_round"] for r in mine} == {"true"}
        assert mine[-1]["match_winner"] in ("NS", "EW")
        assert {r["match"] for r in mine} == {"1"}  # one match per participant

    payments = read_csv(out / "payments.csv")
    assert {p["pseudonym"]: p["recruitment_id"] for p in payments} == by_pseudonym
    for p in payments:
        assert (p["completed"], p["completion_code"], p["currency"]) == ("true", CODE, "GBP")
        assert p["points"] != ""
        assert p["bonus"] == f"{min(max(int(p['points']), 0) * 0.01, 1.5):.2f}"
        assert (p["outcome"], p["paid"]) == ("completed", "true")
    with (out / "bulk_bonus.csv").open(newline="") as f:
        bulk = list(csv.reader(f))  # no header; only bonuses above zero
    assert bulk == [[p["recruitment_id"], p["bonus"]] for p in payments if float(p["bonus"]) > 0]
    for name in ("participants.csv", "answers.csv", "conditions.csv", "rounds.csv",
                 "actions.csv", "audit.csv", "study.toml", "codebook.md"):  # fmt: skip
        text = (out / name).read_text()
        assert not any(r in text for r in raw_ids), name  # raw IDs only in payments.csv

    book = (out / "codebook.md").read_text()
    for name in names:
        if name.endswith(".csv") and name != "bulk_bonus.csv":  # Prolific's: no header
            assert f"## {name}" in book
            with (out / name).open(newline="") as f:
                header = next(csv.reader(f))
            for column in header:
                assert f"| `{column}` |" in book, (name, column)

    # ----- the researcher's analysis (docs/examples/analyse_study.py) -----
    # The example is a pilot study: left out unless asked, so nothing is counted.
    _, plain = run(out, tmp_path)
    agrees(out, plain, direct_count(out, include_pilot=False, include_stand_in=False))
    assert plain["partnership_rounds"] == {SHOWN: 0, HIDDEN: 0}
    filled_rounds = sum(r["stand_in_fill"] == "true" for r in rounds)
    hidden_rounds = sum(r["condition"] == HIDDEN for r in rounds)
    assert plain["left_out"]["partnership_rounds"]["pilot"] == filled_rounds + hidden_rounds
    # Pilots kept: the two partners' table counts (one partnership-round per round);
    # the bots-shown tables, each filled by the stand-in, only when asked.
    _, pilots = run(out, tmp_path, "--include-pilot")
    agrees(out, pilots, direct_count(out, include_pilot=True, include_stand_in=False))
    assert pilots["partnership_rounds"] == {SHOWN: 0, HIDDEN: hidden_rounds}
    assert pilots["left_out"]["partnership_rounds"] == {
        "pilot": 0,
        "excluded": 0,
        "stand_in": filled_rounds,
    }
    timed = {(t["condition"], t["decision"]): t["n"] for t in pilots["think_times"]}
    assert timed[(HIDDEN, "bid")] == 2 * hidden_rounds and timed[(SHOWN, "bid")] == 0
    _, everything = run(out, tmp_path, "--include-pilot", "--include-stand-in")
    agrees(out, everything, direct_count(out, include_pilot=True, include_stand_in=True))
    assert everything["partnership_rounds"] == {SHOWN: filled_rounds, HIDDEN: hidden_rounds}
    assert timed[(HIDDEN, "card")] > 0
    print(f"end-to-end study run: {time.monotonic() - started:.1f}s")
