"""A stored round replayed in Chromium with the keyboard: every card in order, the
hands right, the marks and the value graph those of the stored analysis, the
alternatives on request; a round whose analysis is not stored yet fills in."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from game.models import Table
from game.replays import tasks
from game.replays.models import RoundAnalysis
from game.research.storage import round_row_from_record
from spadesite.security import DEFAULT_POLICY
from tests.support.browser_checks import watch
from tests.support.replay_rounds import ENDING, FILLER, written_record

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SUIT = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}


def shown(card: str) -> str:
    return ("10" if card[0] == "T" else card[0]) + SUIT[card[1]]


def test_a_stored_round_replayed_with_the_keyboard(live_server: LiveServer, page: Page) -> None:
    doc = written_record([0, 3, 4, 3], f"{FILLER}  {ENDING}")
    table = Table.objects.create(rules=doc["rules"], status=Table.Status.FINISHED)
    rows = []
    for n in (1, 2):
        row = round_row_from_record(doc, table=table, version=52 * n, kinds="HHHH",
                                    bot_names=[None] * 4)  # fmt: skip
        row.round_number = n
        row.save()
        rows.append(row)
    tasks.analyse_row(rows[0])
    stored = RoundAnalysis.objects.get(round=rows[0])
    get_user_model().objects.create_user("staffer", password="pw-staff-123", is_staff=True)
    problems = watch(page)
    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=username]", "staffer")
    page.fill("input[name=password]", "pw-staff-123")
    page.locator("main form button[type=submit], main form input[type=submit]").first.click()

    response = page.goto(f"{live_server.url}/rounds/{rows[0].pk}/")
    assert response is not None and response.headers["content-security-policy"] == DEFAULT_POLICY
    expect(page.locator(".replay-label")).to_contain_text("Double-dummy analysis")
    hands = {s: page.locator(f'.hand[data-seat="{s}"] .chip') for s in "NESW"}
    for s in "NESW":
        expect(hands[s]).to_have_count(13)
    # The marks and the graph: the stored analysis's.
    result = stored.result
    rows_shown = page.locator("#card-list li")
    expect(rows_shown).to_have_count(52)
    marks = rows_shown.evaluate_all("(lis) => lis.map((li) => li.dataset.mark)")
    assert marks == [c["mark"] for c in result["cards"]]
    assert marks[37] == "large" and marks[45] == "small"
    values = page.locator("#graph-svg circle").evaluate_all(
        "(dots) => dots.map((d) => Number(d.dataset.value))"
    )
    assert values == result["values"]
    expect(page.locator("#makeable")).to_contain_text(f"North/South {result['makeable'][0]}")

    # Every card in order with the arrow key: the trick shows it, its hand lost it.
    state = """() => ({
        step: document.getElementById("step-label").textContent,
        trick: [...document.querySelectorAll("#trick .chip")].map((c) => c.dataset.card),
        hands: Object.fromEntries(["N", "E", "S", "W"].map((s) => [s, [...document.querySelectorAll(
            `.hand[data-seat="${s}"] .chip`)].map((c) => c.dataset.card)])),
        current: document.querySelector("#card-list li.current").dataset.index,
    })"""
    held = {s: set(doc["hands"][s].split()) for s in "NESW"}  # no blind nil exchange here
    page.locator("body").click(position={"x": 5, "y": 5})
    for i, trick in enumerate(doc["tricks"]):
        leader = "NESW".index(trick["leader"])
        for k, card in enumerate(trick["cards"]):
            held["NESW"[(leader + k) % 4]].discard(card)
            page.keyboard.press("ArrowRight")
            step = 4 * i + k + 1
            expect(page.locator("#step-label")).to_have_text(f"card {step} of 52")
            now = page.evaluate(state)
            assert now["trick"] == trick["cards"][: k + 1]
            assert {s: set(h) for s, h in now["hands"].items()} == held
            assert now["current"] == str(step - 1)
        expect(page.locator(".trick-line")).to_contain_text(f"Trick {i + 1}: ")
    expect(page.locator("#next")).to_be_disabled()
    page.keyboard.press("Home")
    expect(page.locator("#step-label")).to_have_text("before the first card")
    page.keyboard.press("PageDown")
    expect(page.locator("#step-label")).to_have_text("card 4 of 52")
    page.keyboard.press("End")
    expect(page.locator("#step-label")).to_have_text("card 52 of 52")
    expect(page.locator("#graph-svg circle.current")).to_have_attribute("data-index", "52")

    # South's 5H at trick 10 (card 38): its alternatives on request.
    page.locator("#slider").fill("38")
    expect(page.locator("#now-card")).to_contain_text("gives away 79 points and 0 tricks")
    expect(page.locator("#now-card .mark-large")).to_have_text("large")
    page.get_by_role("button", name="Alternatives").click()
    alternatives = page.locator("#alternatives tr")
    expect(alternatives).to_have_count(3)  # the header, AH and 5H
    expect(alternatives.nth(1)).to_contain_text(shown("AH"))
    expect(alternatives.nth(2)).to_contain_text("played")
    expect(alternatives.nth(2).locator("td").nth(2)).to_have_text("79")

    # A round not analysed yet says so, then fills in.
    page.goto(f"{live_server.url}/rounds/{rows[1].pk}/")
    expect(page.locator("#status")).to_contain_text("Analysing")
    expect(page.locator("#graph-svg circle")).to_have_count(0)
    tasks.analyse_row(rows[1], with_alternatives=False)
    expect(page.locator("#graph-svg circle")).to_have_count(53, timeout=15_000)
    expect(page.locator("#status")).to_have_text("")
    assert problems == []
