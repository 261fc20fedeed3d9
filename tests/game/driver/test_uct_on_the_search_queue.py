"""A UCT bot at a live table through the Celery ``search`` queue, every move within budget
(the driver's tasks, game/driver/tasks.py, sent by game/driver/scheduling.py).

The production stack as in ``tests/stack/test_match_on_a_worker.py``: a scratch PostgreSQL
database, an empty Redis database, and two Celery workers as subprocesses, as
``lab/stack/run.py`` runs them: one for the ``bots`` queue (quick moves and the
fallbacks) and one prefork worker for the ``search`` queue, where the hard and
soft time limits apply. North plays ``BIS+UCT5``, South ``BIS+UCT5b`` (bid-informed
sampling), East and West ``BIS+SRP``; a short match (200 / -200) with a 0.3 s
bot time budget and no pacing delay.

Every move a UCT seat had to search for (its last 5 tricks, more than one
choice) must be logged once by the worker that submitted it, search or
fallback, never more than the queue's slack past the budget, and at least one
of them must come from the search (the search path works end to end). How many
land within the budget and how many the search wins is a matter of the
machine's load, not of the code: CI runs two test processes on two cores, and
on 28 November 2026 a fresh-clone run had 2 of 5 searched moves fall back and
submit 65-69 ms past the budget. Those shares are printed, not asserted (the
project's rule: performance figures belong in benchmarks, not in timed tests).
The time between the stored actions (which adds the queueing of the move
itself) is checked against the budget plus that slack.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import psycopg
import pytest

from bots.registry import make_bot
from game.engine import Match, Rules, action_from_dict, view_for
from game.engine.state import Phase
from tests.support.search_stack import SearchStack, running_search_stack

pytestmark = pytest.mark.stack

BOTS = ("BIS+UCT5", "BIS+SRP", "BIS+UCT5b", "BIS+SRP")
RULES = Rules(winning_goal=200, losing_goal=-200)
BUDGET = 0.3
QUEUE_SLACK = 0.5  # seconds for a move's own task to leave Redis and start
MATCH_TIMEOUT_SECONDS = 240.0
MOVE_LINE = re.compile(
    r"search move: table (\d+) version (\d+) seat (\d) source (\w+)"
    r" elapsed ([\d.]+) budget ([\d.]+)"
)


@pytest.fixture(scope="module")
def stack() -> Iterator[SearchStack]:
    with running_search_stack("spades_search", BUDGET) as running:
        yield running


def _wait_finished(stack: SearchStack, pk: int) -> None:
    deadline = time.monotonic() + MATCH_TIMEOUT_SECONDS
    while True:
        with psycopg.connect(stack.database_url, connect_timeout=5) as conn:
            row = conn.execute("select status, version from game_table where id = %s", [pk])
            status, version = row.fetchone()
        if status == "finished":
            return
        if time.monotonic() > deadline:
            pytest.fail(
                f"the match did not finish within {MATCH_TIMEOUT_SECONDS:.0f} s "
                f"(status {status}, version {version})\n{stack.logs_tail()}"
            )
        time.sleep(0.2)


def test_a_uct_bot_plays_a_match_through_the_search_queue_within_budget(stack: SearchStack) -> None:
    pk = stack.start_bot_table(RULES, BOTS)
    _wait_finished(stack, pk)
    with psycopg.connect(stack.database_url, connect_timeout=5) as conn:
        rules, seed = conn.execute(
            "select rules, seed from game_table where id = %s", [pk]
        ).fetchone()
        actions = conn.execute(
            "select version, seat, action, created_at from game_action where table_id = %s"
            " order by version",
            [pk],
        ).fetchall()

    # The moves a UCT seat had to search for, from the log replayed through the engine.
    players = {seat: make_bot(BOTS[seat]).player for seat in range(4)}
    match = Match(Rules.from_dict(rules), seed)
    searched: dict[int, int] = {}  # version before the move -> seat
    gaps: list[float] = []
    previous_at = None
    for version, seat, data, created_at in actions:
        r = match.round
        if (
            r.phase is Phase.PLAYING
            and r.to_act == seat
            and "UCT" in BOTS[seat]
            and players[seat].needs_search(view_for(match, seat))
        ):
            searched[version - 1] = seat
            if previous_at is not None:
                gaps.append((created_at - previous_at).total_seconds())
        match.apply(action_from_dict(data))
        previous_at = created_at
    assert match.is_over
    assert len(searched) >= 5

    logged: dict[int, tuple[int, str, float]] = {}
    for m in MOVE_LINE.finditer(stack.log_text()):
        if int(m[1]) == pk:
            assert int(m[2]) not in logged, f"two submits logged for version {m[2]}"
            logged[int(m[2])] = (int(m[3]), m[4], float(m[5]))
    assert set(logged) == set(searched), stack.logs_tail()
    assert all(logged[v][0] == seat for v, seat in searched.items())
    elapsed = sorted(e for _, _, e in logged.values())
    sources = [source for _, source, _ in logged.values()]
    print(
        f"\n{len(searched)} searched moves: {sources.count('search')} by the search, "
        f"{sources.count('fallback')} by the fallback; elapsed median "
        f"{elapsed[len(elapsed) // 2]:.3f} s, max {elapsed[-1]:.3f} s (budget {BUDGET} s); "
        f"gap between stored actions max {max(gaps):.3f} s"
    )
    assert elapsed[-1] <= BUDGET + QUEUE_SLACK, stack.logs_tail()
    assert sources.count("search") >= 1, stack.logs_tail()
    assert max(gaps) <= BUDGET + QUEUE_SLACK
