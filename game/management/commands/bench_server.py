"""``manage.py bench_server``: websocket load on one Daphne process, embedded and Redis stack.

For each stack: a scratch database (a SQLite file, or a fresh PostgreSQL
database), migrations, ``--tables`` tables of four guests made through the
service layer, one Daphne process started as a subprocess (DEBUG off), then
asyncio clients on 127.0.0.1 play every table once per ``--interval``
seconds for ``--seconds`` seconds (see ``game.loadtest``). Reports p50/p99
from a sent ``act`` to the ``state`` frame with the new version (at the
acting socket and at the other three), version gaps and whether ``resync``
recovered them, and CPU. Everything it starts or makes is removed at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from game import loadtest, stackprocs

STACKS = ("embedded", "redis")
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test"


class Command(BaseCommand):
    help = (
        "Websocket load benchmark: tables of four humans playing through one Daphne "
        "process; action-to-broadcast latency, version gaps, CPU. Embedded default "
        "(SQLite + in-memory layer) and Redis stack (pub/sub layer + PostgreSQL)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--tables", type=int, default=100, help="tables of four (default 100)")
        parser.add_argument(
            "--seconds", type=float, default=30.0, help="measured play per stack (default 30)"
        )
        parser.add_argument(
            "--interval", type=float, default=0.5, help="seconds between a table's moves"
        )
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--stacks",
            default=",".join(STACKS),
            help="comma-separated: embedded, redis (default both)",
        )
        parser.add_argument(
            "--redis-url",
            default=os.environ.get("TEST_REDIS_URL") or DEFAULT_REDIS_URL,
            help="Redis for the redis stack (an empty database number 8..15 is used)",
        )
        parser.add_argument(
            "--postgres-url",
            default=os.environ.get("TEST_DATABASE_URL") or DEFAULT_POSTGRES_URL,
            help="a PostgreSQL database to connect to; a scratch database is made beside it",
        )
        parser.add_argument(
            "--profile",
            metavar="DIR",
            help="record Daphne with py-spy (collapsed stacks in DIR) and print the hot spots",
        )
        parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
        # Internal: run in the benchmark's server environment to make the tables.
        parser.add_argument("--prepare", metavar="FILE", help=_hidden())

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["prepare"]:
            tables = loadtest.prepare_tables(opts["tables"], opts["seed"])
            Path(opts["prepare"]).write_text(json.dumps(tables))
            return
        if opts["tables"] < 1 or opts["seconds"] <= 0 or opts["interval"] <= 0:
            raise CommandError("--tables, --seconds and --interval must be positive")
        stacks = [s.strip() for s in opts["stacks"].split(",") if s.strip()]
        unknown = set(stacks) - set(STACKS)
        if unknown:
            raise CommandError(f"unknown stack(s) {sorted(unknown)}: use {', '.join(STACKS)}")
        rate = opts["tables"] / opts["interval"]
        self.stdout.write(
            f"bench_server: {opts['tables']} tables x 4 sockets, one move per table every "
            f"{opts['interval']} s ({rate:.0f} actions/s, {4 * rate:.0f} seat deliveries/s), "
            f"{opts['seconds']:.0f} s per stack, seed {opts['seed']}, {os.cpu_count()} CPUs"
        )
        results = {}
        for stack in stacks:
            results[stack] = self.run_stack(stack, opts)
            self.report(stack, results[stack])
        if opts["json"]:
            Path(opts["json"]).write_text(json.dumps(results, indent=2))

    # ----- one stack -------------------------------------------------------------

    def run_stack(self, stack: str, opts: dict[str, Any]) -> dict[str, Any]:
        tmp = Path(tempfile.mkdtemp(prefix=f"spades-bench-{stack}-"))
        database_name = None
        redis_url = None
        daphne = spy = None
        extra = {
            "DJANGO_DEBUG": "0",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(32),
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "SPADES_BOT_DELAY": "0",
            # Every client of the benchmark comes from one address: past the
            # per-address limits (game/limits.py) by design.
            "SPADES_RATE_LIMITS": "0",
        }
        try:
            if stack == "embedded":
                env = stackprocs.stack_env(f"sqlite:///{tmp / 'bench.sqlite3'}", None, **extra)
            else:
                redis_url = stackprocs.pick_empty_redis_db(opts["redis_url"])
                database_name, database_url = stackprocs.create_scratch_database(
                    opts["postgres_url"], "spades_bench"
                )
                env = stackprocs.stack_env(database_url, redis_url, **extra)
            self.stdout.write(f"[{stack}] migrating and making {opts['tables']} tables ...")
            stackprocs.manage(env, "migrate", "--noinput")
            started = time.monotonic()
            tables_file = tmp / "tables.json"
            stackprocs.manage(
                env, "bench_server", "--prepare", str(tables_file),
                "--tables", str(opts["tables"]), "--seed", str(opts["seed"]),
                timeout=600,
            )  # fmt: skip
            tables = json.loads(tables_file.read_text())
            made = time.monotonic() - started
            port = stackprocs.free_port()
            log_path = tmp / "daphne.log"
            with open(log_path, "w") as log:
                daphne = stackprocs.start(stackprocs.daphne_command(port), env, log)
            stackprocs.wait_for_port(port, daphne, timeout=30)
            if opts["profile"]:
                spy = self.start_profiler(daphne.pid, stack, opts)
            cpu_server = loadtest.process_cpu_seconds(daphne.pid)
            cpu_client = loadtest.process_cpu_seconds(os.getpid())
            busy, total = loadtest.machine_cpu()
            wall = time.monotonic()
            figures = asyncio.run(
                loadtest.run_clients(
                    port, tables, seconds=opts["seconds"], interval=opts["interval"],
                    seed=opts["seed"],
                )
            )  # fmt: skip
            wall = time.monotonic() - wall
            busy2, total2 = loadtest.machine_cpu()
            summary = figures.summary()
            summary.update(
                tables=len(tables),
                sockets=4 * len(tables),
                tables_made_seconds=round(made, 1),
                wall_seconds=round(wall, 1),
                actions_per_second=round(figures.sent / opts["seconds"], 1),
                daphne_cpu_percent=round(
                    100 * (loadtest.process_cpu_seconds(daphne.pid) - cpu_server) / wall, 1
                ),
                client_cpu_percent=round(
                    100 * (loadtest.process_cpu_seconds(os.getpid()) - cpu_client) / wall, 1
                ),
                machine_cpu_percent=round(
                    100 * (busy2 - busy) / max(1, total2 - total) * (os.cpu_count() or 1), 1
                ),
            )
            if daphne.poll() is not None:
                summary["server_exited"] = daphne.returncode
            if spy is not None:
                spy.wait(timeout=opts["seconds"] + 30)
                summary["hot_spots"] = hot_spots(Path(opts["profile"]) / f"{stack}.txt")
            return summary
        except stackprocs.StackError as e:
            raise CommandError(f"[{stack}] {e}") from e
        finally:
            if spy is not None:
                stackprocs.stop(spy)
            if daphne is not None:
                stackprocs.stop(daphne)
            if database_name is not None:
                stackprocs.drop_database(opts["postgres_url"], database_name)
            if redis_url is not None:
                stackprocs.flush_redis_db(redis_url)
            shutil.rmtree(tmp, ignore_errors=True)

    def start_profiler(self, pid: int, stack: str, opts: dict[str, Any]) -> Any:
        spy_bin = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        if not Path(spy_bin).exists():
            raise CommandError("--profile needs py-spy: pip install py-spy")
        out = Path(opts["profile"])
        out.mkdir(parents=True, exist_ok=True)
        return stackprocs.start(
            [
                spy_bin, "record", "--pid", str(pid), "--format", "raw", "--nonblocking",
                "--duration", str(int(opts["seconds"]) + 1), "-o", str(out / f"{stack}.txt"),
            ],
            os.environ,
        )  # fmt: skip

    # ----- output ----------------------------------------------------------------

    def report(self, stack: str, s: dict[str, Any]) -> None:
        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value:.1f}"

        label = {
            "embedded": "embedded (SQLite file + in-memory layer)",
            "redis": "redis stack (pub/sub layer + PostgreSQL)",
        }[stack]
        self.stdout.write(
            f"\n{label}: {s['tables']} tables, {s['sockets']} sockets "
            f"(made in {s['tables_made_seconds']} s), {s['actions_sent']} actions "
            f"({s['actions_per_second']}/s), {s['deliveries']} state deliveries measured\n"
            f"  act -> state  p50 {ms(s['p50_ms'])} ms  p99 {ms(s['p99_ms'])} ms  "
            f"max {ms(s['max_ms'])} ms\n"
            f"    acting socket  p50 {ms(s['acting_p50_ms'])}  p99 {ms(s['acting_p99_ms'])}; "
            f"other three  p50 {ms(s['others_p50_ms'])}  p99 {ms(s['others_p99_ms'])}\n"
            f"  version gaps {s['gaps']} (recovered by resync {s['gaps_recovered']}), "
            f"undelivered {s['undelivered']}, late turns skipped {s['skipped_ticks']}, "
            f"errors {s['errors'] or 0}, connect failures {s['connect_failures']}, "
            f"finished tables {s['finished_tables']}\n"
            f"  CPU: Daphne {s['daphne_cpu_percent']}% of a core, clients "
            f"{s['client_cpu_percent']}%, whole machine {s['machine_cpu_percent']}% "
            f"(of {100 * (os.cpu_count() or 1)}%)"
        )
        seconds = [b for b in s.get("by_second", []) if b["p99_ms"] is not None]
        if seconds:
            slowest = sorted(seconds, key=lambda b: -b["p99_ms"])[:3]
            self.stdout.write(
                "  slowest seconds of the run (by p99): "
                + ", ".join(
                    f"#{b['second']} p99 {b['p99_ms']:.0f} ms ({b['deliveries']} deliveries)"
                    for b in slowest
                )
            )
        if "server_exited" in s:
            self.stdout.write(f"  Daphne exited with {s['server_exited']} during the run!")
        for line in s.get("hot_spots", []):
            self.stdout.write(f"    {line}")


def _hidden() -> Any:
    import argparse

    return argparse.SUPPRESS


def hot_spots(path: Path, top: int = 15) -> list[str]:
    """The functions with most samples (self and total) from py-spy's collapsed stacks."""
    if not path.exists():
        return ["(no profile written)"]
    own: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        own[frames[-1]] = own.get(frames[-1], 0) + n
        for frame in set(frames):
            inclusive[frame] = inclusive.get(frame, 0) + n
    if not total:
        return ["(no samples)"]
    lines = [f"py-spy: {total} samples; self time:"]
    for frame, n in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {100 * n / total:5.1f}%  {frame}")
    lines.append("total time (project code):")
    mine = [
        (frame, n)
        for frame, n in inclusive.items()
        if any(part in frame for part in ("/game/", "/bots/", "/lobby/", "/spadesite/"))
    ]
    for frame, n in sorted(mine, key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {100 * n / total:5.1f}%  {frame}")
    return lines
