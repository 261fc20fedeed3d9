"""The production stack end to end: PostgreSQL, the Redis pub/sub channel layer, a
real Celery worker process and a Daphne process.

One scratch PostgreSQL database and one empty Redis database number per
module, migrated by ``manage.py migrate`` in a subprocess; the worker and
Daphne run as subprocesses with that environment. Four fast bots play a
short match on the worker (no pacing delay); the test then checks the log
in PostgreSQL: versions 1..N without a hole, replaying to the stored result,
one round record per round. A spectator socket on Daphne sees the states as
the worker plays. Processes, the database and the Redis database are
cleaned up even when a check fails.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from game.engine import Rules
from lab.stack import stackprocs
from tests.support import services
from tests.support.stack_checks import check_stored_log

pytestmark = pytest.mark.stack

# Fast bots, a short match: a few rounds.
BOTS = ("BIS+SRP", "RB+WRP", "BIS+SRP", "RB+WRP")
RULES = Rules(winning_goal=100, losing_goal=-100)
MATCH_TIMEOUT_SECONDS = 120.0


@dataclass
class Stack:
    database_url: str
    redis_url: str
    env: dict[str, str]
    port: int
    logs: Path

    def logs_tail(self) -> str:
        return "\n".join(
            f"--- {path.name}:\n{stackprocs.tail(path, 2000)}"
            for path in sorted(self.logs.glob("*.log"))
        )


def _create_bot_table(stack: Stack) -> dict[str, Any]:
    """A table of four bots, not started yet: {"pk", "public_id"}."""
    code = (
        "import json\n"
        "from game import seating\n"
        "from game.engine import Rules\n"
        f"t = seating.create_table(rules=Rules.from_dict({RULES.to_dict()!r}),"
        " stand_in_bots=False)\n"
        f"for p, name in enumerate({list(BOTS)!r}):\n"
        "    seating.add_bot(t, p, name)\n"
        "print(json.dumps({'pk': t.pk, 'public_id': t.public_id}))\n"
    )
    out = stackprocs.manage(stack.env, "shell", "-c", code)
    return json.loads(out.strip().splitlines()[-1])


def _start_table(stack: Stack, pk: int) -> None:
    # start_table schedules the first bot move: a Celery task sent to Redis.
    stackprocs.manage(
        stack.env, "shell", "-c", f"from game import seating; seating.start_table({pk})"
    )


def _table_row(stack: Stack, pk: int) -> tuple[str, int]:
    with psycopg.connect(stack.database_url, connect_timeout=5) as conn:
        row = conn.execute("select status, version from game_table where id = %s", [pk]).fetchone()
    assert row is not None
    return str(row[0]), int(row[1])


def _wait_finished(stack: Stack, pk: int) -> int:
    deadline = time.monotonic() + MATCH_TIMEOUT_SECONDS
    status, version = _table_row(stack, pk)
    while status != "finished":
        if time.monotonic() > deadline:
            pytest.fail(
                f"the match did not finish within {MATCH_TIMEOUT_SECONDS:.0f} s "
                f"(status {status}, version {version})\n{stack.logs_tail()}"
            )
        time.sleep(0.2)
        status, version = _table_row(stack, pk)
    return version


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    admin_url = services.postgres_url()
    base_redis = services.redis_url()
    redis_url = stackprocs.pick_empty_redis_db(base_redis)
    name, database_url = stackprocs.create_scratch_database(admin_url, "spades_stack")
    processes = []
    with tempfile.TemporaryDirectory(prefix="spades-stack-") as tmp:
        logs = Path(tmp)
        env = stackprocs.stack_env(
            database_url,
            redis_url,
            SPADES_BOT_DELAY="0",
            DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
        )
        port = stackprocs.free_port()
        result = Stack(database_url, redis_url, env, port, logs)
        try:
            stackprocs.manage(env, "migrate", "--noinput")
            worker_log = logs / "celery.log"
            with open(worker_log, "w") as worker_out, open(logs / "daphne.log", "w") as web_out:
                worker = stackprocs.start(
                    stackprocs.celery_worker_command("bots,search", concurrency=4), env, worker_out
                )
                processes.append(worker)
                daphne = stackprocs.start(stackprocs.daphne_command(port), env, web_out)
                processes.append(daphne)
                stackprocs.wait_for_text(worker_log, "ready.", worker, timeout=30)
                stackprocs.wait_for_port(port, daphne, timeout=30)
                yield result
        finally:
            for process in processes:
                stackprocs.stop(process)
            stackprocs.drop_database(admin_url, name)
            stackprocs.flush_redis_db(redis_url)


def test_four_bots_play_a_match_on_a_celery_worker_into_postgres(stack: Stack) -> None:
    table = _create_bot_table(stack)
    _start_table(stack, table["pk"])
    final_version = _wait_finished(stack, table["pk"])

    match = check_stored_log(stack.database_url, table["pk"])
    assert match.is_over and match.version == final_version


def test_a_spectator_socket_on_daphne_sees_the_worker_play(stack: Stack) -> None:
    from websockets.sync.client import connect

    table = _create_bot_table(stack)
    origin = f"http://127.0.0.1:{stack.port}"
    url = f"ws://127.0.0.1:{stack.port}/ws/table/{table['public_id']}/"
    versions: list[int] = []
    with connect(url, origin=origin, open_timeout=10, close_timeout=2) as socket:
        first = json.loads(socket.recv(timeout=10))
        assert first["type"] == "state"
        assert first["view"]["table"]["status"] == "open"
        _start_table(stack, table["pk"])
        deadline = time.monotonic() + MATCH_TIMEOUT_SECONDS
        status = "open"
        while status != "finished":
            left = deadline - time.monotonic()
            if left <= 0:
                pytest.fail(f"no final state within the time limit\n{stack.logs_tail()}")
            try:
                frame = json.loads(socket.recv(timeout=min(left, 15)))
            except TimeoutError:
                pytest.fail(
                    f"no frame for 15 s (last version {versions[-1:]})\n{stack.logs_tail()}"
                )
            if frame["type"] != "state":
                continue
            status = frame["view"]["table"]["status"]
            if frame["version"] > 0:
                versions.append(frame["version"])
                # A spectator sees no hand, ever.
                assert frame["view"]["hand"] is None
    final_status, final_version = _table_row(stack, table["pk"])
    assert final_status == "finished"
    assert versions == sorted(versions)  # never backwards
    assert versions[-1] == final_version
    # The worker's moves reach the socket as they happen, not in one burst at the end:
    # with one broadcast per move most versions arrive (a busy socket may skip some).
    assert len(set(versions)) >= final_version // 2
