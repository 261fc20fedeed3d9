"""``manage.py analyse_rounds --celery`` (game/replays/spread.py): stored rounds
analysed by two real ``replays`` workers (``celery -A spadesite worker -Q
replays``, prefork, one child each) on a Redis server of this module's own on
a spare port, against a SQLite file every process reaches (the tests' own
database is invisible to other processes); the stored analyses equal the
local mode's of the same rounds, and a worker SIGKILLed in the middle of a
batch loses nothing.

Everything runs as processes of its own, as on a cluster: the rounds are
stored by a script, the command is ``manage.py``. The rounds are bot-played
deals whose analysis with its alternatives takes about a CPU second or less.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lab.stack import stackprocs
from tests.support import ROOT, services

FIRST = [7, 8, 10, 12]  # seeds of played_record: the rounds of the first run
SECOND = [7, 8, 10, 12, 2, 5]  # the same deals again, as rounds of another table

STORE = """
import sys
import django
django.setup()
from game.models import Table
from game.research.storage import round_row_from_record
from tests.support.replay_rounds import played_record

records = [played_record(int(seed)) for seed in sys.argv[1:]]
table = Table.objects.create(rules=records[0]["rules"], status=Table.Status.FINISHED)
for n, record in enumerate(records, 1):
    row = round_row_from_record(record, table=table, version=52 * n, kinds="BBBB",
                                bot_names=["BIS+SRP"] * 4)
    row.round_number = n
    row.save()
"""


@dataclass
class Cluster:
    db: Path
    redis_url: str
    env: dict[str, str]
    logs: Path
    workers: dict[str, subprocess.Popen[str]] = field(default_factory=dict)

    def start_worker(self, name: str) -> None:
        with open(self.logs / f"{name}.log", "w") as out:
            command = stackprocs.celery_worker_command(
                "replays", concurrency=1, pool="prefork", name=f"{name}@%h"
            )
            self.workers[name] = stackprocs.start(command, self.env, out)

    def manage(self, *args: str, db: Path | None = None, redis_url: bool = True) -> str:
        env = {**self.env, "DATABASE_URL": f"sqlite:///{db or self.db}"}
        if not redis_url:  # the broker from --broker alone
            env.pop("REDIS_URL")
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:] + self.tail()
        return done.stdout

    def store(self, seeds: list[int]) -> None:
        subprocess.run([sys.executable, "-c", STORE, *map(str, seeds)], cwd=ROOT, env=self.env,
                       check=True, timeout=120)  # fmt: skip

    def tail(self) -> str:
        return "\n".join(f"--- {p.name}\n{stackprocs.tail(p, 2000)}" for p in self.logs.glob("*"))


def analyses(db: Path) -> dict[int, tuple[Any, ...]]:
    """Every stored analysis but its timings: round -> (format, result, alternatives, error)."""

    def untimed(text: str) -> Any:
        result = json.loads(text)
        result.pop("seconds")  # the solver's time, in the result too
        return result

    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT round_id, format, result, alternatives, error "
                         "FROM replays_roundanalysis").fetchall()  # fmt: skip
    return {r[0]: (r[1], untimed(r[2]), json.loads(r[3]), r[4]) for r in rows}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    logs = tmp_path_factory.mktemp("replays")
    db = logs.parent / "rounds.sqlite3"
    url, server = services.own_redis_server(logs.parent)
    env = stackprocs.stack_env(f"sqlite:///{db}", url, SPADES_REPLAY_ANALYSIS="0")
    env["DJANGO_SETTINGS_MODULE"] = "spadesite.settings"
    cluster = Cluster(db, url, env, logs)
    try:
        cluster.manage("migrate", "--noinput", "-v0")
        for name in ("replays0", "replays1"):
            cluster.start_worker(name)
        for name, worker in cluster.workers.items():
            stackprocs.wait_for_text(logs / f"{name}.log", "ready.", worker, timeout=90)
        yield cluster
    finally:
        for worker in cluster.workers.values():
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait(timeout=10)
        stackprocs.stop(server)


def reference(cluster: Cluster, seeds: list[int]) -> dict[int, tuple[Any, ...]]:
    """Store ``seeds``' rounds, and the local mode's analyses of them (on a copy)."""
    cluster.store(seeds)
    copy = cluster.db.with_name(f"local{seeds[0]}.sqlite3")
    with sqlite3.connect(cluster.db) as source, sqlite3.connect(copy) as target:
        source.backup(target)  # with what the write-ahead log holds
    before = set(analyses(copy))
    cluster.manage("analyse_rounds", db=copy)
    local = {k: v for k, v in analyses(copy).items() if k not in before}
    assert len(local) == len(seeds) and all(v[3] == "" for v in local.values())
    return local


def test_celery_workers_store_what_the_local_mode_does(cluster: Cluster) -> None:
    local = reference(cluster, FIRST)
    out = cluster.manage("analyse_rounds", "--celery", "--broker", cluster.redis_url,
                         "--batch", "2", "--timeout", "60", redis_url=False)  # fmt: skip
    assert f"analysed {len(FIRST)} round(s)" in out and "sent again" not in out
    assert analyses(cluster.db) == local
    took = {
        name: len(re.findall(r"analyse_rounds\[.*\] succeeded", stackprocs.tail(
            cluster.logs / f"{name}.log", 10**6)))
        for name in cluster.workers
    }  # fmt: skip
    assert sum(took.values()) >= len(FIRST) // 2 and all(took.values()), took
    # started again: nothing left to send
    again = cluster.manage("analyse_rounds", "--celery", "--broker", cluster.redis_url)
    assert again.strip() == "no round to analyse"


def test_a_worker_killed_in_the_middle_of_a_batch_loses_nothing(cluster: Cluster) -> None:
    local = reference(cluster, SECOND)
    before = analyses(cluster.db)
    log = cluster.logs / "replays0.log"
    seen = len(re.findall(r"analyse_rounds\[", stackprocs.tail(log, 10**6)))
    env = {**cluster.env, "DATABASE_URL": f"sqlite:///{cluster.db}"}
    run = subprocess.Popen(
        [sys.executable, "manage.py", "analyse_rounds", "--celery", "--broker", cluster.redis_url,
         "--batch", "2", "--timeout", "3"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:  # replays0 holds a batch it has not finished: kill it now
            text = stackprocs.tail(log, 10**6)
            received = len(re.findall(r"Task game\.replays\.analyse_rounds\[.*\] received", text))
            finished = len(re.findall(r"Task game\.replays\.analyse_rounds\[.*\] succeeded", text))
            if received > finished and received + finished > seen:
                break
            assert run.poll() is None and time.monotonic() < deadline, cluster.tail()
            time.sleep(0.01)
        os.killpg(cluster.workers["replays0"].pid, signal.SIGKILL)
        cluster.workers["replays0"].wait(timeout=10)
        out, err = run.communicate(timeout=180)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err[-3000:] + cluster.tail()
    assert f"analysed {len(SECOND)} round(s)" in out, out
    stored = analyses(cluster.db)
    assert {k: v for k, v in stored.items() if k not in before} == local  # each round once
    assert len(stored) == len(before) + len(SECOND)
