"""Bots in processes of their own through the bot protocol (botapi/consumer.py), on
a live server (the embedded default: SQLite, bots on the server's threads): the reference
client plays a match at a Daphne, and ``manage.py tournament --ns ext:<name>``
with BIS+SRP wrapped by the house-bot client plays the in-process tournament's
games to the same results."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.stack import stackprocs
from lab.tournaments.tournament import TournamentConfig, run_tournament

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
ACCOUNT = """
from django.contrib.auth.models import User
from botapi import accounts
owner, _ = User.objects.get_or_create(username="author")
print(accounts.register(owner, "{name}", "", "author@example.org")[1])
"""
TABLE = """
from game import seating
from game.engine import Rules
table = seating.create_table(rules=Rules(winning_goal=100, losing_goal=-100))
for p in range(4):
    seating.add_bot(table, p, "ext:livebot" if p == 1 else "BIS+SRP")
seating.start_table(table)
print(table.pk)
"""


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bots")
    env = _env(folder / "db.sqlite3")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT,
                   env=env, check=True, timeout=240)  # fmt: skip
    return folder / "db.sqlite3"


@pytest.fixture
def database(migrated: Path, tmp_path: Path) -> Path:
    """A copy of the migrated database for one test."""
    shutil.copy(migrated, tmp_path / "db.sqlite3")
    return tmp_path / "db.sqlite3"


def _env(database: Path) -> dict[str, str]:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "SPADES_BOT_DELAY": "0",
           "DJANGO_SETTINGS_MODULE": "spadesite.settings", "PYTHONUNBUFFERED": "1"}  # fmt: skip
    for key in ("REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"):
        env.pop(key, None)
    return env


def _shell(env: dict[str, str], code: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                          check=True, timeout=120, capture_output=True, text=True)  # fmt: skip
    return done.stdout.split()[-1]


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@pytest.fixture
def daphne(database: Path, tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    env = _env(database)
    port = stackprocs.free_port()
    with (tmp_path / "daphne.log").open("w") as log:
        server = stackprocs.start(stackprocs.daphne_command(port), env, log)
    try:
        stackprocs.wait_for_port(port, server, timeout=60)
        yield f"ws://127.0.0.1:{port}/ws/bot/", env
    finally:
        _stop(server)


def test_the_reference_client_in_its_own_process_plays_a_match(
    daphne: tuple[str, dict[str, str]], database: Path
) -> None:
    url, env = daphne
    token = _shell(env, ACCOUNT.format(name="livebot"))
    table_pk = _shell(env, TABLE)
    played = subprocess.run(
        [sys.executable, str(EXAMPLES / "spades_bot.py"), url, "--matches", "1", "--seed", "1"],
        env={"SPADES_BOT_TOKEN": token, "PATH": os.environ.get("PATH", "")},
        cwd="/",  # nothing of the repository on its path: the client stands alone
        check=True, timeout=300, capture_output=True, text=True,
    )  # fmt: skip
    report = json.loads(played.stdout.strip().splitlines()[-1])
    assert len(report["matches"]) == 1 and report["errors"] == []
    with sqlite3.connect(database) as db:
        status = db.execute("SELECT status FROM game_table WHERE id = ?", (table_pk,)).fetchone()
        moves = db.execute("SELECT count(*), sum(by_stand_in) FROM game_action "
                           "WHERE table_id = ? AND seat = 1", (table_pk,)).fetchone()  # fmt: skip
        bots = db.execute("SELECT DISTINCT bot_e FROM game_roundrecordrow WHERE table_id = ?",
                          (table_pk,)).fetchall()  # fmt: skip
    assert status == ("finished",)
    assert moves[0] > 0 and moves[1] == 0  # every move of its seat the bot's own, in time
    assert bots == [("ext:livebot",)]


def _with_house_bot(database: Path, log: Path, command: list[str]) -> str:
    """Run the lab's ``command`` (``manage.py tournament`` or ``league`` with an
    ``ext:house`` side and ``--bot-port``) with house_bot.py (BIS+SRP) connected
    to it as ext:house; its output."""
    env = _env(database)
    token = _shell(env, ACCOUNT.format(name="house"))
    port = command[command.index("--bot-port") + 1]
    with log.open("w") as out:
        lab = stackprocs.start(command, env, out)
    bot = None
    try:
        stackprocs.wait_for_port(int(port), lab, timeout=120)
        client = [sys.executable, str(EXAMPLES / "house_bot.py"), f"ws://127.0.0.1:{port}/ws/bot/"]
        bot = stackprocs.start(client, {**env, "SPADES_BOT_TOKEN": token})
        assert lab.wait(timeout=600) == 0, log.read_text()[-3000:]
    finally:
        for process in (lab, bot):
            if process is not None and process.poll() is None:
                _stop(process)
    return log.read_text()


def test_a_tournament_through_the_protocol_plays_the_in_process_games(
    database: Path, tmp_path: Path
) -> None:
    games = ["--games", "4", "--duplicate", "--goal", "100", "--lose", "-100", "--seed", "7"]
    command = [sys.executable, "manage.py", "tournament", "--ns", "ext:house", "--ew", "BIS+SRP",
               *games, "--bot-port", str(stackprocs.free_port()), "--bot-tables", "2",
               "--no-progress", "--output", str(tmp_path / "ext.json")]  # fmt: skip
    _with_house_bot(database, tmp_path / "tournament.log", command)
    through = json.loads((tmp_path / "ext.json").read_text())
    assert through["run"]["external_stand_in_decisions"] == 0
    assert through["run"]["external_bot_decisions"] > 0
    here: list[dict] = []
    config = TournamentConfig("BIS+SRP", "BIS+SRP", 4, 100, -100, 7, duplicate=True)
    in_process = run_tournament(config, on_game=here.append)
    logged = [json.loads(line) for line in (tmp_path / "ext.games.jsonl").read_text().splitlines()]
    records = sorted((r for r in logged if "game" in r), key=lambda r: r["game"])
    assert records == sorted(here, key=lambda r: r["game"])
    for key in ("games", "wins_a", "wins_b"):
        assert through.get(key) == in_process.get(key)


def test_a_league_with_an_external_entrant_plays_it_through_the_protocol(
    database: Path, tmp_path: Path
) -> None:
    """``league --bidders RB,MS,ext:house`` with BIS+SRP behind ext:house: its
    pairs are the in-process games of BIS+SRP, the house pair is played here."""
    logs = tmp_path / "league"
    command = [sys.executable, "manage.py", "league", "--bidders", "RB,MS,ext:house",
               "--games", "2", "--goal", "100", "--lose", "-100", "--seed", "7", "--workers", "1",
               "--logs", str(logs), "--markdown", "", "--json", str(tmp_path / "league.json"),
               "--bot-port", str(stackprocs.free_port()), "--bot-tables", "2",
               "--no-progress"]  # fmt: skip
    out = _with_house_bot(database, tmp_path / "league.log", command)
    assert "ext:house: " in out and ", 0 by its stand-in" in out
    summary = json.loads((tmp_path / "league.json").read_text())
    assert {b["bidder"] for b in summary["bidders"]} == {"RB", "MS", "ext:house"}
    assert summary["games"] == 6
    for other in ("RB", "MS"):
        logged = (logs / f"{other}__ext:house.games.jsonl").read_text().splitlines()
        records = sorted((r for r in map(json.loads, logged) if "game" in r),
                         key=lambda r: r["game"])  # fmt: skip
        here: list[dict] = []
        run_tournament(TournamentConfig(f"{other}+SRP", "BIS+SRP", 2, 100, -100, 7,
                                        duplicate=True), on_game=here.append)  # fmt: skip
        assert records == sorted(here, key=lambda r: r["game"])
