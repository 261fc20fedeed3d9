"""Human moves on PostgreSQL through the event loop's asyncio connections
(``game.moves.stores.PostgresStore``), end to end: a scratch PostgreSQL database, one Daphne
process (in-memory channel layer: one process), tables of four guests whose
sockets play whole matches by random legal moves; then every table's log is
checked in PostgreSQL. Bad frames on this path get an error and change nothing.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from game.engine import Rules
from game.moves.stores.postgres import APPLICATION_NAME
from lab.bench import loadtest
from lab.stack import stackprocs
from tests.support import services
from tests.support.stack_checks import check_stored_log

pytestmark = pytest.mark.stack

RULES = Rules(winning_goal=100, losing_goal=-100)
TABLES = 3


@dataclass
class Stack:
    database_url: str
    env: dict[str, str]
    port: int
    logs: Path

    def make_tables(self, count: int) -> list[dict[str, Any]]:
        code = (
            "import json\n"
            "from lab.bench.bench_tables import prepare_tables\n"
            f"print(json.dumps(prepare_tables({count}, 7, rules={RULES.to_dict()!r})))\n"
        )
        out = stackprocs.manage(self.env, "shell", "-c", code)
        return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]

    def version(self, table_pk: int) -> int:
        with psycopg.connect(self.database_url, connect_timeout=5) as conn:
            row = conn.execute("select version from game_table where id = %s", [table_pk])
            return int(row.fetchone()[0])


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    admin_url = services.postgres_url()
    name, database_url = stackprocs.create_scratch_database(admin_url, "spades_moves")
    daphne = None
    with tempfile.TemporaryDirectory(prefix="spades-moves-") as tmp:
        logs = Path(tmp)
        env = stackprocs.stack_env(
            database_url,
            None,
            SPADES_ASYNC_MOVES="1",
            DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
            # Every client is this machine, playing as fast as it can: limits
            # would count them all as one address (tests/game/sockets/test_security.py).
            SPADES_RATE_LIMITS="0",
        )
        port = stackprocs.free_port()
        try:
            stackprocs.manage(env, "migrate", "--noinput")
            with open(logs / "daphne.log", "w") as out:
                daphne = stackprocs.start(stackprocs.daphne_command(port), env, out)
            stackprocs.wait_for_port(port, daphne, timeout=30)
            yield Stack(database_url, env, port, logs)
        finally:
            if daphne is not None:
                stackprocs.stop(daphne)
            stackprocs.drop_database(admin_url, name)


def test_guests_play_whole_matches_through_asyncio_connections(stack: Stack) -> None:
    tables = stack.make_tables(TABLES)
    figures = asyncio.run(
        loadtest.run_clients(stack.port, tables, seconds=60, interval=0.02, seed=5, drain=3)
    )
    log = stackprocs.tail(stack.logs / "daphne.log")
    assert figures.connect_failures == 0, log
    assert figures.errors == {}, log
    assert figures.gaps == 0 and figures.undelivered == 0, log
    assert figures.finished_tables == TABLES, log
    for table in tables:
        match = check_stored_log(stack.database_url, table["pk"])
        assert match.is_over
        assert len(match.rounds) >= 1
    # The moves went through the asyncio connections, not Django's.
    with psycopg.connect(stack.database_url, connect_timeout=5) as conn:
        (opened,) = conn.execute(
            "select count(*) from pg_stat_activity where application_name = %s"
            " and datname = current_database()",
            [APPLICATION_NAME],
        ).fetchone()
    assert opened >= 1


def test_a_stale_or_illegal_move_is_refused_and_changes_nothing(stack: Stack) -> None:
    from websockets.sync.client import connect

    (table,) = stack.make_tables(1)
    before = stack.version(table["pk"])

    def frames(socket: Any) -> Iterator[dict[str, Any]]:
        """The socket's frames about moves (not the table talk: chat, watchers)."""
        while True:
            frame = json.loads(socket.recv(timeout=10))
            if frame["type"] not in ("chat_history", "watchers"):
                yield frame

    url = f"ws://127.0.0.1:{stack.port}/ws/table/{table['public_id']}/"
    origin = f"http://127.0.0.1:{stack.port}"

    def act(socket: Any, action: dict[str, Any], version: int) -> None:
        socket.send(json.dumps({"type": "act", "action": action, "version": version}))

    # A spectator sees whose turn it is, and cannot act.
    with connect(url, origin=origin, open_timeout=10) as socket:  # type: ignore[arg-type]
        incoming = frames(socket)
        first = next(incoming)
        assert first["type"] == "state" and first["version"] == before
        to_act = first["view"]["to_act"]
        act(socket, {"type": "bid", "tricks": 3}, before)
        assert next(incoming)["code"] == "spectator"
    # A seated guest whose turn it is not.
    seat = (to_act + 1) % 4
    cookie = f"{table['cookie']}={table['sessions'][seat]}"
    with connect(
        url,
        origin=origin,  # type: ignore[arg-type]
        additional_headers={"Cookie": cookie},
        open_timeout=10,
    ) as socket:
        incoming = frames(socket)
        assert next(incoming)["version"] == before
        act(socket, {"type": "bid", "tricks": 3}, before)
        out_of_turn = next(incoming)
        assert out_of_turn["type"] == "error" and out_of_turn["code"] == "illegal"
        act(socket, {"type": "bid", "tricks": 14}, before)
        assert next(incoming)["type"] == "error"
        act(socket, {"type": "bid", "tricks": 3}, -1)  # no version is negative
        assert next(incoming)["code"] == "bad_action"
        act(socket, {"type": "bid", "tricks": 3}, before + 1)  # not the table's version
        stale = next(incoming)
        assert stale["type"] == "error" and stale["code"] == "stale"
        fresh = next(incoming)
        assert fresh["type"] == "state" and fresh["version"] == before
    assert stack.version(table["pk"]) == before
    check_stored_log(stack.database_url, table["pk"])


def _moves_connections(database_url: str, terminate: bool = False) -> int:
    with psycopg.connect(database_url, connect_timeout=5, autocommit=True) as conn:
        what = "pg_terminate_backend(pid)" if terminate else "pid"
        rows = conn.execute(
            f"select {what} from pg_stat_activity where application_name = %s"
            " and datname = current_database()",
            [APPLICATION_NAME],
        ).fetchall()
    return len(rows)


def test_moves_go_on_when_their_connections_are_cut(stack: Stack) -> None:
    tables = stack.make_tables(2)
    first = asyncio.run(loadtest.run_clients(stack.port, tables, seconds=1.5, interval=0.05))
    assert first.errors == {} and first.sent > 0
    assert _moves_connections(stack.database_url, terminate=True) >= 1  # as a restart would
    second = asyncio.run(loadtest.run_clients(stack.port, tables, seconds=1.5, interval=0.05))
    log = stackprocs.tail(stack.logs / "daphne.log")
    assert second.errors == {} and second.undelivered == 0, log
    assert second.sent > 10, log
    assert _moves_connections(stack.database_url) >= 1  # fresh ones took over
    for table in tables:
        check_stored_log(stack.database_url, table["pk"])
