"""/healthz and /metrics (issue 59): healthy and down, refused to strangers,
and the counters move when a move is made."""

from __future__ import annotations

import asyncio
import random
import time
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.db import OperationalError
from django.http import HttpResponse
from django.test import Client
from django.utils import timezone
from prometheus_client import REGISTRY

from game import observe
from game.models import RoundRecordRow, Seat, Table
from game.moves import matches
from lab.stack import stackprocs
from spadesite import health, heartbeat, metrics
from tests.support.helpers import make_table, play_humans

pytestmark = pytest.mark.django_db


def metrics_text() -> str:
    metrics.SITE.forget()
    return Client().get("/metrics").content.decode()


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


# ----- /healthz --------------------------------------------------------------------


def test_healthz_is_ok_and_names_no_one(client: Client, settings: Any) -> None:
    settings.REDIS_URL = None
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["database"]["ok"] is True
    assert body["ms"] < 1000 and "workers" not in body
    assert set(body) == {"status", "database", "ms"}  # figures only, nobody's data


def test_healthz_is_503_when_the_database_does_not_answer(
    client: Client, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.REDIS_URL = None

    class Unreachable:
        def cursor(self) -> Any:
            raise OperationalError("connection refused")

    monkeypatch.setattr(health, "connection", Unreachable())
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["status"] == "down"
    assert response.json()["database"] == {
        "ok": False, "error": "OperationalError", "ms": response.json()["database"]["ms"]
    }  # fmt: skip


def test_healthz_is_degraded_when_redis_is_gone(client: Client, settings: Any) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{stackprocs.free_port()}/0"  # nothing listens
    response = client.get("/healthz")
    assert response.status_code == 200  # every process shares Redis: keep this one in
    assert response.json()["status"] == "degraded"
    assert response.json()["redis"]["ok"] is False


@pytest.mark.stack
def test_healthz_reads_each_queues_freshest_worker(
    client: Client, settings: Any, redis_url: str
) -> None:
    url = stackprocs.pick_empty_redis_db(redis_url)
    settings.REDIS_URL = url
    settings.SPADES_HEALTH_QUEUES = ["bots", "search"]
    client_redis = redis.Redis.from_url(url)
    try:
        heartbeat.beat(client_redis, ["bots"], "w1@host")
        body = client.get("/healthz").json()
        assert body["status"] == "degraded"  # nothing serves the search queue
        assert body["workers"]["bots"]["ok"] and body["workers"]["search"] == {
            "ok": False, "heartbeat_age_s": None
        }  # fmt: skip
        heartbeat.beat(client_redis, ["search"], "w2@host")
        heartbeat.beat(client_redis, ["bots"], "old@host", now=1.0)  # a stopped node
        heartbeat.beat(client_redis, ["bots"], "w1@host")  # which the next beat trims
        body = client.get("/healthz").json()
        assert body["status"] == "ok" and body["redis"]["ok"]
        assert body["workers"]["bots"]["heartbeat_age_s"] < 5
        assert client_redis.ttl(heartbeat.key("bots")) <= heartbeat.TTL_SECONDS
        assert client_redis.zcard(heartbeat.key("bots")) == 1
    finally:
        client_redis.flushdb()
        client_redis.close()


def test_healthz_and_metrics_answer_in_plain_http_behind_tls(tmp_path: Any) -> None:
    """A balancer and Prometheus call each Daphne port in plain HTTP: under
    DJANGO_TLS every other path redirects to HTTPS, these two answer."""
    env = stackprocs.stack_env(
        f"sqlite:///{tmp_path}/db.sqlite3", None,
        DJANGO_TLS="1", DJANGO_DEBUG="0", DJANGO_SECRET_KEY="x" * 50,
    )  # fmt: skip
    stackprocs.manage(env, "migrate", "-v0")
    script = (
        "from django.test import Client; c = Client(); "
        "print(c.get('/healthz').status_code, c.get('/metrics').status_code, "
        "c.get('/').status_code)"
    )
    out = stackprocs.manage(env, "shell", "-c", script)
    assert out.strip().splitlines()[-1].split() == ["200", "200", "301"]


@pytest.mark.stack
def test_a_ready_worker_and_beat_beat_for_each_of_their_queues(
    tmp_path: Any, redis_url: str
) -> None:
    """spadesite/celery.py starts the heartbeat at worker_ready (each queue the
    worker consumes) and at beat_init (the "beat" queue); a stopped process's
    beats stop, and the key then fades after its TTL."""
    url = stackprocs.pick_empty_redis_db(redis_url)
    env = stackprocs.stack_env(f"sqlite:///{tmp_path}/db.sqlite3", url)
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = stackprocs.start(
            stackprocs.celery_worker_command("bots,search", 1, name="beat-test@%h"), env, out
        )
        beat = stackprocs.start(
            stackprocs.celery_beat_command(str(tmp_path / "schedule")), env, out
        )
    client_redis = redis.Redis.from_url(url)
    try:
        stackprocs.wait_for_text(log, "ready.", worker, timeout=90)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            ages = heartbeat.freshest(client_redis, ["bots", "search", "replays", "beat"])
            if None not in (ages["bots"], ages["search"], ages["beat"]):
                break
            time.sleep(0.2)
        assert ages["bots"] is not None and ages["bots"] < heartbeat.EVERY_SECONDS + 1
        assert ages["search"] is not None and ages["beat"] is not None
        assert ages["replays"] is None  # not this worker's queue
        assert 0 < client_redis.ttl(heartbeat.key("bots")) <= heartbeat.TTL_SECONDS
    finally:
        stackprocs.stop(beat)
        stackprocs.stop(worker)
        client_redis.flushdb()
        client_redis.close()


# ----- /metrics --------------------------------------------------------------------


def test_metrics_are_refused_to_other_addresses_and_wrong_tokens(
    client: Client, settings: Any
) -> None:
    settings.SPADES_METRICS_TOKEN = "s3cret-token"
    settings.SPADES_METRICS_ALLOW = ["127.0.0.1", "::1"]
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 404
    wrong = {"HTTP_AUTHORIZATION": "Bearer nope"}
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9", **wrong).status_code == 404
    right = {"HTTP_AUTHORIZATION": "Bearer s3cret-token"}
    response = client.get("/metrics", REMOTE_ADDR="203.0.113.9", **right)
    assert response.status_code == 200 and b"spades_moves" in response.content
    settings.SPADES_METRICS_ALLOW = ["10.0.0.0/8"]
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 404
    settings.SPADES_METRICS_TOKEN = ""  # no token set: no bearer opens it
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9", **right).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_the_move_counter_moves_when_a_move_is_made(live: Any, client: Client) -> None:
    before = sample("spades_moves_total", {"path": "call"})
    timed = sample("spades_move_seconds_count", {"path": "call"})
    table = make_table("HHHH")
    play_humans(table, random.Random(59), until_version=table.version + 3)
    assert sample("spades_moves_total", {"path": "call"}) == before + 3
    assert sample("spades_move_seconds_count", {"path": "call"}) == timed + 3
    text = client.get("/metrics").content.decode()
    line = next(x for x in text.splitlines() if x.startswith('spades_moves_total{path="call"}'))
    assert float(line.split()[-1]) == before + 3


def test_a_socket_move_a_refused_frame_and_a_socket_are_counted() -> None:
    @observe.timed_move
    async def submit_on_loop() -> str:
        return "done"

    before = sample("spades_moves_total", {"path": "socket"})
    assert asyncio.run(submit_on_loop()) == "done"
    assert sample("spades_moves_total", {"path": "socket"}) == before + 1
    refused = sample("spades_frames_refused_total", {"code": "rate_limited"})
    observe.frame_refused("rate_limited")
    assert sample("spades_frames_refused_total", {"code": "rate_limited"}) == refused + 1
    sockets = sample("spades_open_sockets")
    observe.socket_opened()
    assert sample("spades_open_sockets") == sockets + 1
    observe.socket_closed()
    assert sample("spades_open_sockets") == sockets


def test_server_errors_are_counted() -> None:
    before = sample("spades_http_errors_total", {"status": "503"})
    counter = metrics.ErrorCounter(lambda request: HttpResponse(status=503))
    counter(None)  # type: ignore[arg-type]
    ok = metrics.ErrorCounter(lambda request: HttpResponse(status=200))
    ok(None)  # type: ignore[arg-type]
    assert sample("spades_http_errors_total", {"status": "503"}) == before + 1


@pytest.mark.django_db(transaction=True)
def test_the_oldest_bot_move_and_the_analysis_backlog(live: Any, settings: Any) -> None:
    settings.REDIS_URL = None
    settings.SPADES_REPLAY_ANALYSIS = False  # the rounds stay unanalysed: no race
    table = make_table("HHHH")
    table = play_humans(table, random.Random(5))  # a short match: its rounds stored
    assert metrics.analysis_backlog() == RoundRecordRow.objects.filter(
        analysis__isnull=True
    ).count()
    assert metrics.analysis_backlog() >= 1
    assert "spades_analysis_backlog" in metrics_text()
    RoundRecordRow.objects.update(finished_at=timezone.now() - timedelta(days=30))
    assert metrics.analysis_backlog() == 0  # outside the window: never read
    assert metrics.oldest_bot_move_seconds() == 0.0
    waiting = make_table("HHHH")
    seat = matches.load_match(waiting).round.to_act
    Seat.objects.filter(table=waiting, position=seat).update(kind=Seat.Kind.BOT)
    Table.objects.filter(pk=waiting.pk).update(
        turn_started_at=timezone.now() - timedelta(seconds=42)
    )
    assert 42 <= metrics.oldest_bot_move_seconds() < 60
    metrics.SITE.forget()
    assert 42 <= sample("spades_oldest_bot_move_seconds") < 60
