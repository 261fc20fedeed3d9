"""Tournaments and the league on Celery workers (``--celery``): the same report as
the process pool's, a worker SIGKILLed in the middle of a game, a collector
stopped and started again, a worker with other bot settings refused.

The workers are real (``celery -A lab.tournaments.celery_jobs worker -Q research``,
prefork, one child each) on a Redis server of this module's own on a spare
port; the runs are ``manage.py`` commands, as a researcher starts them. The bots
are the cheapest (RB+WRP against MS+WRP), so a 200-game run takes a second or two.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
from django.core.management import call_command

from lab.stack import stackprocs
from lab.tournaments import celery_jobs, identity
from lab.tournaments.celery_jobs import QUEUE, TASK, RunKeys, play_unit
from lab.tournaments.tournament import TournamentConfig, format_summary, run_tournament
from spadesite.celery import app
from tests.support import services

ARGS = ["--ns", "RB+WRP", "--ew", "MS+WRP", "--games", "200", "--seed", "3", "--duplicate",
        "--goal", "300", "--lose", "-300"]  # fmt: skip
CONFIG = TournamentConfig("RB+WRP", "MS+WRP", 200, goal=300, lose=-300, seed=3, duplicate=True)
WORKER_APP = "lab.tournaments.celery_jobs"


@dataclass
class Research:
    redis_url: str
    redis_server: subprocess.Popen[str]
    env: dict[str, str]
    logs: Path
    workers: dict[str, subprocess.Popen[str]] = field(default_factory=dict)

    def start_worker(self, name: str, **env: str) -> None:
        path = self.logs / f"{name}.log"
        with open(path, "w") as out:
            command = stackprocs.celery_worker_command(
                QUEUE, concurrency=1, pool="prefork", name=f"{name}@%h", app=WORKER_APP
            )
            self.workers[name] = stackprocs.start(command, {**self.env, **env}, out)

    def wait_ready(self) -> None:
        for name, worker in self.workers.items():
            stackprocs.wait_for_text(self.logs / f"{name}.log", "ready.", worker, timeout=90)

    def signal(self, name: str, sig: int) -> None:
        os.killpg(self.workers[name].pid, sig)

    def command(self, *args: str) -> str:
        """``manage.py ARGS --celery`` on this Redis, in this process: what it prints."""
        out = io.StringIO()
        call_command(*args, "--celery", "--broker", self.redis_url, "--no-progress",
                     stdout=out, stderr=out)  # fmt: skip
        return out.getvalue()

    def start_command(self, *args: str) -> subprocess.Popen[str]:
        """``manage.py ARGS --celery`` started as a process of its own (REDIS_URL: this Redis)."""
        return subprocess.Popen(
            [sys.executable, str(stackprocs.MANAGE), *args, "--celery", "--no-progress"],
            env=self.env, cwd=stackprocs.BASE_DIR, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.redis_url, socket_timeout=5)

    def tail(self) -> str:
        return "\n".join(f"--- {p.name}\n{stackprocs.tail(p, 3000)}" for p in self.logs.glob("*"))


@pytest.fixture(scope="module")
def research(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Research]:
    logs = tmp_path_factory.mktemp("research")
    url, server = services.own_redis_server(logs)
    env = stackprocs.stack_env(None, url)
    cluster = Research(url, server, env, logs)
    try:
        for name in ("research0", "research1"):
            cluster.start_worker(name)
        cluster.wait_ready()
        yield cluster
    finally:
        for worker in cluster.workers.values():  # nothing of theirs is kept
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait(timeout=10)
        stackprocs.stop(server)


@pytest.fixture(scope="module")
def pool_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The ``--workers 2`` run of ARGS (its summary without the run's timings)."""
    out = tmp_path_factory.mktemp("pool") / "pool.json"
    summary = run_tournament(CONFIG, workers=2, log=out.with_name("pool.games.jsonl"))
    summary.pop("run")
    return summary


def report_of(path: Path) -> dict[str, Any]:
    summary = json.loads(path.read_text())
    summary.pop("run")
    return summary


def games_in_log(path: Path) -> list[int]:
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "header"
    return sorted(json.loads(line)["game"] for line in lines[1:])


def without_timings(text: str) -> str:
    return "\n".join(x for x in text.splitlines() if not x.startswith(("  played now", "  CPU")))


def test_a_celery_tournament_reports_what_the_process_pool_does(
    research: Research, pool_report: dict[str, Any]
) -> None:
    out = research.logs / "plain.json"
    text = research.command("tournament", *ARGS, "--output", str(out))
    assert report_of(out) == pool_report
    assert without_timings(format_summary(pool_report)) in text  # the printed report too
    assert games_in_log(research.logs / "plain.games.jsonl") == list(range(200))
    run = json.loads(out.read_text())["run"]
    assert run["workers"] == "celery" and run["games_played_now"] == 200
    assert len(run["workers_seen"]) == 2 and "2 Celery worker(s)" in text
    timings = [json.loads(x) for x in (research.logs / "plain.timings.jsonl").open()]
    assert sorted(t["game"] for t in timings) == list(range(200))
    assert {t["worker"] for t in timings} == set(run["workers_seen"])
    assert sum(t["cpu_seconds"] for t in timings) > 0
    assert run["duplicates_ignored"] == 0 and run["refused_by"] == {}
    # A finished run leaves only its mark (copies of its tasks are skipped) and its
    # size (research_status shows it finished), both expiring.
    left = sorted(research.client().keys("research:*"))
    assert [k.rsplit(b":", 1)[1] for k in left] == [b"finished", b"size"]
    assert all(research.client().ttl(k) > 0 for k in left)


def test_a_stopped_run_started_again_continues_where_it_was(
    research: Research, pool_report: dict[str, Any]
) -> None:
    out = research.logs / "resumed.json"
    log = research.logs / "resumed.games.jsonl"
    args = ["tournament", *ARGS, "--lease", "2", "--output", str(out)]
    first = research.start_command(*args)
    deadline = time.monotonic() + 60
    while not log.exists() or len(log.read_text().splitlines()) < 41:
        assert first.poll() is None and time.monotonic() < deadline, research.tail()
        time.sleep(0.005)
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=30) != 0
    logged = len(games_in_log(log))
    assert 40 <= logged < 200, "the first run was not stopped in the middle"
    assert not research.client().keys("research:*:coordinator")  # it let go of the run
    # Any machine sees the run on the broker: what is done of its size, no collector.
    (status,) = research_status(research).splitlines()
    done = re.search(r": (\d+) of 200 games done, \d+ in play", status)
    assert done and logged <= int(done.group(1)) <= 200, status
    assert "collector: none (start the command again to resume)" in status
    research.command(*args)
    assert report_of(out) == pool_report
    assert [s.split(": ", 1)[1][:8] for s in research_status(research).splitlines()] == ["finished"]
    assert games_in_log(log) == list(range(200))
    assert json.loads(out.read_text())["run"]["games_resumed"] >= logged


def research_status(research: Research) -> str:
    out = io.StringIO()
    call_command("research_status", "--broker", research.redis_url, stdout=out)
    return out.getvalue()


def test_a_worker_with_other_bot_settings_is_refused(research: Research) -> None:
    config = TournamentConfig("RB+WRP", "MS+WRP", 20, goal=300, lose=-300, seed=4, duplicate=True)
    expected = run_tournament(config)
    expected.pop("run")
    research.start_worker("other", SPADES_UCT_ITERATIONS="99")
    research.wait_ready()
    out = research.logs / "refused.json"
    args = ["tournament", *ARGS[:4], "--games", "20", "--seed", "4", *ARGS[8:]]
    with ThreadPoolExecutor(1) as pool:
        try:
            for name in ("research0", "research1"):  # the other worker takes the first tasks
                research.signal(name, signal.SIGSTOP)
            run = pool.submit(research.command, *args, "--output", str(out))
            stackprocs.wait_for_text(
                research.logs / "other.log", "refused", research.workers["other"], timeout=60
            )
        finally:
            for name in ("research0", "research1"):
                research.signal(name, signal.SIGCONT)
        run.result(timeout=120)
    assert report_of(out) == expected
    summary = json.loads(out.read_text())["run"]
    (refuser,) = summary["refused_by"]
    assert refuser.startswith("other@") and not any(
        w.startswith("other@") for w in summary["workers_seen"]
    )
    assert any("SPADES_UCT_ITERATIONS" in why for why in summary["refused_by"][refuser])
    stackprocs.stop(research.workers.pop("other"))


def test_a_celery_league_writes_the_process_pools_table(research: Research, tmp_path: Path) -> None:
    # 3 bidders, 40 games (20 duplicate pairs) a pair, SRP play at goal 50: 120 games
    league = ["league", "--bidders", "RB,MS,IO", "--games", "40", "--goal", "50", "--lose", "-50",
              "--markdown", ""]  # fmt: skip
    call_command(*league, "--workers", "2", "--logs", str(tmp_path / "pool"), "--no-progress",
                 "--json", str(tmp_path / "pool.json"), stdout=io.StringIO())  # fmt: skip
    research.command(*league, "--logs", str(tmp_path / "celery"),
                     "--json", str(tmp_path / "celery.json"))  # fmt: skip
    assert report_of(tmp_path / "celery.json") == report_of(tmp_path / "pool.json")
    celery = json.loads((tmp_path / "celery.json").read_text())
    assert celery["games"] == 3 * 40 and len(celery["run"]["workers_seen"]) == 2


def test_a_worker_killed_in_the_middle_of_a_game_loses_and_duplicates_nothing(
    research: Research, pool_report: dict[str, Any]
) -> None:
    out = research.logs / "killed.json"
    r = research.client()
    caught = None
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(research.command, "tournament", *ARGS, "--lease", "2",
                          "--output", str(out))  # fmt: skip
        deadline = time.monotonic() + 60
        log = research.logs / "killed.games.jsonl"
        while not log.exists() or len(log.read_text().splitlines()) < 61:  # the middle
            assert not run.done() and time.monotonic() < deadline, research.tail()
            time.sleep(0.005)
        while caught is None:  # stop research0: if it holds a game unfinished, kill it now
            assert not run.done() and time.monotonic() < deadline, "no game caught mid-play"
            research.signal("research0", signal.SIGSTOP)
            for key in r.scan_iter("research:*:lease:*"):
                holder = r.get(key)
                game = key.decode().rsplit(":", 1)[1]
                done = RunKeys(key.decode().split(":")[1]).done
                if holder and holder.startswith(b"research0@") and not r.sismember(done, game):
                    caught = int(game.split("/")[1])
            if caught is None:
                research.signal("research0", signal.SIGCONT)
                time.sleep(0.003)
        research.signal("research0", signal.SIGKILL)
        research.workers["research0"].wait(timeout=10)
        run.result(timeout=120)
    assert report_of(out) == pool_report
    games = games_in_log(log)
    assert games == list(range(200)) and caught in games  # each once, the caught one too


# ----- without workers ------------------------------------------------------------


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[redis.Redis]:
    url, server = services.own_redis_server(tmp_path)
    client = redis.Redis.from_url(url, socket_timeout=5)
    celery_jobs._process["redis"] = client
    try:
        yield client
    finally:
        celery_jobs._process.pop("redis", None)
        client.close()
        stackprocs.stop(server)


def payload(games: list[int], fingerprint: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"run": "r1", "identity": fingerprint or identity.identity(), "config_index": 0,
            "config": CONFIG.to_dict(), "games": games, "lease": 5}  # fmt: skip


def test_a_task_plays_only_the_games_not_done_or_leased(own_redis: redis.Redis) -> None:
    keys = RunKeys("r1")
    own_redis.sadd(keys.done, "0/0")
    own_redis.set(keys.lease("0/1"), "w9@elsewhere", px=5000)
    assert play_unit(payload([0, 1, 2, 3]), "w1@here") == {"played": 2, "refused": 0}
    results = [json.loads(x) for x in own_redis.lrange(keys.results, 0, -1)]
    assert [x["record"]["game"] for x in results] == [2, 3]
    assert results[0]["worker"] == "w1@here" and results[0]["cpu"] > 0
    assert own_redis.smembers(keys.done) == {b"0/0", b"0/2", b"0/3"}
    assert not own_redis.exists(keys.lease("0/2"))  # handed over with the record
    assert own_redis.hkeys(keys.started) == []  # no game in play
    # A second delivery of the same task plays nothing again.
    assert play_unit(payload([2, 3]), "w2@here") == {"played": 0, "refused": 0}


def test_a_task_from_other_code_is_refused_and_plays_nothing(own_redis: redis.Redis) -> None:
    theirs = {**identity.identity(), "commit": "0" * 40}
    assert play_unit(payload([0, 1], theirs), "w1@here") == {"played": 0, "refused": 2}
    (refusal,) = [json.loads(x) for x in own_redis.lrange(RunKeys("r1").results, 0, -1)]
    assert refusal["games"] == [0, 1] and refusal["refused"][0].startswith("commit: '000")
    assert not own_redis.exists(RunKeys("r1").done)


def test_the_fingerprint_holds_every_bot_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    read = set()
    for path in (identity.BASE_DIR / "bots").rglob("*.py"):
        read |= set(re.findall(r"environ(?:\.get)?[\[(]\"(SPADES_\w+)\"", path.read_text()))
    assert read and read <= set(identity.BOT_SETTINGS)
    mine = identity.identity()
    assert mine["commit"] and mine["code"] and "nnb.npz" in mine["weights"]
    monkeypatch.setenv("SPADES_UCT_ITERATIONS", "7000")
    assert identity.differences(mine, identity.identity()) == [
        "settings SPADES_UCT_ITERATIONS: None != '7000'"
    ]


def test_research_tasks_have_a_queue_of_their_own() -> None:
    queue = app.amqp.router.route({}, TASK)["queue"].name
    assert queue == QUEUE == "research"
    for bot_task in ("game.driver.tasks.act", "game.driver.tasks.search"):
        assert app.amqp.router.route({}, bot_task)["queue"].name != queue
