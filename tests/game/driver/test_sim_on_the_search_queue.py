"""SIM's bids at a live table through the Celery ``search`` queue (the driver's
tasks, game/driver/tasks.py, sent by game/driver/scheduling.py): within the
bot budget, and BIS's bid when the budget runs out.

The production stack of ``tests/support/search_stack.py``: a scratch PostgreSQL
database, an empty Redis database, a Celery worker for the ``bots`` queue and
a prefork worker for the ``search`` queue. North is ``SIM100+SRP``, the other
seats ``BIS+SRP``; the live bot budget of 1 s, no pacing delay.

1. A short match (200 / -200): every North bid is logged once by the worker
   that submitted it ("search bid ... source ... elapsed ... bid ... deals"),
   none past the budget by more than a loaded machine's submit (how many land
   within it depends on the machine's load: printed, not asserted), and the
   stored bid is the logged one; some bids simulated deals;
   a fallback bid, and a search that simulated none (one candidate, or no time
   for a deal on a loaded machine), is BIS's.
2. The search worker stopped: North's next bid is BIS's, submitted by the
   fallback on the ``bots`` queue, within the budget.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator

import psycopg
import pytest

from bots.registry import make_bot
from game.engine import Match, Rules, action_from_dict, view_for
from game.engine.actions import Bid
from game.engine.state import Phase
from lab.stack import stackprocs
from tests.support.search_stack import SearchStack, running_search_stack

pytestmark = pytest.mark.stack

BOTS = ("SIM100+SRP", "BIS+SRP", "BIS+SRP", "BIS+SRP")
RULES = Rules(winning_goal=200, losing_goal=-200)
BUDGET = 1.0
# A submit is one transaction, kept back before the deadline (submit_reserve); on
# a loaded machine (the suite's workers, PostgreSQL and Celery on two cores) it
# can take longer than the reserve. Most bids land in the budget, none far past.
LOAD_SLACK = 0.5
MATCH_TIMEOUT_SECONDS = 300.0
BID_LINE = re.compile(
    r"search bid: table (\d+) version (\d+) seat (\d) source (\w+) elapsed ([\d.]+)"
    r" budget ([\d.]+) bid (\d+) deals (\d+)"
)


def _logged_bids(stack: SearchStack, pk: int) -> dict[int, tuple[int, str, float, int, int]]:
    """version -> (seat, source, elapsed, bid, deals) of the table's logged SIM bids."""
    out: dict[int, tuple[int, str, float, int, int]] = {}
    for m in BID_LINE.finditer(stack.log_text()):
        if int(m[1]) == pk:
            assert int(m[2]) not in out, f"two submits logged for version {m[2]}"
            out[int(m[2])] = (int(m[3]), m[4], float(m[5]), int(m[7]), int(m[8]))
    return out


@pytest.fixture(scope="module")
def stack() -> Iterator[SearchStack]:
    with running_search_stack("spades_sim", BUDGET) as running:
        yield running


def _actions(stack: SearchStack, pk: int) -> tuple[str, dict, list]:
    with psycopg.connect(stack.database_url, connect_timeout=5) as conn:
        status, rules, seed = conn.execute(
            "select status, rules, seed from game_table where id = %s", [pk]
        ).fetchone()
        actions = conn.execute(
            "select version, seat, action from game_action where table_id = %s order by version",
            [pk],
        ).fetchall()
    return status, {"rules": rules, "seed": seed}, actions


def _north_bids(stack: SearchStack, pk: int) -> tuple[str, dict[int, tuple[int, int]]]:
    """The table's status and, for every North bid stored: version before it ->
    (stored bid, BIS's bid for the same view)."""
    status, table, actions = _actions(stack, pk)
    match = Match(Rules.from_dict(table["rules"]), table["seed"])
    bis = make_bot("BIS+SRP").bidder
    out = {}
    for version, seat, data in actions:
        action = action_from_dict(data)
        bid = isinstance(action, Bid) and not action.blind
        if seat == 0 and match.round.phase is Phase.BIDDING and bid:
            view = view_for(match, 0)
            out[version - 1] = (action.tricks, bis.bid(view, random.Random(0)).tricks)
        match.apply(action)
    return status, out


def test_sim_bids_through_the_search_queue_within_budget(stack: SearchStack) -> None:
    pk = stack.start_bot_table(RULES, BOTS)
    deadline = time.monotonic() + MATCH_TIMEOUT_SECONDS
    while (status := _north_bids(stack, pk)[0]) != "finished":
        if time.monotonic() > deadline:
            pytest.fail(f"the match did not finish ({status})\n{stack.logs_tail()}")
        time.sleep(0.5)
    _, stored = _north_bids(stack, pk)
    logged = _logged_bids(stack, pk)
    assert stored and set(logged) == set(stored), stack.logs_tail()
    for version, (seat, source, elapsed, bid, deals) in logged.items():
        assert seat == 0 and elapsed <= BUDGET + LOAD_SLACK
        assert stored[version][0] == bid
        if source == "fallback" or deals == 0:
            # No deal simulated (one candidate, or no time for a deal): BIS's bid.
            assert bid == stored[version][1]
    sources = [source for _, source, *_ in logged.values()]
    within = sum(e <= BUDGET for _, _, e, _, _ in logged.values())
    print(
        f"\n{len(logged)} SIM bids, {within} within the budget: "
        f"{sources.count('search')} simulated "
        f"(deals {[d for *_, d in logged.values()]}), {sources.count('fallback')} BIS's; "
        f"elapsed max {max(e for _, _, e, _, _ in logged.values()):.3f} s (budget {BUDGET} s)"
    )
    assert any(source == "search" and deals > 0 for _, source, _, _, deals in logged.values())


def test_when_the_budget_runs_out_sim_bids_bis_bid(stack: SearchStack) -> None:
    stackprocs.stop(stack.search_worker)  # nobody simulates: the fallback lands at the deadline
    pk = stack.start_bot_table(RULES, BOTS)
    deadline = time.monotonic() + 60
    while not (stored := _north_bids(stack, pk)[1]):
        if time.monotonic() > deadline:
            pytest.fail(f"North did not bid\n{stack.logs_tail()}")
        time.sleep(0.3)
    version, (bid, bis_bid) = next(iter(stored.items()))
    assert bid == bis_bid
    while version not in _logged_bids(stack, pk) and time.monotonic() < deadline:
        time.sleep(0.2)  # the line is logged just after the submit
    seat, source, elapsed, logged_bid, deals = _logged_bids(stack, pk)[version]
    assert (seat, source, logged_bid, deals) == (0, "fallback", bid, 0)
    assert elapsed <= BUDGET + LOAD_SLACK
