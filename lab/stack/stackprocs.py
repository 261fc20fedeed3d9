"""Start and stop the production stack's processes: for `make stack`, the stack tests
and ``manage.py bench_server``.

Plain functions with no Django import: a scratch PostgreSQL database made and
dropped, a Redis database number nobody uses, migrations, a Daphne process
and a Celery worker as subprocesses (each in its own process group, so that
stopping one stops its children too), waiting for a port to answer.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit, urlunsplit

BASE_DIR = Path(__file__).resolve().parents[2]
MANAGE = BASE_DIR / "manage.py"


class StackError(RuntimeError):
    """A process of the stack did not start, or a service refused."""


# ----- PostgreSQL ------------------------------------------------------------


def with_database_name(url: str, name: str) -> str:
    """The same PostgreSQL URL with another database name."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def _psycopg_url(url: str) -> str:
    # psycopg reads postgresql:// and postgres:// alike; dj-database-url's
    # aliases (pgsql://, postgis://) it does not.
    parts = urlsplit(url)
    return urlunsplit(("postgresql", parts.netloc, parts.path, parts.query, parts.fragment))


def create_scratch_database(admin_url: str, prefix: str = "spades_scratch") -> tuple[str, str]:
    """Make an empty database next to ``admin_url``'s; (its name, its URL)."""
    import psycopg

    name = f"{prefix}_{secrets.token_hex(4)}"
    with psycopg.connect(_psycopg_url(admin_url), autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name, with_database_name(admin_url, name)


def drop_database(admin_url: str, name: str) -> None:
    """Drop a scratch database, closing whatever connections are left on it."""
    import psycopg

    if not name.replace("_", "").isalnum():
        raise ValueError(f"not a scratch database name: {name!r}")
    with psycopg.connect(_psycopg_url(admin_url), autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# ----- Redis -----------------------------------------------------------------


def with_redis_db(url: str, db: int) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{db}", parts.query, parts.fragment))


def pick_empty_redis_db(url: str, low: int = 8, high: int = 15) -> str:
    """The URL of a Redis database numbered low..high that holds no keys.

    Celery's queues and the Redis channel layer then cannot meet another run's.
    (Redis pub/sub channels are shared by all database numbers; the channel
    layer's group names carry table ids, so two stacks on one Redis at the
    same time could see each other's version bumps: harmless, a consumer
    re-reads its own database, but noisy.)
    """
    import redis

    numbers = list(range(low, high + 1))
    order = secrets.SystemRandom()
    order.shuffle(numbers)
    client = redis.Redis.from_url(url, socket_timeout=2)
    try:
        for number in numbers:
            client.execute_command("SELECT", number)
            if client.dbsize() == 0:
                return with_redis_db(url, number)
    finally:
        client.close()
    raise StackError(f"no empty Redis database numbered {low}..{high} at {url}")


def flush_redis_db(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url, socket_timeout=2)
    try:
        client.flushdb()
    finally:
        client.close()


# ----- processes -------------------------------------------------------------


def stack_env(database_url: str | None, redis_url: str | None, **extra: str) -> dict[str, str]:
    """This process's environment with the stack's settings (None: unset it)."""
    env = dict(os.environ)
    for key, value in (("DATABASE_URL", database_url), ("REDIS_URL", redis_url)):
        if value:
            env[key] = value
        else:
            env.pop(key, None)
    env.setdefault("DJANGO_SETTINGS_MODULE", "spadesite.settings")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


def manage(env: Mapping[str, str], *args: str, timeout: float = 120) -> str:
    """Run ``manage.py ARGS`` with ``env``; its standard output (raises on failure)."""
    done = subprocess.run(
        [sys.executable, str(MANAGE), *args],
        env=dict(env),
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise StackError(
            f"manage.py {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}"
        )
    return done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(
    args: list[str], env: Mapping[str, str], log: IO[str] | None = None
) -> subprocess.Popen[str]:
    """Start a child in its own process group; output to ``log`` (default: discarded)."""
    return subprocess.Popen(
        args,
        env=dict(env),
        cwd=BASE_DIR,
        stdout=log if log is not None else subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )


def daphne_command(port: int, host: str = "127.0.0.1", proxied: bool = False) -> list[str]:
    """Daphne on ``port``; ``proxied``: behind lab.stack.proxy's nginx (trust its
    X-Forwarded-For for the client's address)."""
    return [
        sys.executable, "-m", "daphne", "-b", host, "-p", str(port),
        *(["--proxy-headers"] if proxied else []),
        "spadesite.asgi:application",
    ]  # fmt: skip


def celery_worker_command(
    queues: str = "bots,search",
    concurrency: int = 4,
    pool: str = "threads",
    name: str = "",
    app: str = "spadesite",
) -> list[str]:
    """A Celery worker; ``name``: its node name (``-n``), for several on one host;
    ``app``: ``lab.tournaments.celery_jobs`` for the research queue."""
    return [
        sys.executable, "-m", "celery", "-A", app, "worker",
        "-Q", queues, "--pool", pool, "-c", str(concurrency), "-l", "info",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
        *(["-n", name] if name else []),
    ]  # fmt: skip


def celery_beat_command(schedule_file: str) -> list[str]:
    """Celery beat: the periodic sweep for lost moves (one per deployment)."""
    return [
        sys.executable, "-m", "celery", "-A", "spadesite", "beat", "-l", "info",
        "--schedule", schedule_file,
    ]  # fmt: skip


def wait_for_port(
    port: int, process: subprocess.Popen[str] | None = None, timeout: float = 20.0
) -> None:
    """Wait until something accepts connections on 127.0.0.1:port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise StackError(f"{process.args!r} exited with {process.returncode} before serving")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise StackError(f"nothing answered on 127.0.0.1:{port} within {timeout:.0f} s")


def wait_for_text(path: Path, text: str, process: subprocess.Popen[str], timeout: float) -> None:
    """Wait until a child's log file contains ``text`` (e.g. a worker's 'ready')."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise StackError(f"{process.args!r} exited with {process.returncode}:\n{tail(path)}")
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.1)
    raise StackError(f"{text!r} did not appear in {path} within {timeout:.0f} s:\n{tail(path)}")


def tail(path: Path, chars: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


def stop(process: subprocess.Popen[str], timeout: float = 10.0) -> None:
    """SIGTERM the child's process group, then SIGKILL what is left after ``timeout``."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        process.wait(timeout=5)
