"""A study's launch on PostgreSQL, through a real Daphne server: a crowd
consenting and polling at once meets no deadlock and no 500, and a pool that
runs dry answers 503 and gives its connections back.

Each test starts its own Daphne on a scratch database (pooled connections,
bots in-process), so nothing here touches the shared services' state.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from lab.stack import stackprocs
from tests.support import services
from tests.support.study_client import Participant, study_text

pytestmark = pytest.mark.stack



@dataclass
class Server:
    url: str
    database_url: str
    log: Path
    pool_size: int

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Server]:
    extra = getattr(request, "param", {})
    pool_size = int(extra.get("SPADES_DB_POOL_SIZE", "12"))
    with services.scratch_postgres("spades_launch") as database_url:
        env = stackprocs.stack_env(
            database_url,
            None,
            SPADES_REPLAY_ANALYSIS="0",
            SPADES_DB_THREADS="2",
            SPADES_DB_POOL_SIZE=str(pool_size),
            **{k: v for k, v in extra.items() if k != "SPADES_DB_POOL_SIZE"},
        )
        stackprocs.manage(env, "migrate", "-v0")
        study_file = tmp_path / "study.toml"
        study_file.write_text(study_text())
        stackprocs.manage(env, "load_study", str(study_file))
        port = stackprocs.free_port()
        log = tmp_path / "daphne.log"
        with log.open("w") as out:
            process = stackprocs.start(stackprocs.daphne_command(port), env, out)
        try:
            stackprocs.wait_for_port(port, process)
            yield Server(f"http://127.0.0.1:{port}", database_url, log, pool_size)
        finally:
            stackprocs.stop(process)


def crowd(server: Server, count: int, polls: int) -> list[Participant]:
    """``count`` participants arriving together, each polling ``polls`` times."""
    people = [Participant(server.url, f"PID{n:04d}") for n in range(count)]
    start = threading.Barrier(count)

    def run(person: Participant) -> None:
        start.wait()
        person.arrive()
        for _ in range(polls):
            person.poll()

    threads = [threading.Thread(target=run, args=(p,)) for p in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    return people


def query(database_url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(stackprocs._psycopg_url(database_url), autocommit=True) as conn:
        return conn.execute(sql).fetchall()


def test_fifty_participants_consent_and_poll_at_once_without_deadlock_or_500(
    server: Server,
) -> None:
    people = crowd(server, 50, polls=3)
    statuses = Counter(status for p in people for _, status in p.statuses)
    assert all(status < 500 for status in statuses), statuses
    assert "deadlock detected" not in server.log_text()
    # One participant row, recruitment ID and assignment slot each; nobody at two tables.
    assert query(server.database_url, "SELECT count(*) FROM studies_participant") == [(50,)]
    assert query(
        server.database_url, "SELECT count(DISTINCT key_hash) FROM studies_recruitmentid"
    ) == [(50,)]
    assert query(
        server.database_url,
        "SELECT count(*), count(DISTINCT sequence), min(sequence), max(sequence) "
        "FROM studies_assignment",
    ) == [(50, 50, 0, 49)]
    ((seats, seated),) = query(
        server.database_url,
        "SELECT count(*), count(DISTINCT participant_id) FROM studies_studyseat",
    )
    assert seats == seated
    # Balanced: the two conditions differ by at most one.
    counts = [c for (c,) in query(
        server.database_url,
        "SELECT count(*) FROM studies_participant GROUP BY condition_id",
    )]  # fmt: skip
    assert max(counts) - min(counts) <= 1, counts
    # Everyone who passed the quiz waits or plays: none lost on the way.
    stages = dict(query(
        server.database_url, "SELECT stage, count(*) FROM studies_participant GROUP BY stage"
    ))  # fmt: skip
    assert set(stages) <= {"waiting", "playing"}, stages


def _server_connections(database_url: str) -> int:
    name = database_url.rsplit("/", 1)[1]
    (count,) = query(
        database_url,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = "
        f"'{name}' AND pid <> pg_backend_pid()",
    )[0]
    return int(count)


@pytest.mark.parametrize(
    "server", [{"SPADES_DB_POOL_SIZE": "3", "SPADES_DB_POOL_TIMEOUT": "1"}], indirect=True
)
def test_an_exhausted_pool_answers_503_and_gives_its_connections_back(server: Server) -> None:
    """The study row held from outside for a few seconds: consents queue on it
    with their connections, the pool (3) runs dry, the requests beyond it wait
    its second and get the 503 page with a retry. Once the lock goes, everyone
    gets in on a retry, and the server holds no more connections than its pool."""
    holder = psycopg.connect(stackprocs._psycopg_url(server.database_url))
    holder.execute("SELECT id FROM studies_study FOR UPDATE")
    release = threading.Timer(4, holder.rollback)
    release.start()
    try:
        people = crowd(server, 10, polls=0)
    finally:
        release.join()
        holder.close()
    statuses = Counter(status for p in people for _, status in p.statuses)
    assert statuses[503] > 0, statuses
    assert statuses[500] == 0, statuses
    busy = next(p.last_503 for p in people if p.last_503)
    assert "very busy" in busy and "PID" not in busy and "Traceback" not in busy
    # The retry (the page reloads itself) gets everyone in: nothing lost.
    for person in people:
        person.arrive()
    assert query(server.database_url, "SELECT count(*) FROM studies_participant") == [(10,)]
    deadline = time.monotonic() + 10
    while (held := _server_connections(server.database_url)) > server.pool_size:
        assert time.monotonic() < deadline, held
        time.sleep(0.2)
