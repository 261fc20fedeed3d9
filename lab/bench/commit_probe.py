"""Bare PostgreSQL commits, timed: what the disk did to a commit during a run.

Every move on the production stack is a commit, and a commit waits for
PostgreSQL's WAL to reach the disk (fsync). A virtual machine's disk can
stall that for hundreds of milliseconds now and then, with no program of ours
involved; the site's moves then wait alike. ``manage.py bench_server`` runs
this probe during its baseline's bouts (the site idle, the baseline touching
no database): one single-row insert, in autocommit, every
:data:`EVERY_SECONDS` on a connection of its own, so that a run's report says
whether the disk was quiet while it ran.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg

from lab.bench.bench_figures import percentile

EVERY_SECONDS = 0.01
TABLE = "bench_commit_probe"


class CommitProbe:
    """A thread that times a commit every :data:`EVERY_SECONDS` while it is on."""

    def __init__(self, database_url: str) -> None:
        self._url = database_url
        self._on = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.commits_ms: list[float] = []
        self.failed = 0

    def start(self) -> None:
        with psycopg.connect(self._url, autocommit=True) as conn:
            conn.execute(f"create table if not exists {TABLE} (at double precision)")
        self._thread = threading.Thread(target=self._run, name="commit-probe", daemon=True)
        self._thread.start()

    def on(self) -> None:
        self._on.set()

    def off(self) -> None:
        self._on.clear()

    def stop(self) -> None:
        self._stop.set()
        self._on.set()  # wake it
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        with psycopg.connect(self._url, autocommit=True) as conn:
            while not self._stop.is_set():
                self._on.wait()
                if self._stop.is_set():
                    return
                started = time.perf_counter()
                try:
                    conn.execute(f"insert into {TABLE} values (%s)", [time.time()])
                except psycopg.Error:
                    self.failed += 1
                    return
                self.commits_ms.append((time.perf_counter() - started) * 1e3)
                time.sleep(EVERY_SECONDS)

    def summary(self) -> dict[str, Any]:
        commits = self.commits_ms
        return {
            "commits": len(commits),
            "failed": self.failed,
            "p50_ms": percentile(commits, 50),
            "p99_ms": percentile(commits, 99),
            "max_ms": max(commits) if commits else None,
            "over_50_ms": sum(ms > 50 for ms in commits),
        }
