"""The websocket load benchmark behind ``manage.py bench_server``.

Tables of four humans are made through ``game.seating`` (with a Django
session per guest, so that each socket holds its seat as a browser would),
then asyncio clients on 127.0.0.1 play them against one or more Daphne
processes (or against ``lab.bench.bench_echo``, the bare Channels baseline): every
table acts every ``interval`` seconds (staggered), the seat to act picks a
random legal action from its own view (``legal_actions``) and sends ``act``.
Each socket times the arrival of the ``state`` frame with the new version,
measured from the moment the action was sent: the acting socket (its own
move coming back) and the three others. A socket that sees version
v+2 without v+1 counts a gap and sends ``resync``; the gap is recovered when
the answer carries at least the version it jumped to.

Only the clients live here (the tables are made by ``lab.bench.bench_tables``, in the server's
environment); starting and stopping the processes is ``lab.stack.stackprocs``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lab.bench.bench_figures import Figures

# A state frame later than this is counted as never delivered.
LOST_AFTER_SECONDS = 5.0


# ----- the clients ---------------------------------------------------------------


@dataclass
class Pending:
    version: int  # the version the action makes
    sent_at: float
    seat: int
    waiting: set[int]  # seats whose socket has not seen it yet
    measured: bool  # sent during the measured play (not the warm-up)


# How both servers' state frames begin (``game.sockets.frames``; the echo's ``send_json``).
STATE_START = '{"type": "state", "version": '
_DIGITS = re.compile(r"\d+")


def state_version(message: str) -> int | None:
    """The version of a state frame, read from its start; None for any other frame."""
    if not message.startswith(STATE_START):
        return None
    found = _DIGITS.match(message, len(STATE_START))
    return None if found is None else int(found.group())


class SeatSocket:
    """One seat's socket. A state frame's view is decoded only when the table
    acts on it (:attr:`view`): decoding all four seats' views as they came (a
    site's are six times an echo's) made the clients' loop, which times every
    frame, a queue of its own in front of the server's latency."""

    def __init__(self, table: TableClient, seat: int, connection: Any) -> None:
        self.table = table
        self.seat = seat
        self.connection = connection
        self.version = -1
        self._view: dict[str, Any] | None = None
        self._undecoded: str | None = None  # the newest state frame, when not decoded yet
        self.resync_target: int | None = None

    @property
    def view(self) -> dict[str, Any] | None:
        """The view of the newest state frame."""
        if self._undecoded is not None:
            self._view = json.loads(self._undecoded)["view"]
            self._undecoded = None
        return self._view

    async def read(self) -> None:
        figures = self.table.figures
        try:
            async for message in self.connection:
                now = time.perf_counter()
                version = state_version(message)
                if version is None:
                    frame = json.loads(message)
                    kind = frame.get("type")
                    if kind == "error":
                        code = str(frame.get("code"))
                        figures.errors[code] = figures.errors.get(code, 0) + 1
                    if kind != "state":
                        continue
                    version = int(frame["version"])  # a state frame written otherwise
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
                    self._undecoded = message
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
        # No garbage collection in this process during a measured bout. Its loop
        # times every frame, and a collection paused it: young ones 0.3 ms (up
        # to 15), a full one (this process holds Django, the tables and all the
        # sockets: some 230,000 objects) 100-140 ms. The frames that waited
        # were timed as the server's latency, the site's or the baseline's,
        # whichever was playing. A bout leaves no cyclic garbage (none was
        # found after one), so nothing piles up; what there is goes before the
        # next, and what is left is frozen, out of later collections' way.
        pause_collector = measured and gc.isenabled()
        if pause_collector:
            gc.collect()
            gc.freeze()
            gc.disable()
        try:
            await self._play(seconds, measured, drain)
        finally:
            if pause_collector:
                gc.enable()

    async def _play(self, seconds: float, measured: bool, drain: float) -> None:
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
