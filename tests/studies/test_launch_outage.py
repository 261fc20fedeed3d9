"""An outage during a study's launch, on the production stack (nginx, two
Daphne processes, a Celery worker and beat, Redis and PostgreSQL of the
test's own): a Daphne process killed and started again, Redis stopped and
started again, PostgreSQL's connections all cut, the Celery worker stopped
and another started, while participants wait in the waiting room and play
at their tables. Nobody is lost or dropped, and every table moves on within
``RECOVERY_BOUND_SECONDS`` of each service being back."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from lab.stack import stackprocs
from tests.support.cluster import RECOVERY_BOUND_SECONDS, Cluster, Players, running_cluster
from tests.support.study_client import SLUG, Participant, study_text

pytestmark = [pytest.mark.stack, pytest.mark.faults]


def rows(cluster: Cluster, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(cluster.database_url, connect_timeout=5) as conn:
        return conn.execute(sql).fetchall()


def load(cluster: Cluster, tmp_path: Path) -> None:
    # A lone participant of the two-person condition waits (ten minutes' timeout).
    # The bots move after 0.3 s (0.75 s after a trick), so that a move's own
    # pace is not taken for the time a fault cost (1.5 s, 3.75 s after a trick).
    text = study_text().replace("timeout_seconds = 60", "timeout_seconds = 600")
    text = text.replace("bot_delay = 1.5", "bot_delay = 0.3")
    path = tmp_path / "study.toml"
    path.write_text(text)
    stackprocs.manage(cluster.env, "load_study", str(path))


class Pollers:
    """Every participant's page polling every second, as the waiting page does
    (the table page's own poll is its socket; the state poll also moves a
    playing participant on)."""

    def __init__(self, people: list[Participant]) -> None:
        self.people = people
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(p,)) for p in people]

    def run(self, person: Participant) -> None:
        while not self.stop.wait(1.0):
            person.poll()

    def __enter__(self) -> Pollers:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)


def tables_of(cluster: Cluster, people: list[Participant]) -> list[Players]:
    """Each study table's participants on their sockets, through nginx."""
    seats = rows(
        cluster,
        "SELECT t.public_id, s.position, r.raw_id FROM studies_studyseat s"
        " JOIN studies_recruitmentid r ON r.participant_id = s.participant_id"
        " JOIN studies_studytable st ON st.id = s.study_table_id"
        " JOIN game_table t ON t.id = st.table_id",
    )
    by_id = {p.raw_id: p for p in people}
    tables: dict[str, dict[int, str]] = {}
    for public_id, position, raw_id in seats:
        cookie = by_id[str(raw_id)].session_cookie()
        tables.setdefault(str(public_id), {})[int(position)] = cookie
    origin = f"http://127.0.0.1:{cluster.proxy_port}"
    return [
        Players(f"ws://127.0.0.1:{cluster.proxy_port}/ws/table/{public_id}/", origin, cookies,
                random.Random(n))
        for n, (public_id, cookies) in enumerate(sorted(tables.items()))
    ]  # fmt: skip


def test_an_outage_during_a_launch_loses_and_drops_no_one(tmp_path: Path) -> None:
    with running_cluster(
        "spades_study_outage", daphnes=2, workers=1, beat=True, SPADES_REPLAY_ANALYSIS="0"
    ) as cluster:
        load(cluster, tmp_path)
        base = f"http://127.0.0.1:{cluster.proxy_port}"
        people = [Participant(base, f"OUT{n:03d}") for n in range(5)]
        for person in people:
            person.arrive()
            person.poll()
        for person in people:
            if person.poll().get("stage") == "playing":
                person.call(f"/study/{SLUG}/table/")  # the session made their seat's guest
        stages = Counter(stage for (stage,) in rows(cluster, "SELECT stage FROM "
                                                    "studies_participant"))  # fmt: skip
        assert stages["waiting"] >= 1 and stages["playing"] >= 2, stages
        tables = tables_of(cluster, people)

        async def play_each(moves: int) -> None:
            # Side by side, as people play: none waits out a turn timer for another.
            await asyncio.gather(*(players.play(moves) for players in tables))

        recoveries: dict[str, float] = {}

        async def back(fault: str) -> None:
            """Play on; each table's next move, timed from the service back."""
            since = time.monotonic()
            await play_each(2)
            for n, players in enumerate(tables):
                if not players.over:
                    first = min(t for t, _ in players.acknowledged if t > since)
                    recoveries[f"{fault}, table {n}"] = first - since

        async def play_through_the_faults() -> dict[str, float]:
            keepers = [task for players in tables for task in players.start()]
            await play_each(2)
            started = {id(p): max(p.versions) for p in tables}
            cluster.daphnes[0].kill()
            cluster.daphnes[0].wait(timeout=10)
            await asyncio.sleep(1)
            cluster.restart_daphne(0)
            await back("Daphne killed")
            cluster.stop_redis()
            await asyncio.sleep(3)
            cluster.start_redis()
            await back("Redis restarted")
            assert cluster.terminate_backends() > 0
            await back("PostgreSQL cut")
            # SIGTERM: it gives back the messages it holds.
            await asyncio.to_thread(stackprocs.stop, cluster.workers[0])
            await asyncio.to_thread(cluster.start_worker)
            await back("worker stopped")
            for players in tables:
                await players.close([t for t in keepers if not t.done()])
            return {str(id(p)): max(p.versions) - started[id(p)] for p in tables}

        with Pollers(people):
            progress = asyncio.run(asyncio.wait_for(play_through_the_faults(), timeout=240))
        print("\nnext move after each fault: "
              + ", ".join(f"{k} {v:.2f} s" for k, v in recoveries.items()))  # fmt: skip
        assert max(recoveries.values()) < RECOVERY_BOUND_SECONDS, (recoveries, cluster.tail())
        assert all(moves >= 8 for moves in progress.values()), progress
        after = Counter(stage for (stage,) in rows(cluster, "SELECT stage FROM "
                                                   "studies_participant"))  # fmt: skip
        stand_ins = rows(cluster, "SELECT count(*) FROM game_action WHERE by_stand_in")
        assert after["dropped"] == 0 and sum(after.values()) == 5, (after, stand_ins)
        assert rows(cluster, "SELECT count(*) FROM studies_studyseat WHERE dropped") == [(0,)]
        statuses = Counter(status for p in people for _, status in p.statuses)
        assert statuses[500] == 0, statuses
