"""Searching bots (UCT) at a live table: within the bot time budget, SRP as the fallback."""

from __future__ import annotations

import logging
import random
import re
from typing import Any

import pytest

from bots import solver_compiled
from bots.srp import SRP
from bots.uct import UCT, UCTSearch
from game import builder, master
from game.driver import bot_turns, scheduling, tasks
from game.engine import Rules, view_for
from game.engine.cards import parse_card
from game.models import Action, Table
from game.moves import matches
from tests.support.helpers import SHORT_RULES, human_move, make_table
from tests.support.inline import InlineScheduler

pytestmark = pytest.mark.django_db(transaction=True)

LONG_RULES = Rules(winning_goal=1000, losing_goal=-1000)  # enough rounds for three searches

MOVE_LINE = re.compile(
    r"search move: table (\d+) version (\d+) seat (\d) source (\w+)"
    r" elapsed ([\d.]+) budget ([\d.]+)"
)


@pytest.fixture(autouse=True)
def kernels_loaded() -> None:
    """As a worker or server process does at its start (spadesite/celery.py,
    game/driver/runner.py): the compiled search kernels are in before a search."""
    solver_compiled.warm_up()


def search_moves(caplog: pytest.LogCaptureFixture) -> list[tuple[int, int, str, float]]:
    """(version, seat, source, elapsed) of every searched move logged."""
    out = []
    for record in caplog.records:
        m = MOVE_LINE.search(record.getMessage())
        if m:
            out.append((int(m[2]), int(m[3]), m[4], float(m[5])))
    return out


def expected_fallback(table: Table, version: int, seat: int) -> int:
    """SRP's move as play_turn computes it for the fallback."""
    view = view_for(matches.load_match(table, version), seat)
    return SRP().play(view, bot_turns.fallback_rng(table.seed, version, seat))


def test_uct_bots_play_a_match_in_process_every_search_within_budget(
    live: InlineScheduler,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.SPADES_BOT_BUDGET = 0.2
    caplog.set_level(logging.INFO, logger="game.driver.bot_turns")
    given: list[float] = []
    search_within = UCT.play_within

    def spy(self: UCT, view: Any, rng: Any, budget: float | None) -> int:
        if budget is not None:  # None: play() outside a live search
            given.append(budget)
        return search_within(self, view, rng, budget)

    monkeypatch.setattr(UCT, "play_within", spy)
    table = make_table("BBBB", rules=SHORT_RULES, bot="BIS+UCT5")
    assert table.status == Table.Status.FINISHED
    moves = search_moves(caplog)
    assert len(moves) >= 4  # a round has about 10 searched moves
    assert {source for _, _, source, _ in moves} == {"search"}
    # Each search was given what was left of the budget less a submit's time
    # (the search keeps to what it is given: tests/bots/test_uct.py, with a
    # clock of its own; the wall clock here would time the machine's load).
    assert len(given) == len(moves)
    assert all(0 < b <= 0.2 - bot_turns.submit_reserve(0.2) for b in given)
    # One log line per searched move, for the move that was stored.
    stored = {a.version - 1: a.seat for a in Action.objects.filter(table=table)}
    assert all(stored[v] == seat for v, seat, _, _ in moves)


def test_a_failing_search_plays_srps_move_in_process(
    live: InlineScheduler,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.SPADES_BOT_BUDGET = 0.1

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the search broke")

    monkeypatch.setattr(UCTSearch, "run", broken)
    caplog.set_level(logging.INFO, logger="game.driver.bot_turns")
    table = make_table("BBBB", rules=SHORT_RULES, bot="BIS+UCT5")
    assert table.status == Table.Status.FINISHED  # the table never stalled
    moves = search_moves(caplog)
    assert moves and {source for _, _, source, _ in moves} == {"fallback"}
    for version, seat, _, _ in moves[:6]:
        played = Action.objects.get(table=table, version=version + 1).action
        assert played["seat"] == seat
        assert parse_card(played["card"]) == expected_fallback(table, version, seat)


class Sent:
    """apply_async calls captured instead of going to Celery."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: dict[str, list[dict[str, Any]]] = {"act": [], "search": [], "fallback": []}
        for name, task in (("act", tasks.act), ("search", tasks.search),
                           ("fallback", tasks.submit_fallback)):  # fmt: skip
            monkeypatch.setattr(task, "apply_async", self._capture(name))

    def _capture(self, name: str) -> Any:
        return lambda **kw: self.calls[name].append(kw)


def drive_to_search(table: Table, rng: random.Random) -> str:
    """Humans play at random and North (a UCT bot) moves through play_turn until
    play_turn sends a search; play_turn's answer."""
    while True:
        table.refresh_from_db()
        assert table.status == Table.Status.PLAYING, "the match ended before a search"
        match = matches.load_match(table)
        seat = match.round.to_act
        if seat == 0:
            result = bot_turns.play_turn(table.pk, 0, table.version)
            if result != bot_turns.MOVED:
                return result
        else:
            seat, action = human_move(table, rng)
            master.submit(table.pk, seat, action, table.version)


def test_with_celery_the_search_goes_to_its_queue_and_the_first_submit_wins(
    live: InlineScheduler,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.SPADES_BOTS_IN_PROCESS = False
    settings.SPADES_BOT_BUDGET = 0.5
    caplog.set_level(logging.INFO, logger="game.driver.bot_turns")
    sent = Sent(monkeypatch)
    table = make_table("BHHH", rules=LONG_RULES, bot="BIS+UCT5")
    rng = random.Random(4)

    # 1. The search, then its fallback: the search's move stands, the fallback is stale.
    assert drive_to_search(table, rng) == bot_turns.SEARCHING
    search, fallback = sent.calls["search"][-1], sent.calls["fallback"][-1]
    assert search["queue"] == "search" and fallback["queue"] == "bots"
    table_id, seat, version, bot_name, started, budget, fallen_back = search["args"]
    card = parse_card(fallen_back["card"])
    assert (table_id, seat, bot_name, budget) == (table.pk, 0, "BIS+UCT5", 0.5)
    grace = scheduling.SEARCH_LIMIT_GRACE_SECONDS
    assert grace < search["soft_time_limit"] <= budget + grace < search["time_limit"]
    assert started < search["expires"].timestamp() <= started + budget + 1e-6
    assert started < fallback["eta"].timestamp() < started + budget
    assert fallback["args"] == [table.pk, 0, version, fallen_back, started, budget]
    assert card == expected_fallback(table, version, 0)
    assert tasks.search(*search["args"], **search["kwargs"]) == bot_turns.MOVED
    assert tasks.submit_fallback(*fallback["args"], **fallback["kwargs"]) == bot_turns.STALE
    assert search_moves(caplog)[-1][2:3] == ("search",)
    assert search_moves(caplog)[-1][3] <= budget

    # 2. The fallback first (the search was late): the search's submit is dropped.
    assert drive_to_search(table, rng) == bot_turns.SEARCHING
    search, fallback = sent.calls["search"][-1], sent.calls["fallback"][-1]
    assert tasks.submit_fallback(*fallback["args"], **fallback["kwargs"]) == bot_turns.FALLBACK
    assert tasks.search(*search["args"], **search["kwargs"]) == bot_turns.STALE
    version = search["args"][2]
    played = Action.objects.get(table=table, version=version + 1).action
    assert played["card"] == search["args"][6]["card"]

    # 3. A search that fails submits the fallback at once, well before the deadline.
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the search broke")

    monkeypatch.setattr(UCTSearch, "run", broken)
    assert drive_to_search(table, rng) == bot_turns.SEARCHING
    search, fallback = sent.calls["search"][-1], sent.calls["fallback"][-1]
    assert tasks.search(*search["args"], **search["kwargs"]) == bot_turns.FALLBACK
    assert tasks.submit_fallback(*fallback["args"], **fallback["kwargs"]) == bot_turns.STALE
    version = search["args"][2]
    played = Action.objects.get(table=table, version=version + 1).action
    assert played["card"] == search["args"][6]["card"]
    assert search_moves(caplog)[-1][2] == "fallback"
    # No search task ever went to the bots queue, and no quick move to the search queue.
    assert all(call["queue"] == "bots" for call in sent.calls["act"])


def test_the_bot_budget_setting(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.SPADES_BOT_BUDGET = None
    monkeypatch.delenv("SPADES_BOT_BUDGET", raising=False)
    assert bot_turns.bot_budget() == 1.0
    monkeypatch.setenv("SPADES_BOT_BUDGET", "0.3")
    assert bot_turns.bot_budget() == 1.0  # the builder read the environment at start-up
    builder.hand_in()  # as it does at start-up
    assert bot_turns.bot_budget() == 0.3
    settings.SPADES_BOT_BUDGET = 2  # a setting's change is handed in at once
    assert bot_turns.bot_budget(object()) == 2.0
    assert bot_turns.submit_reserve(1.0) == pytest.approx(0.15)
    assert bot_turns.submit_reserve(0.1) == 0.08 and bot_turns.submit_reserve(10) == 0.2


def test_while_the_kernels_load_a_searching_bot_plays_srps_card_at_once(
    live: InlineScheduler,
    settings: Any,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Loading the compiled kernels takes seconds the first time (no budget
    allows that): until they are in, SRP's card, and the loading is started."""
    started: list[bool] = []
    monkeypatch.setattr(solver_compiled, "ready", lambda: False)
    monkeypatch.setattr(solver_compiled, "warm_up_in_background", lambda: started.append(True))
    settings.SPADES_BOT_BUDGET = 0.5
    caplog.set_level(logging.INFO, logger="game.driver.bot_turns")
    table = make_table("BBBB", rules=SHORT_RULES, bot="BIS+UCT5")
    assert table.status == Table.Status.FINISHED
    moves_made = search_moves(caplog)
    assert moves_made and {source for _, _, source, _ in moves_made} == {"fallback"}
    assert max(elapsed for *_, elapsed in moves_made) < 0.5
    assert started
    for version, seat, _, _ in moves_made:
        played = Action.objects.get(table=table, version=version + 1).action["card"]
        assert parse_card(played) == expected_fallback(table, version, seat)
