"""Faults survived, nothing lost: each test on a stack of its own (tests/support/cluster.py).

Its own Redis server on a spare port and its own scratch database (never the
shared Redis or PostgreSQL), two Daphne processes behind nginx, Celery
workers on the ``bots`` queue. Each test plays a table of humans (sockets
through nginx) and bots, and a table of bots alone, injects a fault, prints
each table's recovery time (from the service back, or the process killed, to
the table's next move; ``pytest -s`` shows it) and holds it under
``RECOVERY_BOUND_SECONDS``, plays on, and checks every table's stored log
(versions 1..N, no gap or duplicate, replaying through the engine to its
stored result).

1. A Celery worker killed (SIGKILL, children too) while it holds a bot move:
   its lease in Redis is no longer renewed (spadesite/celery.py), and another
   worker takes the move once the visibility timeout has passed
   (spadesite/settings.py); it arrives once.
2. Redis stopped and started again, empty, mid-match: Daphne and the workers
   reconnect by themselves (a worker tries every second); the moves lost with
   Redis are scheduled again by the sweep a reconnecting worker asks for and
   by sockets that reconnect; players resync.
3. PostgreSQL's connections terminated again and again during play: players
   get ``try_again`` error frames at worst, never a dropped socket; the
   pools replace dead connections; the bots' moves are retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from tests.support.cluster import RECOVERY_BOUND_SECONDS, Cluster, running_cluster
from tests.support.stack_checks import check_stored_log

pytestmark = [pytest.mark.stack, pytest.mark.faults]

BOTS = {1: "BIS+SRP", 3: "BIS+SRP"}  # humans at 0 and 2
RECEIVED = "Task game.driver.tasks.act["
REDIS_DOWN_SECONDS = 7.0


def _received(cluster: Cluster, n: int) -> int:
    lines = cluster.worker_log(n).split("\n")
    return sum(RECEIVED in line and "received" in line for line in lines)


def test_a_worker_killed_holding_a_bot_move_loses_nothing() -> None:
    # The bots wait 2 s before moving: the worker holds the move that long.
    with running_cluster("spades_fault_worker", daphnes=1, workers=2) as cluster:
        [table] = cluster.make_tables(1, seed=21, bots=BOTS, bot_delay=2.0)
        players = cluster.players(table, seed=1)
        figures: dict[str, float] = {}

        async def run() -> None:
            keepers = players.start()
            await players.play(2)
            # A human moves, and a bot is due next: the worker that receives
            # its move holds it for the bot's delay.
            deadline = time.monotonic() + 60
            while True:
                assert time.monotonic() < deadline, cluster.tail()
                newest, view = players.newest()
                if view is None or view["to_act"] not in players.cookies:
                    await asyncio.sleep(0.05)
                    continue
                counts = [_received(cluster, n) for n in range(2)]
                await players.play(1)
                await asyncio.sleep(0.5)
                newest, view = players.newest()
                grew = [n for n in range(2) if _received(cluster, n) > counts[n]]
                if view and view["to_act"] in BOTS and len(grew) == 1:
                    break
            cluster.kill_worker(grew[0])
            killed_at = time.monotonic()
            figures["version"] = newest
            arrived = await players.wait_for_version(newest + 1, timeout=30)
            figures["recovery"] = arrived - killed_at
            await players.play(6)  # the table goes on: humans and the other worker's bots
            await players.close(keepers)

        asyncio.run(asyncio.wait_for(run(), timeout=150))
        print(f"\nrecovery after killing a worker holding a bot move: "
              f"{figures['recovery']:.2f} s")  # fmt: skip
        assert figures["recovery"] < RECOVERY_BOUND_SECONDS, cluster.tail()
        assert players.errors == [] and players.reconnects == 0, (players.errors, players.closes)
        match = check_stored_log(cluster.database_url, table["pk"])
        assert match.version > figures["version"] + 6
        # The bot's move is in the log once (check_stored_log: one action per version).


def _version(cluster: Cluster, pk: int) -> int:
    return cluster.table_row(pk)[1]


def test_redis_stopped_and_started_again_mid_match() -> None:
    with running_cluster("spades_fault_redis", workers=1, beat=True) as cluster:
        [table] = cluster.make_tables(1, seed=22, bots=BOTS, bot_delay=0.3)
        [bots_only] = cluster.make_tables(1, seed=23, bots=dict.fromkeys(range(4), "BIS+SRP"),
                                          bot_delay=0.5)  # fmt: skip
        players = cluster.players(table, seed=2)
        figures: dict[str, float] = {}

        async def run() -> None:
            keepers = players.start()
            await players.play(4)
            before = max(players.versions)
            cluster.stop_redis()
            stopped_at = time.monotonic()
            with contextlib.suppress(TimeoutError):
                await players.play(2, timeout=3)  # moves while Redis is away
            # Away long enough that kombu's own back-off (2, 4, 6 s) would
            # meet it late.
            await asyncio.sleep(max(0.0, REDIS_DOWN_SECONDS - (time.monotonic() - stopped_at)))
            cluster.start_redis()
            started_at = time.monotonic()
            figures["down"] = started_at - stopped_at
            bots_moved = asyncio.create_task(
                cluster.next_move(bots_only["pk"], _version(cluster, bots_only["pk"]))
            )
            await players.play(10_000, timeout=120)
            after = [t for t, v in players.acknowledged if v > before and t > started_at]
            figures["recovery"] = min(after) - started_at
            figures["bots_only"] = await bots_moved - started_at
            await players.close(keepers)

        try:
            asyncio.run(asyncio.wait_for(run(), timeout=240))
        except TimeoutError as stuck:
            stored = cluster.table_row(table["pk"]), cluster.table_row(bots_only["pk"])
            raise AssertionError(f"{stuck}; stored {stored}\n{cluster.tail()}") from stuck
        print(f"\nRedis down {figures['down']:.1f} s: the humans' table moved on "
              f"{figures['recovery']:.2f} s after it was back, the bots' table "
              f"{figures['bots_only']:.2f} s after; {players.reconnects} reconnects, "
              f"errors {players.errors}, closes {players.closes}")  # fmt: skip
        assert figures["recovery"] < RECOVERY_BOUND_SECONDS, cluster.tail()
        assert figures["bots_only"] < RECOVERY_BOUND_SECONDS, cluster.tail()
        assert "Unrecoverable error" not in cluster.worker_log(0), cluster.tail()
        assert check_stored_log(cluster.database_url, table["pk"]).is_over
        check_stored_log(cluster.database_url, bots_only["pk"])


def test_postgres_connections_terminated_again_and_again() -> None:
    with running_cluster("spades_fault_pg", workers=1) as cluster:
        tables = cluster.make_tables(2, seed=24, bots=BOTS, bot_delay=0.1)
        [bots_only] = cluster.make_tables(1, seed=25, bots=dict.fromkeys(range(4), "BIS+SRP"),
                                          bot_delay=0.3)  # fmt: skip
        everyone = [cluster.players(table, seed=3 + n) for n, table in enumerate(tables)]
        figures: dict[str, float] = {}
        moved: list[asyncio.Task[float]] = []

        async def terminate(times: int) -> None:
            for _ in range(times):
                await asyncio.sleep(1.0)
                figures["terminated"] = figures.get("terminated", 0) + await asyncio.to_thread(
                    cluster.terminate_backends
                )
                figures["last"] = time.monotonic()
            version = await asyncio.to_thread(_version, cluster, bots_only["pk"])
            moved.append(asyncio.create_task(cluster.next_move(bots_only["pk"], version)))

        async def run() -> None:
            keepers = [task for players in everyone for task in players.start()]
            await asyncio.gather(*(players.play(3) for players in everyone))
            await asyncio.gather(terminate(6), *(players.play(12) for players in everyone))
            last = figures["last"]
            for n, players in enumerate(everyone):
                if not [t for t, _ in players.acknowledged if t > last]:
                    await players.play(1)
                figures[f"humans {n}"] = min(t for t, _ in players.acknowledged if t > last) - last
            figures["bots_only"] = await moved[0] - last
            await asyncio.gather(*(players.play(10_000, timeout=150) for players in everyone))
            for players in everyone:
                await players.close([])
            for task in keepers:
                task.cancel()
            await asyncio.gather(*keepers, return_exceptions=True)

        asyncio.run(asyncio.wait_for(run(), timeout=240))
        errors = [e for players in everyone for e in players.errors]
        recoveries = {k: v for k, v in figures.items() if k.startswith(("humans", "bots"))}
        print(f"\n{figures['terminated']:.0f} connections terminated in 6 rounds; next move "
              f"after the last: {', '.join(f'{k} {v:.2f} s' for k, v in recoveries.items())}; "
              f"error frames {errors}")  # fmt: skip
        assert figures["terminated"] >= 6
        assert max(recoveries.values()) < RECOVERY_BOUND_SECONDS, (recoveries, cluster.tail())
        assert all(code == "try_again" and "try again" in text for code, text in errors), errors
        assert all(p.reconnects == 0 for p in everyone), [p.closes for p in everyone]
        for table in tables:
            assert check_stored_log(cluster.database_url, table["pk"]).is_over
        check_stored_log(cluster.database_url, bots_only["pk"])
