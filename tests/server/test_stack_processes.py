"""Several Daphne processes on Redis and PostgreSQL, behind nginx (game/proxy.py).

A stack of the test's own: a Redis server on a spare port, a scratch
PostgreSQL database, two Daphne processes and nginx in front of them. A
table's four seats may sit on different processes (no sticky sessions), and
when one process is killed in the middle of a match its players reconnect
through nginx to the other, resync, and play on; nothing they saw
acknowledged is lost.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from game import loadtest, proxy, stackprocs
from game.engine import Rules
from tests import services
from tests.server.stack_checks import check_stored_log

pytestmark = pytest.mark.stack

RULES = Rules(winning_goal=100, losing_goal=-100)


@dataclass
class Cluster:
    database_url: str
    env: dict[str, str]
    daphne_ports: list[int]
    proxy_port: int
    daphnes: list[Any]
    logs: Path

    def make_tables(self, count: int, seed: int) -> list[dict[str, Any]]:
        code = (
            "import json\n"
            "from game import loadtest\n"
            f"rules = {RULES.to_dict()!r}\n"
            f"print(json.dumps(loadtest.prepare_tables({count}, {seed}, rules=rules)))\n"
        )
        out = stackprocs.manage(self.env, "shell", "-c", code)
        return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]

    def sockets_opened(self, n: int) -> int:
        # Daphne's access log has a WSCONNECTING line, then a WSCONNECT line.
        return (self.logs / f"daphne{n}.log").read_text().count('"WSCONNECT ')

    def tail(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{stackprocs.tail(p, 1500)}" for p in sorted(self.logs.glob("*.log"))
        )


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    services.nginx_binary()
    admin_url = services.postgres_url()
    processes: list[Any] = []
    with tempfile.TemporaryDirectory(prefix="spades-cluster-") as tmp:
        logs = Path(tmp)
        redis_url, redis_server = services.own_redis_server(logs)
        processes.append(redis_server)
        name, database_url = stackprocs.create_scratch_database(admin_url, "spades_cluster")
        env = stackprocs.stack_env(
            database_url,
            redis_url,
            DJANGO_DEBUG="0",
            DJANGO_SECRET_KEY="a-secret-for-this-test-only-" + "x" * 30,
            DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
            SPADES_RATE_LIMITS="0",  # every client is this machine
        )
        ports = [stackprocs.free_port(), stackprocs.free_port()]
        proxy_port = stackprocs.free_port()
        try:
            stackprocs.manage(env, "migrate", "--noinput")
            daphnes = []
            for n, port in enumerate(ports):
                with open(logs / f"daphne{n}.log", "w") as out:
                    daphne = stackprocs.start(
                        stackprocs.daphne_command(port, proxied=True), env, out
                    )
                processes.append(daphne)
                daphnes.append(daphne)
            conf = proxy.nginx_config(proxy_port, ports, logs / "static", logs / "nginx")
            processes.append(stackprocs.start(proxy.nginx_command(conf), env))
            for port, daphne in zip(ports, daphnes, strict=True):
                stackprocs.wait_for_port(port, daphne, timeout=30)
            stackprocs.wait_for_port(proxy_port, processes[-1], timeout=10)
            yield Cluster(database_url, env, ports, proxy_port, daphnes, logs)
        finally:
            for process in reversed(processes):
                stackprocs.stop(process)
            stackprocs.drop_database(admin_url, name)


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


@dataclass
class Players:
    """Four players of one table, each on a socket through nginx that reconnects."""

    url: str
    origin: str
    cookies: list[str]
    rng: random.Random
    views: list[dict[str, Any] | None] = field(default_factory=lambda: [None] * 4)
    versions: list[int] = field(default_factory=lambda: [-1] * 4)
    sockets: list[Any] = field(default_factory=lambda: [None] * 4)
    acknowledged: list[tuple[float, int]] = field(default_factory=list)  # (when, version)
    reconnects: int = 0
    errors: list[str] = field(default_factory=list)
    over: bool = False

    async def keep(self, seat: int) -> None:
        from websockets.asyncio.client import connect

        while not self.over:
            try:
                async with connect(
                    self.url,
                    origin=self.origin,  # type: ignore[arg-type]
                    additional_headers={"Cookie": self.cookies[seat]},
                    open_timeout=5,
                    ping_interval=None,
                ) as socket:
                    self.sockets[seat] = socket
                    if self.versions[seat] >= 0:
                        await socket.send(
                            json.dumps({"type": "resync", "version": self.versions[seat]})
                        )
                    async for message in socket:
                        frame = json.loads(message)
                        if frame["type"] == "error" and frame["code"] != "stale":
                            self.errors.append(frame["code"])
                        if frame["type"] == "state" and frame["version"] >= self.versions[seat]:
                            self.versions[seat] = frame["version"]
                            self.views[seat] = frame["view"]
                            self.acknowledged.append((time.monotonic(), frame["version"]))
            except Exception:  # closed or refused: the process died; come back
                pass
            self.sockets[seat] = None
            if not self.over:
                self.reconnects += 1
                await asyncio.sleep(0.2)

    async def play(self, moves: int) -> None:
        """Make ``moves`` moves (or to the match's end) at the seat to act."""
        made = 0
        while made < moves and not self.over:
            await asyncio.sleep(0.03)
            newest = max(self.versions)
            view = next((v for v in self.views if v and v["version"] == newest), None)
            if view is None:
                continue
            if view["table"]["status"] != "playing" or view["to_act"] is None:
                self.over = True
                return
            seat = view["to_act"]
            own, socket = self.views[seat], self.sockets[seat]
            if socket is None or own is None or own["version"] != newest:
                continue
            action = self.rng.choice(own["legal_actions"])
            try:
                await socket.send(json.dumps({"type": "act", "action": action, "version": newest}))
            except Exception:
                continue
            made += 1
            deadline = time.monotonic() + 5
            while self.versions[seat] == newest and time.monotonic() < deadline:
                await asyncio.sleep(0.01)


@pytest.mark.faults
def test_a_daphne_process_killed_mid_match_loses_nothing(cluster: Cluster) -> None:
    [table] = cluster.make_tables(1, seed=13)
    cookies = [f"{table['cookie']}={key}" for key in table["sessions"]]
    url = f"ws://127.0.0.1:{cluster.proxy_port}/ws/table/{table['public_id']}/"
    players = Players(url, f"http://127.0.0.1:{cluster.proxy_port}", cookies, random.Random(5))
    victim = cluster.daphnes[0]
    figures: dict[str, float] = {}

    async def run() -> None:
        keepers = [asyncio.create_task(players.keep(seat)) for seat in range(4)]
        await players.play(30)
        before = max(players.versions)
        os.kill(victim.pid, signal.SIGKILL)  # mid-match, players connected to it
        killed_at = time.monotonic()
        await players.play(10_000)
        after = [t for t, v in players.acknowledged if v > before and t > killed_at]
        figures["recovery_seconds"] = (min(after) - killed_at) if after else float("inf")
        players.over = True
        for task in keepers:
            task.cancel()
        await asyncio.gather(*keepers, return_exceptions=True)

    asyncio.run(asyncio.wait_for(run(), timeout=240))
    victim.wait(timeout=10)
    print(f"\nrecovery after killing a Daphne process: {figures['recovery_seconds']:.2f} s, "
          f"{players.reconnects} reconnects")  # fmt: skip
    assert players.errors == [], players.errors
    assert players.reconnects >= 1  # some players were on the killed process
    assert figures["recovery_seconds"] < 10, cluster.tail()
    match = check_stored_log(cluster.database_url, table["pk"])
    assert match.is_over
    # Every version a player saw acknowledged is in the stored log.
    assert max(v for _, v in players.acknowledged) == match.version
    # The other process carries on alone; restart the killed one for later tests.
    port = cluster.daphne_ports[0]
    with open(cluster.logs / "daphne0.log", "a") as out:
        cluster.daphnes[0] = stackprocs.start(
            stackprocs.daphne_command(port, proxied=True), cluster.env, out
        )
    stackprocs.wait_for_port(port, cluster.daphnes[0], timeout=30)
