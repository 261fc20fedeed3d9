"""Think times: each human act stores the browser's measure, no larger than the server's bound."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async

from game.models import Action
from game.moves import matches
from game.sockets.client_frames import MAX_THINK_MS
from tests.support.helpers import make_table
from tests.support.inline import InlineScheduler
from tests.support.sockets import connect, refused

pytestmark = pytest.mark.django_db(transaction=True)


async def seat_to_act(table: Any) -> tuple[Any, dict[str, Any], int]:
    to_act = (await database_sync_to_async(matches.load_match)(table)).round.to_act
    comm, state = await connect(table, f"g{to_act}")
    return comm, state, to_act


def stored(version: int) -> tuple[int | None, int | None]:
    row = Action.objects.get(version=version)
    return row.think_ms, row.think_bound_ms


async def act(comm: Any, state: dict[str, Any], **extra: Any) -> dict[str, Any]:
    frame = {"type": "act", "action": {"type": "bid", "tricks": 3}, "version": state["version"]}
    await comm.send_json_to({**frame, **extra})
    return await comm.receive_json_from(timeout=5)


async def test_the_browsers_measure_is_kept_when_within_the_servers_bound(
    live: InlineScheduler,
) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    comm, state, _ = await seat_to_act(table)
    await asyncio.sleep(0.3)
    after = await act(comm, state, think_ms=250)
    assert after["type"] == "state"
    think, bound = await database_sync_to_async(stored)(after["version"])
    assert think == 250 and bound is not None and bound >= 300


async def test_a_forged_larger_think_time_is_clipped_to_the_bound(live: InlineScheduler) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    comm, state, _ = await seat_to_act(table)
    after = await act(comm, state, think_ms=MAX_THINK_MS)
    think, bound = await database_sync_to_async(stored)(after["version"])
    assert bound is not None and think == bound < 5000


async def test_no_measure_stores_the_bound_alone(live: InlineScheduler) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    comm, state, _ = await seat_to_act(table)
    after = await act(comm, state)
    think, bound = await database_sync_to_async(stored)(after["version"])
    assert think is None and bound is not None


@pytest.mark.parametrize("bad", [-1, 1.5, "12", True, MAX_THINK_MS + 1])
async def test_a_bad_think_time_is_refused_and_changes_nothing(
    live: InlineScheduler, bad: Any
) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    comm, state, _ = await seat_to_act(table)
    frame = {"type": "act", "action": {"type": "bid", "tricks": 3}, "version": state["version"]}
    error = await refused(comm, json.dumps({**frame, "think_ms": bad}))
    assert error["code"] == "bad_action" and "think_ms" in error["message"]
    count = await database_sync_to_async(Action.objects.count)()
    assert count == state["version"]


def test_bots_and_stand_ins_store_no_think_time(live: InlineScheduler) -> None:
    table = make_table("BBBB")
    assert Action.objects.filter(table=table).count() > 0
    assert not Action.objects.filter(table=table, think_bound_ms__isnull=False).exists()
