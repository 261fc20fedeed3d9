"""Find the production services (Redis, PostgreSQL) for the `stack` tests.

A service that does not answer skips the test on a developer's machine, with
the command that starts it, and fails it under CI (CI=true), where a silent
skip would hide a broken set-up.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test"
CONNECT_TIMEOUT_SECONDS = 1.0

REDIS_START = "redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no"
POSTGRES_START = "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def unavailable(message: str) -> None:
    """Fail under CI, skip elsewhere. Never returns."""
    if in_ci():
        pytest.fail(f"{message} (CI=true: this test may not be skipped in CI)", pytrace=False)
    pytest.skip(message)


def reachable(url: str, default_port: int) -> bool:
    """Whether something accepts TCP connections at the URL's host and port."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or default_port
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_SECONDS):
            return True
    except OSError:
        return False


def redis_url() -> str:
    """Redis for tests: TEST_REDIS_URL or the local default, if it answers."""
    url = os.environ.get("TEST_REDIS_URL") or DEFAULT_REDIS_URL
    if not reachable(url, default_port=6379):
        unavailable(f"Redis not reachable at {url}: start it with `{REDIS_START}`")
    return url


def own_redis_server(workdir: Path, port: int | None = None) -> tuple[str, subprocess.Popen[str]]:
    """A Redis server of the test's own on a spare port, or on ``port`` (to
    start it again after a stop), nothing kept on disk: for tests that stop
    or restart it. (its URL, the process)."""
    from lab.stack import stackprocs

    binary = shutil.which("redis-server")
    if binary is None:
        unavailable("redis-server not found: install Debian's redis-server")
    port = port or stackprocs.free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", str(workdir)]  # fmt: skip
    process = stackprocs.start(command, os.environ)
    stackprocs.wait_for_port(port, process, timeout=10)
    return f"redis://127.0.0.1:{port}/0", process


def nginx_binary() -> str:
    """nginx for the multi-process tests (``make proxy`` installs it)."""
    from lab.stack import proxy

    found = proxy.nginx_binary()
    if found is None:
        unavailable("nginx not found: `make proxy` installs Debian's package")
    return str(found)


def postgres_url() -> str:
    """PostgreSQL for tests: TEST_DATABASE_URL or the local default, if it answers."""
    url = os.environ.get("TEST_DATABASE_URL") or DEFAULT_POSTGRES_URL
    if not reachable(url, default_port=5432):
        unavailable(f"PostgreSQL not reachable at {url}: start it with `{POSTGRES_START}`")
    return url


@contextlib.contextmanager
def scratch_postgres(prefix: str) -> Iterator[str]:
    """The URL of a new, empty PostgreSQL database beside the test one, dropped afterwards."""
    from lab.stack import stackprocs

    admin_url = postgres_url()
    name, url = stackprocs.create_scratch_database(admin_url, prefix)
    try:
        yield url
    finally:
        stackprocs.drop_database(admin_url, name)
