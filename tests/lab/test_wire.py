"""bench_server's readings of what a move costs the services (lab/bench/wire.py)."""

from __future__ import annotations

import os
import shutil
import socket

import pytest

from lab.bench import wire
from lab.management.commands.bench_server import wire_figures


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs iproute2's ss")
def test_tcp_bytes_counts_this_process_s_connections_to_a_port() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        peer, _ = server.accept()
        try:
            before = wire.tcp_bytes([os.getpid()], port)
            client.sendall(b"x" * 5000)
            got = b""
            while len(got) < 5000:
                got += peer.recv(65536)
            peer.sendall(b"y" * 300)
            assert client.recv(300)
            after = wire.tcp_bytes([os.getpid()], port)
            assert after - before == wire.Bytes(5000, 300)
            # Another process's connections do not count.
            assert wire.tcp_bytes([os.getpid() + 10**6], port) == wire.Bytes()
        finally:
            client.close()
            peer.close()


def test_wire_figures_are_per_action_over_the_measured_bouts() -> None:
    used = {
        "pg_sent": 4000, "pg_received": 8000, "redis_sent": 400, "redis_received": 800,
        "commits": 4, "wal": 4000, "commands": 4, "postgres_cpu": 0.02, "redis_cpu": 0.004,
    }  # fmt: skip
    assert wire_figures(used, 4) == {
        "postgres_cpu_ms_per_action": 5.0,
        "redis_cpu_ms_per_action": 1.0,
        "postgres_bytes_sent_per_action": 1000,
        "postgres_bytes_received_per_action": 2000,
        "postgres_commits_per_action": 1.0,
        "postgres_wal_bytes_per_action": 1000,
        "redis_bytes_sent_per_action": 100,
        "redis_bytes_received_per_action": 200,
        "redis_commands_per_action": 1.0,
    }


def test_service_cpu_is_read_for_each_program() -> None:
    used = wire.service_cpu_seconds()
    assert set(used) == {"postgres", "redis-server"}
    assert all(seconds >= 0 for seconds in used.values())
