"""What a move costs the services, for ``bench_server``: bytes on the wire and
requests, read from the outside (no instrumentation in the move path).

- Bytes between the Daphne processes and a service's port: the kernel's
  per-socket counters (``ss -ti``: ``bytes_acked`` sent, ``bytes_received``)
  of the processes' established TCP connections to that port. Connections
  opened and closed between two readings are missed, so this counts the
  long-lived ones: the asyncio pool's PostgreSQL connections, the channel
  layer's Redis connections.
- PostgreSQL transactions: ``pg_stat_database.xact_commit`` of the
  benchmark's own scratch database (nothing else uses it); the WAL it makes
  (``pg_stat_wal.wal_bytes``, the whole server's).
- Redis commands: ``INFO stats`` ``total_commands_processed`` of the whole
  server (on a shared server, other clients count too: say so).
- The services' CPU: every ``postgres`` and ``redis-server`` process of the
  machine (other clients of a shared server count too).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import psycopg
import redis

_SOCKET = re.compile(r"pid=(\d+),")
_SENT = re.compile(r"\bbytes_acked:(\d+)")
_RECEIVED = re.compile(r"\bbytes_received:(\d+)")


@dataclass(frozen=True)
class Bytes:
    sent: int = 0
    received: int = 0

    def __sub__(self, other: Bytes) -> Bytes:
        return Bytes(self.sent - other.sent, self.received - other.received)


def tcp_bytes(pids: Iterable[int], port: int) -> Bytes:
    """Bytes sent and received so far by ``pids`` on their open connections to
    ``port`` (Linux ``ss``; zeros where it is missing)."""
    wanted = {str(pid) for pid in pids}
    try:
        out = subprocess.run(
            ["ss", "-tinpH", "state", "established", f"( dport = :{port} )"],
            capture_output=True, text=True, timeout=10, check=False,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return Bytes()
    sent = received = 0
    owner: str | None = None
    for line in out.splitlines():
        found = _SOCKET.search(line)
        if found is not None:  # a socket's first line names its process
            owner = found.group(1)
            continue
        if owner in wanted:
            sent += int(m.group(1)) if (m := _SENT.search(line)) else 0
            received += int(m.group(1)) if (m := _RECEIVED.search(line)) else 0
    return Bytes(sent, received)


def port_of(url: str, default: int) -> int:
    return urlsplit(url).port or default


def postgres_commits(database_url: str) -> tuple[int, int]:
    """(transactions committed in the URL's database, WAL bytes the whole server
    wrote) so far."""
    name = urlsplit(database_url).path.lstrip("/")
    with psycopg.connect(database_url, connect_timeout=5) as conn:
        row = conn.execute(
            "SELECT xact_commit, (SELECT wal_bytes FROM pg_stat_wal)"
            " FROM pg_stat_database WHERE datname = %s",
            [name],
        ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def redis_commands(redis_url: str) -> int:
    """Commands the Redis server has processed so far (all its clients)."""
    client = redis.Redis.from_url(redis_url, socket_timeout=5)
    try:
        return int(client.info("stats")["total_commands_processed"])
    finally:
        client.close()


SERVICE_PROGRAMS = ("postgres", "redis-server")


def service_cpu_seconds() -> dict[str, float]:
    """CPU seconds used so far by all processes of each of SERVICE_PROGRAMS."""
    ticks = os.sysconf("SC_CLK_TCK")
    used = dict.fromkeys(SERVICE_PROGRAMS, 0.0)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
        except OSError:
            continue  # gone meanwhile
        name = text[text.index("(") + 1 : text.rindex(")")]
        if name in used:
            fields = text.rsplit(")", 1)[1].split()
            used[name] += (int(fields[11]) + int(fields[12])) / ticks
    return used
