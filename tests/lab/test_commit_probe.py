"""bench_server's probe of the disk: bare PostgreSQL commits, timed only while on
(lab/bench/commit_probe.py)."""

from __future__ import annotations

import time

import psycopg
import pytest

from lab.bench.commit_probe import TABLE, CommitProbe
from tests.support import services

pytestmark = pytest.mark.stack


def _rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(f"select count(*) from {TABLE}").fetchone()
    assert row is not None
    return int(row[0])


def test_the_probe_commits_and_times_only_while_it_is_on() -> None:
    with services.scratch_postgres("spades_probe") as url:
        probe = CommitProbe(url)
        probe.start()
        try:
            time.sleep(0.3)  # off: nothing is committed
            assert probe.commits_ms == [] and _rows(url) == 0
            probe.on()
            time.sleep(0.5)
            probe.off()
            time.sleep(0.1)  # a commit under way when it went off ends
            made = len(probe.commits_ms)
            time.sleep(0.3)
            assert len(probe.commits_ms) == made and made >= 5
        finally:
            probe.stop()
        assert _rows(url) == made  # each timed commit is one row, committed
        summary = probe.summary()
        assert summary["commits"] == made and summary["failed"] == 0
        assert 0 < summary["p50_ms"] <= summary["p99_ms"] <= summary["max_ms"]
        assert summary["over_50_ms"] == sum(ms > 50 for ms in probe.commits_ms)
