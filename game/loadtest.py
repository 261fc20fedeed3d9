"""The websocket load benchmark behind ``manage.py bench_server``.

Tables of four humans are made through ``game.seating`` (with a Django
session per guest, so that each socket holds its seat as a browser would),
then asyncio clients on 127.0.0.1 play them against one or more Daphne
processes (or against ``game.bench_echo``, the bare Channels baseline): every
table acts every ``interval`` seconds (staggered), the seat to act picks a
random legal action from its own view (``legal_actions``) and sends ``act``.
Each socket times the arrival of the ``state`` frame with the new version,
measured from the moment the action was sent: the acting socket (its own
move coming back) and the three others. A socket that sees version
v+2 without v+1 counts a gap and sends ``resync``; the gap is recovered when
the answer carries at least the version it jumped to.

Only the clients live here (the tables are made by ``game.bench_tables``, in the server's
environment); starting and stopping the processes is ``game.stackprocs``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# A state frame later than this is counted as never delivered.
LOST_AFTER_SECONDS = 5.0


# ----- measuring -----------------------------------------------------------------


@dataclass
class Figures:
    """What one run measured (milliseconds for latencies)."""

    acting: list[float] = field(default_factory=list)  # own move back to the acting socket
    timeline: list[tuple[float, float]] = field(default_factory=list)  # (sent at, ms)
    others: list[float] = field(default_factory=list)  # the move reaching the other three
    sent: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    gaps: int = 0
    gaps_recovered: int = 0
    undelivered: int = 0  # (action, socket) pairs whose state never came
    skipped_ticks: int = 0  # a table's turn came while its last move was still on its way
    finished_tables: int = 0
    connect_failures: int = 0

    def summary(self) -> dict[str, Any]:
        both = self.acting + self.others
        seconds = self.by_second()
        return {
            "actions_sent": self.sent,
            "deliveries": len(both),
            "p50_ms": _percentile(both, 50),
            "p99_ms": _percentile(both, 99),
            "max_ms": max(both) if both else None,
            "acting_p50_ms": _percentile(self.acting, 50),
            "acting_p99_ms": _percentile(self.acting, 99),
            "others_p50_ms": _percentile(self.others, 50),
            "others_p99_ms": _percentile(self.others, 99),
            "gaps": self.gaps,
            "gaps_recovered": self.gaps_recovered,
            "undelivered": self.undelivered,
            "skipped_ticks": self.skipped_ticks,
            "errors": dict(self.errors),
            "finished_tables": self.finished_tables,
            "connect_failures": self.connect_failures,
            # A steadier reading than the run's p99, which one stall of the
            # machine in one second can move on its own.
            "p99_median_of_seconds_ms": (
                statistics.median(b["p99_ms"] for b in seconds) if seconds else None
            ),
            "by_second": seconds,
        }

    def by_second(self) -> list[dict[str, Any]]:
        """Per second of the run (by when the action was sent): deliveries, p50,
        p99 and max, to tell a steady load from bursts (e.g. every table's
        round ending in the same second)."""
        if not self.timeline:
            return []
        start = min(t for t, _ in self.timeline)
        buckets: dict[int, list[float]] = {}
        for t, ms in self.timeline:
            buckets.setdefault(int(t - start), []).append(ms)
        return [
            {
                "second": second,
                "deliveries": len(values),
                "p50_ms": _percentile(values, 50),
                "p99_ms": _percentile(values, 99),
                "max_ms": max(values),
            }
            for second, values in sorted(buckets.items())
        ]


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def machine_cpu() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine since boot."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values) - idle, sum(values)


# ----- the clients ---------------------------------------------------------------


@dataclass
class Pending:
    version: int  # the version the action makes
    sent_at: float
    seat: int
    waiting: set[int]  # seats whose socket has not seen it yet
    measured: bool  # sent during the measured play (not the warm-up)


class SeatSocket:
    def __init__(self, table: TableClient, seat: int, connection: Any) -> None:
        self.table = table
        self.seat = seat
        self.connection = connection
        self.version = -1
        self.view: dict[str, Any] | None = None
        self.resync_target: int | None = None

    async def read(self) -> None:
        figures = self.table.figures
        try:
            async for message in self.connection:
                now = time.perf_counter()
                frame = json.loads(message)
                kind = frame.get("type")
                if kind == "error":
                    code = str(frame.get("code"))
                    figures.errors[code] = figures.errors.get(code, 0) + 1
                    continue
                if kind != "state":
                    continue
                version = int(frame["version"])
                if self.resync_target is not None and self.table.measuring:
                    if version >= self.resync_target:
                        figures.gaps_recovered += 1
                    self.resync_target = None
                if self.version >= 1 and version > self.version + 1 and self.table.measuring:
                    figures.gaps += 1
                    self.resync_target = version
                    await self.connection.send(json.dumps({"type": "resync", "version": version}))
                if version >= self.version:
                    self.version = version
                    self.view = frame["view"]
                self.table.delivered(self.seat, version, now)
        except Exception:  # the connection closed: the run is over or the server failed
            return


class TableClient:
    def __init__(
        self, public_id: str, figures: Figures, rng: random.Random, interval: float
    ) -> None:
        self.public_id = public_id
        self.figures = figures
        self.rng = rng
        self.interval = interval
        self.sockets: list[SeatSocket] = []
        self.pending: Pending | None = None
        self.measuring = False
        self.done = False

    def delivered(self, seat: int, version: int, now: float) -> None:
        pending = self.pending
        if pending is None or version < pending.version or seat not in pending.waiting:
            return
        pending.waiting.discard(seat)
        latency = (now - pending.sent_at) * 1000.0
        if pending.measured:
            (self.figures.acting if seat == pending.seat else self.figures.others).append(latency)
            self.figures.timeline.append((pending.sent_at, latency))
        if not pending.waiting:
            self.pending = None

    async def play(self, start_at: float, stop_at: float) -> None:
        """Act once per interval from ``start_at`` until ``stop_at`` (loop time)."""
        loop = asyncio.get_running_loop()
        tick = start_at
        while not self.done:
            await asyncio.sleep(max(0.0, tick - loop.time()))
            if loop.time() >= stop_at:
                return
            tick += self.interval
            if self.pending is not None:
                if time.perf_counter() - self.pending.sent_at > LOST_AFTER_SECONDS:
                    self.close_pending()  # counted as undelivered; play on
                else:
                    if self.measuring:
                        self.figures.skipped_ticks += 1
                    continue
            await self.act()

    async def act(self) -> None:
        view = self.sockets[0].view
        if view is None:
            return
        to_act = view.get("to_act")
        if view.get("table", {}).get("status") != "playing" or to_act is None:
            self.done = True
            self.figures.finished_tables += 1
            return
        actor = self.sockets[to_act]
        own = actor.view
        if own is None or own["version"] != actor.version or not own.get("legal_actions"):
            return
        action = self.rng.choice(own["legal_actions"])
        self.pending = Pending(
            actor.version + 1, time.perf_counter(), to_act, {0, 1, 2, 3}, self.measuring
        )
        if self.measuring:
            self.figures.sent += 1
        await actor.connection.send(
            json.dumps({"type": "act", "action": action, "version": actor.version})
        )

    def close_pending(self) -> None:
        if self.pending is not None:
            if self.pending.measured:
                self.figures.undelivered += len(self.pending.waiting)
            self.pending = None


class Clients:
    """Four sockets per table on one server (the site, or the baseline), playing
    in bouts: each table acts once per ``interval`` at a phase of its own within
    it, the same in every bout, so that bouts of two servers taken in turns meet
    the same load. Every bout's figures go into :attr:`figures`."""

    def __init__(self, tables: list[dict[str, Any]], *, interval: float, seed: int) -> None:
        self.figures = Figures()
        self.interval = interval
        self._tables = tables
        self._rng = random.Random(seed)
        self.clients = [
            TableClient(t["public_id"], self.figures, random.Random(self._rng.getrandbits(64)),
                        interval)
            for t in tables
        ]  # fmt: skip
        self._phases: dict[int, float] = {}
        self._readers: list[asyncio.Task[None]] = []

    async def connect(self, port: int | list[int], concurrency: int = 50) -> None:
        """Open the sockets; with several ``port``s (Daphne processes) they are
        dealt out in turn, so that a table's four seats sit on different processes."""
        from websockets.asyncio.client import connect

        ports = [port] if isinstance(port, int) else list(port)
        gate = asyncio.Semaphore(concurrency)

        async def open_socket(client: TableClient, seat: int, cookie: str, port: int) -> Any:
            async with gate:
                for attempt in range(3):
                    try:
                        return await connect(
                            f"ws://127.0.0.1:{port}/ws/table/{client.public_id}/",
                            origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]
                            additional_headers={"Cookie": cookie},
                            compression=None,
                            proxy=None,
                            ping_interval=None,
                            open_timeout=20,
                            close_timeout=2,
                            max_size=2**22,
                            max_queue=None,
                        )
                    except (OSError, TimeoutError, Exception):
                        if attempt == 2:
                            raise
                        await asyncio.sleep(0.5)
            raise AssertionError("unreachable")

        opened = await asyncio.gather(
            *(
                open_socket(
                    client,
                    seat,
                    f"{t['cookie']}={t['sessions'][seat]}",
                    ports[(4 * i + seat) % len(ports)],
                )
                for i, (client, t) in enumerate(zip(self.clients, self._tables, strict=True))
                for seat in range(4)
            ),
            return_exceptions=True,
        )
        index = 0
        for client in self.clients:
            for seat in range(4):
                connection = opened[index]
                index += 1
                if isinstance(connection, BaseException):
                    self.figures.connect_failures += 1
                    client.done = True
                    continue
                socket = SeatSocket(client, seat, connection)
                client.sockets.append(socket)
                self._readers.append(asyncio.create_task(socket.read()))
        self.clients = [c for c in self.clients if len(c.sockets) == 4 and not c.done]
        self._phases = {id(c): self._rng.random() for c in self.clients}

    async def play(self, seconds: float, *, measured: bool, drain: float = 2.0) -> None:
        """One bout: every table acts for ``seconds``, then the moves on their
        way get up to ``drain`` seconds to arrive (a state frame still missing
        then counts as undelivered, in a measured bout)."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        for client in self.clients:
            client.measuring = measured
        await asyncio.gather(
            *(
                client.play(start + self.interval * self._phases[id(client)], start + seconds)
                for client in self.clients
            )
        )
        deadline = loop.time() + drain
        while loop.time() < deadline and any(c.pending is not None for c in self.clients):
            await asyncio.sleep(0.05)
        for client in self.clients:
            client.close_pending()
            client.measuring = False

    async def close(self) -> None:
        for client in self.clients:
            for socket in client.sockets:
                await socket.connection.close()
        for reader in self._readers:
            reader.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)


async def run_clients(
    port: int | list[int],
    tables: list[dict[str, Any]],
    *,
    seconds: float,
    interval: float = 0.5,
    seed: int = 1,
    connect_concurrency: int = 50,
    settle: float = 1.0,
    warmup: float = 0.0,
    drain: float = 2.0,
    on_phase: Callable[[str], None] | None = None,
) -> Figures:
    """Connect four sockets per table, wait ``settle`` seconds, play ``warmup``
    seconds unmeasured, then play ``seconds`` and measure (one bout each, see
    :class:`Clients`). ``on_phase`` is called with "start" and "stop" around the
    measured bout (after its drain): where the caller reads CPU counters."""
    clients = Clients(tables, interval=interval, seed=seed)
    await clients.connect(port, connect_concurrency)
    try:
        await asyncio.sleep(settle)  # every socket has its first state
        # A process's first moves are its slowest (its connections' first
        # statements, code run for the first time): the warm-up keeps them out
        # of the steady state being measured.
        if warmup > 0:
            await clients.play(warmup, measured=False, drain=drain)
        await _phase(on_phase, "start")
        await clients.play(seconds, measured=True, drain=drain)
        await _phase(on_phase, "stop")
    finally:
        await clients.close()
    return clients.figures


async def _phase(on_phase: Callable[[str], None] | None, phase: str) -> None:
    # The caller's counters are read on a thread: reading them (subprocesses,
    # connections to PostgreSQL and Redis: 30-60 ms on a quiet machine) on this
    # loop held the clients, and the frames that waited meanwhile were measured
    # as the server's latency.
    if on_phase is not None:
        await asyncio.to_thread(on_phase, phase)
