"""Several Daphne processes on Redis and PostgreSQL, behind nginx (lab/stack/proxy.py).

A stack of the test's own: a Redis server on a spare port, a scratch
PostgreSQL database, two Daphne processes and nginx in front of them. A
table's four seats may sit on different processes (no sticky sessions), and
when one process is killed in the middle of a match its players reconnect
through nginx to the other, resync, and play on; nothing they saw
acknowledged is lost.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator

import pytest

from lab.bench import loadtest
from tests.support.cluster import RECOVERY_BOUND_SECONDS, Cluster, running_cluster
from tests.support.stack_checks import check_stored_log

pytestmark = pytest.mark.stack


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with running_cluster("spades_cluster") as started:
        yield started


def test_a_tables_four_seats_play_on_two_processes(cluster: Cluster) -> None:
    tables = cluster.make_tables(3, seed=11)
    # Seats 0 and 2 of every table on one process, 1 and 3 on the other.
    figures = asyncio.run(
        loadtest.run_clients(
            cluster.daphne_ports, tables, seconds=90, interval=0.02, seed=3, drain=3
        )
    )
    assert figures.connect_failures == 0 and figures.errors == {}, cluster.tail()
    assert figures.gaps == 0 and figures.undelivered == 0, cluster.tail()
    assert figures.finished_tables == 3, cluster.tail()
    for table in tables:
        assert check_stored_log(cluster.database_url, table["pk"]).is_over


def test_nginx_spreads_the_sockets_over_both_processes(cluster: Cluster) -> None:
    before = [cluster.sockets_opened(n) for n in range(2)]
    tables = cluster.make_tables(2, seed=12)
    figures = asyncio.run(
        loadtest.run_clients(cluster.proxy_port, tables, seconds=90, interval=0.02, seed=4, drain=3)
    )
    assert figures.connect_failures == 0 and figures.errors == {}, cluster.tail()
    assert figures.finished_tables == 2 and figures.undelivered == 0, cluster.tail()
    opened = [cluster.sockets_opened(n) - before[n] for n in range(2)]
    assert sum(opened) == 8 and min(opened) >= 2, opened  # balanced, not sticky
    for table in tables:
        assert check_stored_log(cluster.database_url, table["pk"]).is_over


# ----- a process killed mid-match ----------------------------------------------------


@pytest.mark.faults
def test_a_daphne_process_killed_mid_match_loses_nothing(cluster: Cluster) -> None:
    [table] = cluster.make_tables(1, seed=13)
    players = cluster.players(table, seed=5)
    victim = cluster.daphnes[0]
    figures: dict[str, float] = {}

    async def run() -> None:
        keepers = players.start()
        await players.play(30)
        before = max(players.versions)
        os.kill(victim.pid, signal.SIGKILL)  # mid-match, players connected to it
        killed_at = time.monotonic()
        await players.play(10_000)
        after = [t for t, v in players.acknowledged if v > before and t > killed_at]
        figures["recovery_seconds"] = (min(after) - killed_at) if after else float("inf")
        await players.close(keepers)

    asyncio.run(asyncio.wait_for(run(), timeout=240))
    victim.wait(timeout=10)
    print(f"\nrecovery after killing a Daphne process: {figures['recovery_seconds']:.2f} s, "
          f"{players.reconnects} reconnects")  # fmt: skip
    assert players.errors == [], players.errors
    assert players.reconnects >= 1  # some players were on the killed process
    assert figures["recovery_seconds"] < RECOVERY_BOUND_SECONDS, cluster.tail()
    match = check_stored_log(cluster.database_url, table["pk"])
    assert match.is_over
    # Every version a player saw acknowledged is in the stored log.
    assert max(v for _, v in players.acknowledged) == match.version
    # The other process carries on alone; restart the killed one for later tests.
    cluster.restart_daphne(0)
