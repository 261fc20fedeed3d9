"""The bare Channels baseline of bench_server (lab/bench/bench_echo.py), under Daphne.

Each act reaches the table's four sockets once, with the next version, on the
in-memory layer in one process and on the Redis pub/sub layer across two; and
the benchmark's own clients (lab.bench.loadtest) play it without a gap or a loss.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lab.bench import bench_figures, loadtest
from lab.management.commands.bench_server import ECHO_APP, Side, daphne_command, interleave
from lab.stack import stackprocs


def start_echoes(workdir: Path, redis_url: str | None, count: int) -> tuple[list[int], list[Any]]:
    env = stackprocs.stack_env(
        f"sqlite:///{workdir / 'unused.sqlite3'}",
        redis_url,
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(32),
    )
    ports = [stackprocs.free_port() for _ in range(count)]
    processes = []
    try:
        for number, port in enumerate(ports):
            with open(workdir / f"echo{number}.log", "w") as log:
                processes.append(stackprocs.start(daphne_command(port, ECHO_APP), env, log))
        for port, process in zip(ports, processes, strict=True):
            stackprocs.wait_for_port(port, process, timeout=30)
    except BaseException:
        for process in processes:
            stackprocs.stop(process)
        raise
    return ports, processes


@pytest.fixture(scope="module")
def echo_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """One echo process on the in-memory layer (no REDIS_URL), as the embedded baseline."""
    ports, processes = start_echoes(tmp_path_factory.mktemp("echo"), None, 1)
    yield ports[0]
    for process in processes:
        stackprocs.stop(process)


async def frame_of(socket: Any, timeout: float = 5.0) -> dict[str, Any]:
    return json.loads(await asyncio.wait_for(socket.recv(), timeout))  # type: ignore[no-any-return]


async def play_table(ports: list[int], table_id: str, moves: int) -> list[list[int]]:
    """Open a table's four sockets (dealt over ``ports``), act ``moves`` times
    as the clients do; the versions each socket received, in order."""
    from websockets.asyncio.client import connect

    sockets = [
        await connect(f"ws://127.0.0.1:{ports[seat % len(ports)]}/ws/table/{table_id}/")
        for seat in range(4)
    ]
    try:
        first = [await frame_of(s) for s in sockets]
        seen = [[f["version"]] for f in first]
        assert len({f["version"] for f in first}) == 1
        view = first[0]["view"]
        for _ in range(moves):
            actor = view["to_act"]
            assert view["table"]["status"] == "playing" and view["legal_actions"]
            act = {"type": "act", "action": view["legal_actions"][0], "version": view["version"]}
            await sockets[actor].send(json.dumps(act))
            frames = [await frame_of(s) for s in sockets]
            for seat, frame in enumerate(frames):
                assert frame["type"] == "state"
                seen[seat].append(frame["version"])
            view = frames[0]["view"]
        for s in sockets:  # nothing more: each act was sent once to each socket
            with pytest.raises(TimeoutError):
                await frame_of(s, timeout=0.3)
        return seen
    finally:
        for s in sockets:
            await s.close()


async def test_each_act_reaches_the_four_sockets_once_with_the_next_version(
    echo_port: int,
) -> None:
    seen = await play_table([echo_port], "echo-one", moves=6)
    assert seen == [[1, 2, 3, 4, 5, 6, 7]] * 4


async def test_a_stale_act_changes_nothing(echo_port: int) -> None:
    from websockets.asyncio.client import connect

    async with connect(f"ws://127.0.0.1:{echo_port}/ws/table/echo-stale/") as socket:
        assert (await frame_of(socket))["version"] == 1
        await socket.send(json.dumps({"type": "act", "action": {}, "version": 7}))
        assert (await frame_of(socket))["code"] == "stale"
        assert (await frame_of(socket))["version"] == 1
        await socket.send(json.dumps({"type": "resync", "version": 1}))
        assert (await frame_of(socket))["version"] == 1


async def test_the_benchmark_clients_play_the_echo_without_loss(echo_port: int) -> None:
    tables = [
        {"public_id": f"echo-load-{n}", "sessions": ["x"] * 4, "cookie": "sessionid"}
        for n in range(3)
    ]
    figures = await loadtest.run_clients(
        echo_port, tables, seconds=1.5, interval=0.2, settle=0.5, warmup=0.4, drain=1.0
    )
    assert figures.sent >= 3 * 5
    assert len(figures.acting) == figures.sent
    assert len(figures.others) == 3 * figures.sent
    assert (figures.gaps, figures.undelivered, figures.errors) == (0, 0, {})
    assert figures.connect_failures == 0


async def test_two_servers_take_turns_in_bouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bench_server's turns: two servers' clients warm up, then play measured
    bouts in the order A B B A A B B A, each its share of the seconds, without a loss."""
    ports, processes = start_echoes(tmp_path, None, 2)
    played: list[tuple[bench_figures.Figures, float, bool]] = []
    play = loadtest.Clients.play

    async def recorded(self: loadtest.Clients, seconds: float, *, measured: bool) -> None:
        played.append((self.figures, seconds, measured))
        await play(self, seconds, measured=measured)

    monkeypatch.setattr(loadtest.Clients, "play", recorded)
    try:
        sides = [Side(name, ECHO_APP, [], {}) for name in ("a", "b")]
        for side, port, process in zip(sides, ports, processes, strict=True):
            side.ports, side.daphnes = [port], [process]
        tables = [
            {"public_id": f"turns-{n}", "sessions": ["x"] * 4, "cookie": "sessionid"}
            for n in range(4)
        ]
        opts = {"seconds": 1.2, "bout": 0.3, "interval": 0.1, "seed": 3, "warmup": 0.2}
        await interleave(sides, tables, opts)
        names = {id(side.figures): name for name, side in zip("ab", sides, strict=True)}
        assert [(names[id(f)], s, m) for f, s, m in played[:2]] == [
            ("a", 0.2, False),
            ("b", 0.2, False),
        ]
        bouts = played[2:]
        assert "".join(names[id(f)] for f, _, _ in bouts) == "abbaabba"
        assert all(measured and seconds == pytest.approx(0.3) for _, seconds, measured in bouts)
        for side in sides:
            figures = side.figures
            assert figures is not None
            assert (figures.gaps, figures.undelivered, figures.errors) == (0, 0, {})
            assert figures.sent >= 4 * 4 * 2  # four bouts of 0.3 s, an act every 0.1 s
            assert len(figures.others) == 3 * figures.sent
            assert side.used["wall"] >= 1.2
            assert side.used["daphne"] > 0  # its process, from its first bout to the end
    finally:
        for process in processes:
            stackprocs.stop(process)


@pytest.mark.stack
async def test_across_two_processes_on_the_redis_layer(redis_url: str, tmp_path: Path) -> None:
    """The Redis baseline: a table's sockets on two Daphne processes, one pub/sub layer."""
    url = stackprocs.pick_empty_redis_db(redis_url)
    ports, processes = start_echoes(tmp_path, url, 2)
    try:
        seen = await play_table(ports, f"echo-two-{secrets.token_hex(4)}", moves=6)
        assert seen == [[1, 2, 3, 4, 5, 6, 7]] * 4
    finally:
        for process in processes:
            stackprocs.stop(process)
        stackprocs.flush_redis_db(url)
