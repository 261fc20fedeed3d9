"""A production stack of a test's own, for the multi-process and fault tests.

``running_cluster`` starts a Redis server on a spare port (never the shared
one), a scratch PostgreSQL database, N Daphne processes behind nginx
(``lab/stack/proxy.py``) and, if asked, Celery workers (queue ``bots``, prefork)
and Celery beat; everything is stopped and dropped afterwards, even when a
check fails. :class:`Players` are a table's human players on sockets that
reconnect and resync, as ``static/js/table.js`` does.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from game.engine import Rules
from lab.stack import proxy, stackprocs
from tests.support import services

RULES = Rules(winning_goal=100, losing_goal=-100)
# Every fault the stack tests inject is recovered within this: from the service
# back (or the process killed) to the table's next move (docs/architecture.md, "Faults").
RECOVERY_BOUND_SECONDS = 3.0
SECRET = "a-secret-for-this-test-only-" + "x" * 30


@dataclass
class Cluster:
    admin_url: str
    database_url: str
    redis_url: str
    redis_server: subprocess.Popen[str]
    env: dict[str, str]
    daphne_ports: list[int]
    proxy_port: int
    daphnes: list[subprocess.Popen[str]]
    workers: list[subprocess.Popen[str]]
    logs: Path
    beat: subprocess.Popen[str] | None = None

    def make_tables(
        self,
        count: int,
        seed: int,
        bots: dict[int, str] | None = None,
        bot_delay: float | None = None,
    ) -> list[dict[str, Any]]:
        """``count`` started tables, guests at the seats not in ``bots`` (seat ->
        bot name): [{"pk", "public_id", "sessions": {seat: key}, "cookie"}]."""
        code = (
            "import json\n"
            "from lab.bench.bench_tables import prepare_tables\n"
            f"print(json.dumps(prepare_tables({count}, {seed}, {RULES.to_dict()!r},"
            f" {bots or {}!r}, {bot_delay!r})))\n"
        )
        out = stackprocs.manage(self.env, "shell", "-c", code)
        tables = json.loads(out.strip().splitlines()[-1])
        for table in tables:
            keys = table["sessions"]
            table["sessions"] = {seat: key for seat, key in enumerate(keys) if key is not None}
        return tables  # type: ignore[no-any-return]

    def players(self, table: dict[str, Any], seed: int) -> Players:
        """The table's human players, through nginx."""
        cookies = {seat: f"{table['cookie']}={key}" for seat, key in table["sessions"].items()}
        url = f"ws://127.0.0.1:{self.proxy_port}/ws/table/{table['public_id']}/"
        return Players(url, f"http://127.0.0.1:{self.proxy_port}", cookies, random.Random(seed))

    def table_row(self, pk: int) -> tuple[str, int]:
        with psycopg.connect(self.database_url, connect_timeout=5) as conn:
            row = conn.execute("select status, version from game_table where id = %s", [pk])
            status, version = row.fetchone()  # type: ignore[misc]
        return str(status), int(version)

    async def next_move(self, pk: int, since: int, timeout: float = 30.0) -> float:
        """When (``time.monotonic()``) table ``pk``'s stored version passed
        ``since``, read every 50 ms (a read cut by a fault is read again)."""
        deadline = time.monotonic() + timeout
        while True:
            with suppress(psycopg.OperationalError):
                if (await asyncio.to_thread(self.table_row, pk))[1] > since:
                    return time.monotonic()
            if time.monotonic() > deadline:
                raise TimeoutError(f"table {pk} did not move past version {since} in {timeout} s")
            await asyncio.sleep(0.05)

    def sockets_opened(self, n: int) -> int:
        # Daphne's access log has a WSCONNECTING line, then a WSCONNECT line.
        return (self.logs / f"daphne{n}.log").read_text().count('"WSCONNECT ')

    def restart_daphne(self, n: int) -> None:
        with open(self.logs / f"daphne{n}.log", "a") as out:
            self.daphnes[n] = stackprocs.start(
                stackprocs.daphne_command(self.daphne_ports[n], proxied=True), self.env, out
            )
        stackprocs.wait_for_port(self.daphne_ports[n], self.daphnes[n], timeout=30)

    def start_worker(self) -> subprocess.Popen[str]:
        """One more Celery worker on the ``bots`` queue (prefork, one child)."""
        n = len(self.workers)
        path = self.logs / f"worker{n}.log"
        with open(path, "w") as out:
            command = stackprocs.celery_worker_command(
                "bots", concurrency=1, pool="prefork", name=f"bots{n}@%h"
            )
            worker = stackprocs.start(command, self.env, out)
        self.workers.append(worker)
        stackprocs.wait_for_text(path, "ready.", worker, timeout=60)
        return worker

    def worker_log(self, n: int) -> str:
        return (self.logs / f"worker{n}.log").read_text(errors="replace")

    def kill_worker(self, n: int) -> None:
        """SIGKILL worker ``n`` and its pool's children at once (its process group)."""
        os.killpg(self.workers[n].pid, signal.SIGKILL)
        self.workers[n].wait(timeout=10)

    def stop_redis(self) -> None:
        stackprocs.stop(self.redis_server)

    def start_redis(self) -> None:
        """Redis again on the same port, empty (it keeps nothing on disk)."""
        port = int(self.redis_url.rsplit(":", 1)[1].split("/")[0])
        _, self.redis_server = services.own_redis_server(self.logs, port=port)

    def terminate_backends(self) -> int:
        """pg_terminate_backend on every other connection to the scratch database."""
        name = self.database_url.rsplit("/", 1)[1]
        with psycopg.connect(self.admin_url, autocommit=True, connect_timeout=5) as conn:
            rows = conn.execute(
                "select pg_terminate_backend(pid) from pg_stat_activity"
                " where datname = %s and pid <> pg_backend_pid()",
                [name],
            ).fetchall()
        return len(rows)

    def tail(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{stackprocs.tail(p, 2500)}" for p in sorted(self.logs.glob("*.log"))
        )


@contextmanager
def running_cluster(
    prefix: str, *, daphnes: int = 2, workers: int = 0, beat: bool = False, **env: str
) -> Iterator[Cluster]:
    """A stack of its own (see the module's docstring); ``env``: more settings."""
    services.nginx_binary()
    admin_url = services.postgres_url()
    cluster: Cluster | None = None
    with tempfile.TemporaryDirectory(prefix=f"{prefix}-") as tmp:
        logs = Path(tmp)
        redis_url, redis_server = services.own_redis_server(logs)
        name, database_url = stackprocs.create_scratch_database(admin_url, prefix)
        settings = stackprocs.stack_env(
            database_url,
            redis_url,
            DJANGO_DEBUG="0",
            DJANGO_SECRET_KEY=SECRET,
            DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
            SPADES_RATE_LIMITS="0",  # every client is this machine
            **env,
        )
        ports = [stackprocs.free_port() for _ in range(daphnes)]
        cluster = Cluster(
            admin_url, database_url, redis_url, redis_server, settings, ports,
            stackprocs.free_port(), [], [], logs,
        )  # fmt: skip
        nginx = None
        try:
            stackprocs.manage(settings, "migrate", "--noinput")
            for n, port in enumerate(ports):
                with open(logs / f"daphne{n}.log", "w") as out:
                    command = stackprocs.daphne_command(port, proxied=True)
                    cluster.daphnes.append(stackprocs.start(command, settings, out))
            conf = proxy.nginx_config(cluster.proxy_port, ports, logs / "static", logs / "nginx")
            nginx = stackprocs.start(proxy.nginx_command(conf), settings)
            if beat:
                with open(logs / "beat.log", "w") as out:
                    command = stackprocs.celery_beat_command(str(logs / "beat-schedule"))
                    cluster.beat = stackprocs.start(command, settings, out)
            for _ in range(workers):
                cluster.start_worker()
            for port, daphne in zip(ports, cluster.daphnes, strict=True):
                stackprocs.wait_for_port(port, daphne, timeout=30)
            stackprocs.wait_for_port(cluster.proxy_port, nginx, timeout=10)
            yield cluster
        finally:
            others = [nginx, cluster.beat, *cluster.workers, *cluster.daphnes]
            for process in [p for p in others if p is not None]:
                stackprocs.stop(process)
            stackprocs.stop(cluster.redis_server)
            stackprocs.drop_database(admin_url, name)


@dataclass
class Players:
    """A table's human players (the seats of ``cookies``), each on a socket
    that reconnects after a close and then resyncs."""

    url: str
    origin: str
    cookies: dict[int, str]
    rng: random.Random
    views: list[dict[str, Any] | None] = field(default_factory=lambda: [None] * 4)
    versions: list[int] = field(default_factory=lambda: [-1] * 4)
    sockets: list[Any] = field(default_factory=lambda: [None] * 4)
    acknowledged: list[tuple[float, int]] = field(default_factory=list)  # (when, version)
    reconnects: int = 0
    closes: list[tuple[int | None, str]] = field(default_factory=list)  # (code, reason)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (code, message), not stale
    over: bool = False

    async def keep(self, seat: int) -> None:
        from websockets.asyncio.client import connect

        while not self.over:
            socket = None
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
                        await self.resync(seat)
                    async for message in socket:
                        self.receive(seat, json.loads(message))
            except Exception:  # closed or refused: a process died; come back
                pass
            self.sockets[seat] = None
            if not self.over:
                code = socket.close_code if socket is not None else None
                reason = (socket.close_reason or "") if socket is not None else "refused"
                self.closes.append((code, reason))
                self.reconnects += 1
                await asyncio.sleep(0.2)

    def receive(self, seat: int, frame: dict[str, Any]) -> None:
        if frame["type"] == "error" and frame["code"] != "stale":
            self.errors.append((frame["code"], frame["message"]))
        if frame["type"] == "state" and frame["version"] >= self.versions[seat]:
            self.versions[seat] = frame["version"]
            self.views[seat] = frame["view"]
            self.acknowledged.append((time.monotonic(), frame["version"]))

    async def resync(self, seat: int) -> None:
        socket = self.sockets[seat]
        if socket is not None:
            with suppress(Exception):
                await socket.send(json.dumps({"type": "resync", "version": self.versions[seat]}))

    def newest(self) -> tuple[int, dict[str, Any] | None]:
        """The newest version a player has seen, and that view."""
        newest = max(self.versions)
        return newest, next((v for v in self.views if v and v["version"] == newest), None)

    async def play(self, moves: int, timeout: float = 120.0) -> None:
        """Make ``moves`` moves of the humans (or play to the match's end); a
        player whose view lags behind the newest for a second resyncs."""
        made = 0
        deadline = time.monotonic() + timeout
        lagging_since: float | None = None
        while made < moves and not self.over:
            if time.monotonic() > deadline:
                newest, view = self.newest()
                to_act = view["to_act"] if view else None
                raise TimeoutError(
                    f"made {made} of {moves} moves; versions {self.versions}, seat {to_act}"
                    f" to act at {newest}, {self.reconnects} reconnects, closes {self.closes}"
                )
            await asyncio.sleep(0.03)
            newest, view = self.newest()
            if view is None:
                continue
            if view["table"]["status"] != "playing" or view["to_act"] is None:
                self.over = True
                return
            seat = view["to_act"]
            if seat not in self.cookies:
                continue  # a bot's turn
            own, socket = self.views[seat], self.sockets[seat]
            if socket is None or own is None:
                continue
            if own["version"] != newest:
                lagging_since = lagging_since or time.monotonic()
                if time.monotonic() - lagging_since > 1.0:
                    lagging_since = None
                    await self.resync(seat)
                continue
            lagging_since = None
            action = self.rng.choice(own["legal_actions"])
            try:
                await socket.send(json.dumps({"type": "act", "action": action, "version": newest}))
            except Exception:
                continue
            made += 1
            # Until the move is seen, or the socket closed (the act may have
            # died with its server process: act again once reconnected, as a
            # player would on the resynced table).
            wait_until = time.monotonic() + 5
            while (
                self.versions[seat] == newest
                and self.sockets[seat] is socket
                and time.monotonic() < wait_until
            ):
                await asyncio.sleep(0.01)

    async def wait_for_version(self, version: int, timeout: float) -> float:
        """Wait until a player sees ``version``; when (monotonic)."""
        deadline = time.monotonic() + timeout
        while max(self.versions) < version:
            if time.monotonic() > deadline:
                raise TimeoutError(f"version {version} not seen within {timeout:.0f} s")
            await asyncio.sleep(0.01)
        return min(t for t, v in self.acknowledged if v >= version)

    async def close(self, keepers: list[asyncio.Task[None]]) -> None:
        self.over = True
        for task in keepers:
            task.cancel()
        await asyncio.gather(*keepers, return_exceptions=True)

    def start(self) -> list[asyncio.Task[None]]:
        return [asyncio.create_task(self.keep(seat)) for seat in self.cookies]
