"""Smoke runs of the server benchmarks at a tiny size: each command runs end to end and
prints its figures (no timing asserts), on SQLite and, where it has a PostgreSQL path,
on a scratch PostgreSQL database. Registered in tests/test_commands.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from game.models import RoundRecordRow, RoundTally, Table
from game.replays.models import RoundAnalysis
from tests.support import services

ROOT = Path(__file__).resolve().parents[2]

# The fewest rounds bench_dashboard fills (one match), one pool match, one load a filter.
TINY_DASHBOARD = ["--rounds", "20", "--pool-matches", "1", "--loads", "1"]
DASHBOARD_LINES = 13  # one per filter case


@pytest.fixture
def database_url() -> Iterator[str]:
    with services.scratch_postgres("spades_bench_cmds") as url:
        yield url


# The tallies' (start, figure) in each partition, in their order on disk.
ON_DISK = """
import json
from django.db import connection
out = {}
with connection.cursor() as c:
    c.execute("SELECT tableoid::regclass::text, start::text, figure FROM game_roundtally "
              "ORDER BY tableoid, ctid")
    for part, start, figure in c.fetchall():
        out.setdefault(part, []).append([start, figure])
print(json.dumps(out))
"""


class Failed(Exception):
    pass


def manage(database_url: str, *args: str) -> str:
    """``manage.py ARGS`` on that database, in a process of its own: its output."""
    env = {**os.environ, "DATABASE_URL": database_url, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    if done.returncode:
        raise Failed(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def test_bench_analysis_times_a_round(tmp_path: Path) -> None:
    out = StringIO()
    figures = tmp_path / "analysis.json"
    call_command("bench_analysis", "--rounds", "1", "--seed", "3", "--alternatives",
                 "--json", str(figures), stdout=out)  # fmt: skip
    text = out.getvalue()
    assert "analysis of a round" in text and "alternatives (every legal card" in text
    data = json.loads(figures.read_text())
    assert data["rounds"] == 1 and len(data["rows"]) == 1
    assert all(r["solves"] == 104 and r["cpu_s"] > 0 for r in data["rows"])
    assert data["ratio_median"] > 0


def test_the_analysis_gives_away_the_tricks_dds_says() -> None:
    """Every card of the last five tricks of random rounds with spades broken: the
    tricks it gives away by the analysis equal DDS's (in its side virtualenv,
    as bench_solver; skipped without one)."""
    import os

    from lab.bench import analysis_bench
    from lab.bench.solver_bench import dds_available

    how = dds_available(os.environ.get("SPADES_PEER_PYTHON", "/tmp/peers/bin/python"))
    if how is None:
        pytest.skip("no DDS: python3 -m venv /tmp/peers && /tmp/peers/bin/pip install endplay")
    lines: list[str] = []
    got = analysis_bench.dds_check(4, 11, "BIS+Random", how, 9, lines.append)
    assert got["checked"] > 20 and got["disagreements"] == []


def test_bench_engine_times_a_few_rounds(tmp_path: Path) -> None:
    out = StringIO()
    figures = tmp_path / "engine.json"
    call_command("bench_engine", "--rounds", "10", "--runs", "1", "--json", str(figures),
                 stdout=out)  # fmt: skip
    assert "fast path:" in out.getvalue() and "checked path:" in out.getvalue()
    data = json.loads(figures.read_text())
    assert data["rounds"] == 10 and data["fast_rounds_per_s"] > 0


@pytest.mark.django_db
def test_bench_dashboard_fills_times_and_removes_its_rows_on_sqlite() -> None:
    out, err = StringIO(), StringIO()
    call_command("bench_dashboard", *TINY_DASHBOARD, stdout=out, stderr=err)
    text = out.getvalue()
    assert "filled 20 rounds (2 matches)" in text and "bulk_create" in text
    assert len(re.findall(r"^dashboard, ", text, re.M)) == DASHBOARD_LINES
    assert "export csv: 20 rounds" in text and "export jsonl: 20 rounds" in text
    assert "not PostgreSQL" in err.getvalue()
    # every bench round has its (made-up) analysis, in the tallies the table reads
    assert re.search(r"^dashboard, no filter: .*; (\d+) rounds, \1 analysed", text, re.M)
    assert not Table.objects.filter(public_id__startswith="bench-").exists()
    assert RoundRecordRow.objects.count() == RoundTally.objects.count() == 0
    assert not RoundAnalysis.objects.exists()


@pytest.mark.stack
def test_bench_dashboard_and_rebuild_tallies_on_postgres(database_url: str) -> None:
    """The COPY filler and ``tallies.rebuild``'s COPY (``manage.py rebuild_tallies``): both
    name every column of their tables, to which later migrations added some."""
    manage(database_url, "migrate", "-v0")
    text = manage(database_url, "bench_dashboard", *TINY_DASHBOARD)
    assert "filled 20 rounds (2 matches)" in text and "COPY" in text
    assert re.search(r"rebuild_tallies: [1-9]\d* tallies from 20 rounds", text)
    assert "database: postgresql, 20 rounds stored" in text
    assert len(re.findall(r"^dashboard, ", text, re.M)) == DASHBOARD_LINES
    assert re.search(r"^dashboard, no filter: .*; (\d+) rounds, \1 analysed", text, re.M)
    assert "export jsonl: 20 rounds" in text and "bench rows deleted" in text
    kept = manage(database_url, "bench_dashboard", *TINY_DASHBOARD, "--keep", "--no-exports")
    assert "database: postgresql, 20 rounds stored" in kept
    # A fill onto kept rows is refused before it touches them.
    with pytest.raises(Failed, match="of a --keep run are stored"):
        manage(database_url, "bench_dashboard", *TINY_DASHBOARD)
    # The kept rows are whole: rebuilt, the tallies match them.
    assert re.search(r"rebuilt [1-9]\d* tallies", manage(database_url, "rebuild_tallies"))
    assert "tallies match the stored rows" in manage(database_url, "rebuild_tallies", "--check")
    # Each span's cells in their own partition, in (start, figure) order on disk.
    on_disk = json.loads(manage(database_url, "shell", "-c", ON_DISK).strip().splitlines()[-1])
    assert set(on_disk) == {"game_roundtally_a", "game_roundtally_m", "game_roundtally_w",
                            "game_roundtally_d"}  # fmt: skip
    for rows in on_disk.values():
        assert len(rows) > 1 and rows == sorted(rows)
    reused = manage(database_url, "bench_dashboard", "--reuse", "--loads", "1", "--no-exports")
    assert "database: postgresql, 20 rounds stored" in reused


@pytest.mark.stack
def test_bench_server_runs_both_stacks_for_a_moment(
    tmp_path: Path, redis_url: str, postgres_url: str
) -> None:
    out = StringIO()
    figures = tmp_path / "server.json"
    call_command(
        "bench_server", "--tables", "1", "--seconds", "0.5", "--bout", "0.5", "--warmup", "0",
        "--interval", "0.1", "--redis-url", redis_url, "--postgres-url", postgres_url,
        "--json", str(figures), stdout=out,
    )  # fmt: skip
    data = json.loads(figures.read_text())
    assert set(data) == {"embedded", "redis"}
    for stack in data.values():
        assert stack["deliveries"] > 0 and stack["baseline"]["deliveries"] > 0
    assert "stack vs its baseline" in out.getvalue()


@pytest.mark.stack
def test_bench_workers_counts_a_workers_moves_for_a_second(
    redis_url: str, postgres_url: str
) -> None:
    out = StringIO()
    call_command(
        # A warm-up for the worker's child to take its first task: with none, a
        # loaded machine's first move can fall after a one-second window.
        "bench_workers", "--tables", "1", "--seconds", "2", "--warmup", "3", "--bot", "RB+WRP",
        "--redis-url", redis_url, "--postgres-url", postgres_url, stdout=out,
    )  # fmt: skip
    moves = re.search(r"^  (\d+) moves: ", out.getvalue(), re.M)
    assert moves is not None and int(moves.group(1)) > 0, out.getvalue()


@pytest.mark.django_db
def test_bench_ratings_fills_times_both_pages_and_removes_its_rows() -> None:
    from django.contrib.auth import get_user_model

    from game.ratings.models import Rating, RatingChange

    out = StringIO()
    call_command("bench_ratings", "--accounts", "30", "--matches", "120", "--mine", "10",
                 "--loads", "1", stdout=out)  # fmt: skip
    text = out.getvalue()
    assert "filled 30 accounts, 120 matches" in text
    for url in ("/leaderboard/", "/profile/"):
        assert re.search(rf"^{url}: median [\d.]+ ms, .* x the home page; target", text, re.M)
    assert "bench rows deleted" in text
    assert not get_user_model().objects.exists() and not Rating.objects.exists()
    assert not RatingChange.objects.exists() and not Table.objects.exists()
