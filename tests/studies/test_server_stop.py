"""The server stopped for longer than ``absent_seconds`` and ``turn_seconds``
while participants wait and play, on the embedded default (``make run``:
Daphne over SQLite, bots in-process), then started again: no one is dropped,
no seat changes hands, and no stand-in moves for a player whose turn it was
when the server stopped. Their timer starts again instead; the waiting
participant's absence is credited with the outage (``studies/clock.py``).

Real processes and real time: the server is killed, the test waits 95 s
(``absent_seconds`` is at least 90), and a new process serves the same
database."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from tests.browser.conftest import _free_port, _wait_for
from tests.support.study_client import SLUG, Participant, study_text

pytestmark = pytest.mark.faults

REPO = Path(__file__).resolve().parents[2]
ABSENT_SECONDS, TURN_SECONDS = 90, 30
DOWN_SECONDS = ABSENT_SECONDS + 5


def text() -> str:
    replacements = {
        "absent_seconds = 120": f"absent_seconds = {ABSENT_SECONDS}",
        "turn_seconds = 45": f"turn_seconds = {TURN_SECONDS}",
        "bot_delay = 1.5": "bot_delay = 0",
        # A lone participant of the two-person condition waits on.
        "timeout_seconds = 60": "timeout_seconds = 600",
    }
    out = study_text()
    for old, new in replacements.items():
        assert old in out, old
        out = out.replace(old, new)
    return out


class Site:
    def __init__(self, workdir: Path) -> None:
        self.database = workdir / "db.sqlite3"
        self.log = workdir / "daphne.log"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{self.database}",
            "DJANGO_SETTINGS_MODULE": "spadesite.settings",
            "DJANGO_DEBUG": "1",
            "PYTHONUNBUFFERED": "1",
        }
        for key in ("REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"):
            self.env.pop(key, None)
        self.process: subprocess.Popen[bytes] | None = None

    def manage(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=self.env,
                              check=True, timeout=120, capture_output=True, text=True)  # fmt: skip
        return done.stdout

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port),
                 "spadesite.asgi:application"],
                cwd=REPO, env=self.env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        _wait_for(self.url + "/", self.process, self.log)

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def stages(self) -> dict[str, str]:
        sql = ("SELECT r.raw_id, p.stage FROM studies_participant p "
               "JOIN studies_recruitmentid r ON r.participant_id = p.id")  # fmt: skip
        return dict(self.rows(sql))

    def rows(self, sql: str) -> list[tuple]:
        with closing(sqlite3.connect(self.database)) as db:
            return db.execute(sql).fetchall()


@contextmanager
def site(workdir: Path) -> Iterator[Site]:
    s = Site(workdir)
    s.manage("migrate", "--noinput", "-v0")
    try:
        yield s
    finally:
        if s.process is not None and s.process.poll() is None:
            s.kill()


async def first_state(url: str, origin: str, cookie: str) -> dict:
    """The table socket's first state frame for the seat of ``cookie``."""
    from websockets.asyncio.client import connect

    async with connect(url, origin=origin, additional_headers={"Cookie": cookie},
                       open_timeout=10, ping_interval=None) as socket:  # fmt: skip
        while True:
            frame = json.loads(await asyncio.wait_for(socket.recv(), timeout=10))
            if frame.get("type") == "state":
                return frame


def test_a_server_stopped_past_absent_and_turn_seconds_drops_and_replaces_no_one(
    tmp_path: Path,
) -> None:
    with site(tmp_path) as s:
        path = tmp_path / "study.toml"
        path.write_text(text())
        assert s.manage("load_study", str(path)).strip() == SLUG
        s.start()
        # A block of two: one seated at once (bots' condition), one waiting alone.
        people = [Participant(s.url, f"STOP{n:03d}") for n in range(2)]
        for person in people:
            person.arrive()
            person.poll()
        stages = s.stages()
        seated = [p for p in people if stages[p.raw_id] == "playing"]
        waiting = [p for p in people if stages[p.raw_id] == "waiting"]
        assert seated and waiting, stages
        tables = {}
        for person in seated:
            status, _ = person.call(f"/study/{SLUG}/table/")  # the session made their guest
            assert status == 200
        for raw_id, public_id, position in s.rows(
            "SELECT r.raw_id, t.public_id, ss.position FROM studies_studyseat ss "
            "JOIN studies_recruitmentid r ON r.participant_id = ss.participant_id "
            "JOIN studies_studytable st ON st.id = ss.study_table_id "
            "JOIN game_table t ON t.id = st.table_id"
        ):
            tables[raw_id] = (public_id, position)
        # The bots have moved up to each participant's turn: their timers run.
        before = dict(s.rows("SELECT t.public_id, t.version FROM game_table t"))
        s.kill()
        time.sleep(DOWN_SECONDS)
        s.start()
        # Their pages come back: the table's socket (it resumes the table), and the polls.
        origin = s.url
        for person in seated:
            public_id, _ = tables[person.raw_id]
            ws = f"ws://127.0.0.1:{s.port}/ws/table/{public_id}/"
            state = asyncio.run(first_state(ws, origin, person.session_cookie()))
            assert state["view"]["seat"] == tables[person.raw_id][1]
        for person in people:
            person.poll()
        time.sleep(3)  # a stand-in that would move at once would have moved by now
        after = dict(s.rows("SELECT t.public_id, t.version FROM game_table t"))
        for person in seated:
            public_id, position = tables[person.raw_id]
            assert after[public_id] == before[public_id], "a stand-in moved for them"
            (away,) = s.rows(f"SELECT s.away FROM game_seat s JOIN game_table t "
                             f"ON t.id = s.table_id WHERE t.public_id = '{public_id}' "
                             f"AND s.position = {position}")  # fmt: skip
            assert away == (0,)
        stages_after = s.stages()
        assert stages_after == stages, (stages, stages_after)
        assert s.rows("SELECT count(*) FROM studies_studyseat WHERE dropped") == [(0,)]
        (credited,) = s.rows("SELECT outage_seconds FROM studies_studyclock")[0]
        assert credited >= DOWN_SECONDS - 5
        assert not [st for p in people for _, st in p.statuses if st >= 500]
