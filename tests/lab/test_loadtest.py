"""The load benchmark's tables (lab.bench.bench_tables) and figures (lab.bench.loadtest):
percentiles and the per-second view; bench_server's CPU per action and its ratios
to the baseline."""

from __future__ import annotations

import os
from io import StringIO
from typing import Any

import pytest

from lab.bench.bench_figures import Figures
from lab.management.commands.bench_server import (
    ONE_PROCESS_NOTE,
    SITE_APP,
    Command,
    Side,
    comparison_lines,
    cpu_figures,
    ratios,
)


def test_by_second_groups_deliveries_by_when_the_action_was_sent() -> None:
    figures = Figures()
    # A steady second, then a burst whose deliveries are slow.
    for i in range(100):
        figures.timeline.append((1000.0 + i / 100, 10.0 + i % 3))
    for i in range(50):
        figures.timeline.append((1001.2 + i / 100, 300.0 + i))
    seconds = figures.by_second()
    assert [b["second"] for b in seconds] == [0, 1]
    assert [b["deliveries"] for b in seconds] == [100, 50]
    assert seconds[0]["max_ms"] == 12.0 and seconds[0]["p50_ms"] == 11.0
    assert seconds[1]["max_ms"] == 349.0 and seconds[1]["p99_ms"] > 340
    assert figures.summary()["by_second"] == seconds
    # The median of the seconds' p99s: one slow second among steady ones does
    # not make it.
    for i in range(100):
        figures.timeline.append((1002.0 + i / 100, 10.0 + i % 3))
    steady = figures.by_second()[2]["p99_ms"]
    assert steady < 13 and figures.summary()["p99_median_of_seconds_ms"] == steady


def test_no_deliveries_no_seconds() -> None:
    assert Figures().by_second() == []
    assert Figures().summary()["p99_ms"] is None
    assert Figures().summary()["p99_median_of_seconds_ms"] is None


# ----- bench_server: the stack beside its baseline --------------------------------


def summary(p50: float | None, p99: float | None, cpu: float | None, **more: Any) -> dict[str, Any]:
    """A stack's or a baseline's figures as bench_server keeps them."""
    figures = Figures().summary()
    figures.update(p50_ms=p50, p99_ms=p99, daphne_cpu_ms_per_action=cpu)
    figures.update(
        processes=1, tables=20, sockets=80, actions_per_second=40.0, daphne_cpu_percent=7.0,
        client_cpu_percent=2.0, machine_cpu_percent=90.0, measured_seconds=5.1,
    )  # fmt: skip
    figures.update(more)
    return figures


def test_ratios_are_the_stack_over_its_baseline() -> None:
    stack = summary(4.0, 30.0, 2.5, p99_median_of_seconds_ms=12.0)
    assert ratios(stack, summary(2.0, 6.0, 0.5, p99_median_of_seconds_ms=4.0)) == {
        "p50": 2.0,
        "p99": 5.0,
        "p99_median_of_seconds": 3.0,
        "cpu_per_action": 5.0,
    }
    # Nothing measured, or a baseline of zero: no ratio rather than a wrong one.
    assert ratios(stack, summary(None, 0.0, 0.5)) == {
        "p50": None,
        "p99": None,
        "p99_median_of_seconds": None,
        "cpu_per_action": 5.0,
    }


def test_cpu_per_action_sums_the_processes_over_the_measured_bouts() -> None:
    # Two Daphne processes' CPU seconds already summed by the reader, and the
    # bouts' deltas added up: 1.2 s over 10 s of play and 400 actions is 3 ms
    # per action, 12% of a core.
    used = {"daphne": 1.2, "client": 0.5, "busy": 1000.0, "total": 2000.0, "wall": 10.0}
    figures = cpu_figures(used, 400)
    assert figures["daphne_cpu_ms_per_action"] == 3.0
    assert figures["daphne_cpu_percent"] == 12.0
    assert figures["client_cpu_percent"] == 5.0
    assert figures["measured_seconds"] == 10.0
    assert figures["machine_cpu_percent"] == 50.0 * (os.cpu_count() or 1)
    assert cpu_figures(used, 0)["daphne_cpu_ms_per_action"] is None


def test_a_side_adds_up_what_each_of_its_bouts_used() -> None:
    side = Side("embedded", SITE_APP, [], {})
    side.add({"daphne": 5.0, "wall": 100.0}, {"daphne": 5.5, "wall": 105.0})
    side.add({"daphne": 7.0, "wall": 120.0}, {"daphne": 7.25, "wall": 125.0})
    assert side.used == {"daphne": 0.75, "wall": 10.0}


def test_the_report_gives_each_stack_beside_its_baseline() -> None:
    embedded = summary(
        3.0, 15.0, 1.8, tables_made_seconds=1.0, note=ONE_PROCESS_NOTE,
        p99_median_of_seconds_ms=9.0,
    )  # fmt: skip
    embedded["baseline"] = summary(1.2, 5.0, 0.6, p99_median_of_seconds_ms=4.0)
    embedded["vs_baseline"] = ratios(embedded, embedded["baseline"])
    redis = summary(8.0, 40.0, 4.0, processes=2, tables_made_seconds=2.0)
    redis["baseline"] = summary(2.0, 8.0, 1.0, processes=2)
    redis["vs_baseline"] = ratios(redis, redis["baseline"])

    out = StringIO()
    command = Command(stdout=out)
    command.report("embedded", embedded)
    text = out.getvalue()
    assert "1.800 ms per action" in text and "0.600 ms per action" in text
    assert (
        "vs baseline: p50 x2.50  p99 x3.00 (median of the seconds' p99s x2.25)  "
        "Daphne CPU per action x3.00" in text
    )
    assert ONE_PROCESS_NOTE in text

    lines = comparison_lines({"embedded": embedded, "redis": redis})
    assert lines[2].split()[:2] == ["embedded", "1"]
    assert "3.0 / 1.2 = x2.50" in lines[2] and "1.800 / 0.600 = x3.00" in lines[2]
    assert lines[3].split()[:2] == ["redis", "2"]
    assert "40.0 / 8.0 = x5.00" in lines[3] and "4.000 / 1.000 = x4.00" in lines[3]


@pytest.mark.django_db
def test_spread_tables_start_at_different_moves_of_their_first_round() -> None:
    from game.models import Action, Table
    from lab.bench.bench_tables import ROUND_ACTIONS, prepare_tables

    made = prepare_tables(12, seed=3, spread=True)
    versions = [Table.objects.get(pk=t["pk"]).version for t in made]
    assert len(set(versions)) > 6 and max(versions) < ROUND_ACTIONS
    for t in made:  # each move made is in the log, one per version
        logged = list(Action.objects.filter(table_id=t["pk"]).values_list("version", flat=True))
        assert sorted(logged) == list(range(1, Table.objects.get(pk=t["pk"]).version + 1))
    assert [Table.objects.get(pk=t["pk"]).version for t in prepare_tables(3, seed=3)] == [0] * 3


@pytest.mark.django_db
def test_the_clients_read_the_version_from_either_servers_state_frame() -> None:
    import json

    from game.sockets import frames
    from lab.bench import bench_echo
    from lab.bench.bench_tables import prepare_tables
    from lab.bench.loadtest import state_version

    table = prepare_tables(1, seed=2)[0]
    version, site_frame = frames.state_frame(table["pk"], 0)
    assert state_version(site_frame) == version == json.loads(site_frame)["version"]
    assert state_version(json.dumps(bench_echo.state_frame(1234))) == 1234
    for other in ({"type": "chat", "text": "a"}, {"type": "error", "code": "stale"}):
        assert state_version(json.dumps(other)) is None
    assert state_version('{"type": "state", "version": "x"}') is None


class _Connection:
    """The frames a server sent, as the websockets client yields them."""

    def __init__(self, messages: list[str]) -> None:
        self.messages = messages
        self.sent: list[str] = []

    def __aiter__(self) -> Any:
        return self._messages()

    async def _messages(self) -> Any:
        for message in self.messages:
            yield message

    async def send(self, text: str) -> None:
        self.sent.append(text)


def test_a_socket_times_each_state_and_decodes_its_view_only_when_asked() -> None:
    import asyncio
    import json
    import random

    from lab.bench.loadtest import Pending, SeatSocket, TableClient

    figures = Figures()
    client = TableClient("t", figures, random.Random(1), 0.5)
    client.measuring = True
    client.pending = Pending(5, 0.0, 1, {0}, True)
    view = {"version": 5, "to_act": 2, "legal_actions": [{"type": "bid", "seat": 2, "bid": 3}]}
    messages = [
        json.dumps({"type": "error", "message": "no", "code": "stale"}),
        json.dumps({"type": "state", "version": 4, "view": {"version": 4}}),
        json.dumps({"type": "state", "version": 5, "view": view}),
        json.dumps({"type": "chat", "text": "hello"}),
        # Written with another key order: read all the same, whole.
        json.dumps({"view": {"version": 7}, "version": 7, "type": "state"}),
    ]
    socket = SeatSocket(client, 0, _Connection(messages[:4]))
    asyncio.run(socket.read())
    assert socket.version == 5 and socket._undecoded == messages[2]
    assert socket.view == view and socket._undecoded is None
    assert figures.errors == {"stale": 1} and len(figures.others) == 1 and not figures.acting
    assert client.pending is None  # the one socket it waited for has it
    # 5 to 7 is a gap: the socket asks for the whole state; the next frame
    # at 7 or later recovers it.
    socket.connection = connection = _Connection(messages[4:])
    asyncio.run(socket.read())
    assert socket.version == 7 and socket.view == {"version": 7}
    assert figures.gaps == 1 and json.loads(connection.sent[0]) == {"type": "resync", "version": 7}
    socket.connection = _Connection([json.dumps({"type": "state", "version": 8, "view": {}})])
    asyncio.run(socket.read())
    assert figures.gaps == 1 and figures.gaps_recovered == 1 and socket.version == 8


def test_the_clients_collect_no_garbage_during_a_measured_bout() -> None:
    # A collection pauses the loop that times the frames: those that waited
    # would be timed as the server's latency.
    import asyncio
    import gc

    from lab.bench.loadtest import Clients

    seen: list[bool] = []

    class Table:
        pending = None
        measuring = False

        async def play(self, start_at: float, stop_at: float) -> None:
            seen.append(gc.isenabled())

        def close_pending(self) -> None:
            pass

    clients = Clients([], interval=0.5, seed=1)
    table = Table()
    clients.clients, clients._phases = [table], {id(table): 0.0}  # type: ignore[list-item]
    assert gc.isenabled()
    asyncio.run(clients.play(0.01, measured=False, drain=0))
    asyncio.run(clients.play(0.01, measured=True, drain=0))
    assert seen == [True, False]
    assert gc.isenabled()  # on again after the bout
