"""The reference client in a process of its own plays a whole match on a live
Daphne server (the embedded default: SQLite, bots on the server's threads)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.stack import stackprocs

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "docs" / "examples" / "spades_bot.py"
SETUP = """
from django.contrib.auth.models import User
from botapi import accounts
from game import seating
from game.engine import Rules
owner = User.objects.create_user("author")
token = accounts.register(owner, "livebot", "", "author@example.org")[1]
table = seating.create_table(rules=Rules(winning_goal=100, losing_goal=-100))
for p in range(4):
    seating.add_bot(table, p, "ext:livebot" if p == 1 else "BIS+SRP")
seating.start_table(table)
print(token, table.pk)
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], Path]]:
    database = tmp_path / "db.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "SPADES_BOT_DELAY": "0",
           "DJANGO_SETTINGS_MODULE": "spadesite.settings", "PYTHONUNBUFFERED": "1"}  # fmt: skip
    for key in ("REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"):
        env.pop(key, None)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True,
                   timeout=180)  # fmt: skip
    port = stackprocs.free_port()
    with (tmp_path / "daphne.log").open("w") as log:
        daphne = stackprocs.start(stackprocs.daphne_command(port), env, log)
    try:
        stackprocs.wait_for_port(port, daphne, timeout=60)
        yield f"ws://127.0.0.1:{port}/ws/bot/", env, database
    finally:
        daphne.terminate()
        try:
            daphne.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daphne.kill()
            daphne.wait(timeout=10)


def test_the_reference_client_in_its_own_process_plays_a_match(
    server: tuple[str, dict[str, str], Path],
) -> None:
    url, env, database = server
    made = subprocess.run([sys.executable, "manage.py", "shell", "-c", SETUP], cwd=ROOT, env=env,
                          check=True, timeout=120, capture_output=True, text=True)  # fmt: skip
    token, table_pk = made.stdout.split()[-2:]
    played = subprocess.run(
        [sys.executable, str(CLIENT), url, "--matches", "1", "--seed", "1"],
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
