"""SIM at a live table: its bid simulated within the bot budget, BIS's bid as the fallback."""

from __future__ import annotations

import logging
import random
import re
from typing import Any

import pytest

from bots.registry import make_bot
from bots.sim import SIM
from game import master
from game.driver import bot_turns, scheduling, tasks
from game.engine import Bid, Rules, action_to_dict, view_for
from game.models import Action, Table
from game.moves import matches
from spadesite.celery import app
from tests.support.helpers import SHORT_RULES, human_move, make_table
from tests.support.inline import InlineScheduler

pytestmark = pytest.mark.django_db(transaction=True)

BID_LINE = re.compile(
    r"search bid: table (\d+) version (\d+) seat (\d) source (\w+) elapsed ([\d.]+)"
    r" budget ([\d.]+) bid (\d+) deals (\d+)"
)


def logged_bids(caplog: pytest.LogCaptureFixture) -> list[tuple[int, int, str, float, int, int]]:
    """(version, seat, source, elapsed, bid, deals) of every simulated bid logged."""
    out = []
    for record in caplog.records:
        m = BID_LINE.search(record.getMessage())
        if m:
            out.append((int(m[2]), int(m[3]), m[4], float(m[5]), int(m[7]), int(m[8])))
    return out


def bis_bid(table: Table, version: int, seat: int) -> int:
    view = view_for(matches.load_match(table, version), seat)
    return make_bot("BIS+SRP").bidder.bid(view, random.Random(0)).tricks


def stored_bid(table: Table, version: int) -> int:
    return Action.objects.get(table=table, version=version + 1).action["tricks"]


def test_sim_bots_bid_in_process_within_budget(
    live: InlineScheduler, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.SPADES_BOT_BUDGET = 0.15
    caplog.set_level(logging.INFO, logger="game.driver.bot_turns")
    table = make_table("BBBB", rules=SHORT_RULES, bot="SIM100+SRP")
    assert table.status == Table.Status.FINISHED
    bids = logged_bids(caplog)
    assert len(bids) >= 4  # every bid of every round
    assert {source for _, _, source, *_ in bids} == {"search"}
    assert any(deals > 0 for *_, deals in bids)
    for version, seat, _, _, bid, _ in bids:
        assert Action.objects.get(table=table, version=version + 1).action["seat"] == seat
        assert stored_bid(table, version) == bid


def test_a_failing_simulation_bids_bis_bid(
    live: InlineScheduler,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.SPADES_BOT_BUDGET = 0.1

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the simulation broke")

    monkeypatch.setattr(SIM, "search", broken)
    caplog.set_level(logging.INFO, logger="game.driver.bot_turns")
    table = make_table("BBBB", rules=SHORT_RULES, bot="SIM50+SRP")
    assert table.status == Table.Status.FINISHED
    bids = logged_bids(caplog)
    assert bids and {source for _, _, source, *_ in bids} == {"fallback"}
    for version, seat, *_ in bids:
        assert stored_bid(table, version) == bis_bid(table, version, seat)


def drive_to_bid(table: Table, rng: random.Random) -> str:
    """Humans move at random and North (SIM) moves through play_turn until it
    sends a simulation; play_turn's answer."""
    while True:
        table.refresh_from_db()
        assert table.status == Table.Status.PLAYING
        seat = matches.load_match(table).round.to_act
        if seat == 0:
            result = bot_turns.play_turn(table.pk, 0, table.version)
            if result != bot_turns.MOVED:
                return result
        else:
            seat, action = human_move(table, rng)
            master.submit(table.pk, seat, action, table.version)


def test_with_celery_the_simulation_goes_to_the_search_queue_and_the_first_submit_wins(
    live: InlineScheduler,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.SPADES_BOTS_IN_PROCESS = False
    settings.SPADES_BOT_BUDGET = 0.5
    caplog.set_level(logging.INFO, logger="game.driver.bot_turns")
    sent: dict[str, list[dict[str, Any]]] = {"act": [], "search": [], "fallback": []}
    for name, task in (("act", tasks.act), ("search", tasks.search),
                       ("fallback", tasks.submit_fallback)):  # fmt: skip
        monkeypatch.setattr(task, "apply_async", lambda _n=name, **kw: sent[_n].append(kw))
    table = make_table("BHHH", rules=Rules(winning_goal=1000, losing_goal=-1000),
                       bot="SIM100+SRP")  # fmt: skip
    rng = random.Random(2)

    # 1. The simulation lands first: its bid stands, the fallback is stale.
    assert drive_to_bid(table, rng) == bot_turns.SEARCHING
    search, fallback = sent["search"][-1], sent["fallback"][-1]
    assert search["queue"] == "search" and fallback["queue"] == "bots"
    table_id, seat, version, bot_name, started, budget, bis = search["args"]
    assert (table_id, seat, bot_name, budget) == (table.pk, 0, "SIM100+SRP", 0.5)
    assert bis == action_to_dict(Bid(0, bis_bid(table, version, 0)))
    assert fallback["args"] == [table.pk, 0, version, bis, started, budget]
    grace = scheduling.SEARCH_LIMIT_GRACE_SECONDS
    assert grace < search["soft_time_limit"] <= budget + grace < search["time_limit"]
    assert started < fallback["eta"].timestamp() < started + budget
    assert tasks.search(*search["args"], **search["kwargs"]) == bot_turns.MOVED
    assert tasks.submit_fallback(*fallback["args"], **fallback["kwargs"]) == bot_turns.STALE
    _, _, source, _, bid, deals = logged_bids(caplog)[-1]
    assert source == "search" and deals > 0
    assert stored_bid(table, version) == bid

    # 2. The budget ran out first: BIS's bid, and the simulation's submit is dropped.
    assert drive_to_bid(table, rng) == bot_turns.SEARCHING
    search, fallback = sent["search"][-1], sent["fallback"][-1]
    version = search["args"][2]
    assert tasks.submit_fallback(*fallback["args"], **fallback["kwargs"]) == bot_turns.FALLBACK
    assert tasks.search(*search["args"], **search["kwargs"]) == bot_turns.STALE
    assert stored_bid(table, version) == bis_bid(table, version, 0)
    assert all(call["queue"] == "bots" for call in sent["act"])


@pytest.mark.parametrize(
    ("task", "queue"), [(tasks.search, "search"), (tasks.submit_fallback, "bots")]
)
def test_the_bid_tasks_are_routed_to_their_queue(task: Any, queue: str) -> None:
    assert app.amqp.router.route({}, task.name)["queue"].name == queue


def test_bis_and_k_s_zero_never_simulate() -> None:
    view_bot = make_bot("SIM0+SRP")
    assert bot_turns.searcher(view_bot, None) is None  # type: ignore[arg-type]
    assert bot_turns.searcher(make_bot("BIS+SRP"), None) is None  # type: ignore[arg-type]
