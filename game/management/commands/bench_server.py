"""``manage.py bench_server``: websocket load on Daphne, embedded and Redis stack, each
against a bare Channels baseline measured in the same run.

For each stack: a scratch database (a SQLite file, or a fresh PostgreSQL
database), migrations, ``--tables`` tables of four guests made through the
service layer. Then twice, with the same clients (``game.loadtest``: every
table acts once per ``--interval`` seconds, ``--warmup`` seconds unmeasured
(a process's first moves are its slowest), then ``--seconds`` seconds
measured, same seed): first the baseline, ``game.bench_echo`` (no database,
no engine: each act echoed to the table's four sockets) under Daphne on the
stack's own channel layer, then the site itself. The Redis stack (and its
baseline) runs ``--processes`` Daphne processes with a table's sockets dealt
over them, and one Celery worker on the ``bots`` queue, as production does
(it adds finished rounds to the tallies); the embedded stack has one Daphne
process (its in-memory layer reaches no other process). Reports p50/p99
from a sent ``act`` to the ``state`` frame with the new version (at the
acting socket and at the other three), version gaps and whether ``resync``
recovered them, Daphne's CPU per action (summed over its processes, during
the measured play; the worker's beside it), and the stack's latency and CPU
per action as ratios to its baseline's. Everything it starts or makes is
removed at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from game import bench_tables, loadtest, stackprocs, wire
from game.engine import Rules

STACKS = ("embedded", "redis")
SITE_APP = "spadesite.asgi:application"
ECHO_APP = "game.bench_echo:application"
# stack/baseline ratios: name -> the summary's key
RATIO_KEYS = {"p50": "p50_ms", "p99": "p99_ms", "cpu_per_action": "daphne_cpu_ms_per_action"}
LABELS = {
    "embedded": "embedded (SQLite file + in-memory layer)",
    "redis": "redis stack (pub/sub layer + PostgreSQL)",
}
ONE_PROCESS_NOTE = (
    "one Daphne process: the in-memory layer reaches no other process "
    "(--processes applies to the redis stack)"
)
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test"


# The default rules but goals no random play reaches within a run: a table whose
# match ended would stop offering moves, and the offered rate would fall.
BENCH_RULES = {**Rules().to_dict(), "winning_goal": 10_000, "losing_goal": -10_000}


class Command(BaseCommand):
    help = (
        "Websocket load benchmark: tables of four humans playing through Daphne; "
        "action-to-broadcast latency, version gaps, CPU per action, each beside a bare "
        "Channels echo on the same layer. Embedded default (SQLite + in-memory layer) "
        "and Redis stack (pub/sub layer + PostgreSQL)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--tables", type=int, default=100, help="tables of four (default 100)")
        parser.add_argument(
            "--seconds", type=float, default=30.0, help="measured play per stack (default 30)"
        )
        parser.add_argument(
            "--interval", type=float, default=0.5, help="seconds between a table's moves"
        )
        parser.add_argument(
            "--warmup",
            type=float,
            default=3.0,
            help="seconds of play before the measured play, on every run (default 3)",
        )
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--processes",
            type=int,
            default=1,
            help="Daphne processes of the redis stack and its baseline (default 1); "
            "the embedded stack always has one",
        )
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
        parser.add_argument(
            "--spread",
            action="store_true",
            help="start each table 0-55 moves into its first round (rounds end at different "
            "moments, as on a live site); by default every table starts at the first bid, "
            "so all end their first round in the same half second",
        )
        parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
        # Internal: run in the benchmark's server environment to make the tables.
        parser.add_argument("--prepare", metavar="FILE", help=_hidden())

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["prepare"]:
            tables = bench_tables.prepare_tables(
                opts["tables"], opts["seed"], rules=BENCH_RULES, spread=opts["spread"]
            )
            Path(opts["prepare"]).write_text(json.dumps(tables))
            return
        if (
            opts["tables"] < 1
            or opts["seconds"] <= 0
            or opts["interval"] <= 0
            or opts["processes"] < 1
            or opts["warmup"] < 0
        ):
            raise CommandError(
                "--tables, --seconds, --interval and --processes must be positive, "
                "--warmup at least 0"
            )
        stacks = [s.strip() for s in opts["stacks"].split(",") if s.strip()]
        unknown = set(stacks) - set(STACKS)
        if unknown:
            raise CommandError(f"unknown stack(s) {sorted(unknown)}: use {', '.join(STACKS)}")
        rate = opts["tables"] / opts["interval"]
        self.stdout.write(
            f"bench_server: {opts['tables']} tables x 4 sockets, one move per table every "
            f"{opts['interval']} s ({rate:.0f} actions/s, {4 * rate:.0f} seat deliveries/s), "
            f"{opts['seconds']:.0f} s per stack and per baseline after {opts['warmup']:g} s of "
            f"warm-up play, seed {opts['seed']}, "
            f"{os.cpu_count()} CPUs, {opts['processes']} Daphne process(es) for the redis stack"
            + (", tables spread over their first round" if opts["spread"] else "")
        )
        results = {}
        for stack in stacks:
            results[stack] = self.run_stack(stack, opts)
            self.report(stack, results[stack])
        self.stdout.write("\n" + "\n".join(comparison_lines(results)))
        if opts["json"]:
            Path(opts["json"]).write_text(json.dumps(results, indent=2))

    # ----- one stack -------------------------------------------------------------

    def run_stack(self, stack: str, opts: dict[str, Any]) -> dict[str, Any]:
        processes = 1 if stack == "embedded" else opts["processes"]
        tmp = Path(tempfile.mkdtemp(prefix=f"spades-bench-{stack}-"))
        database_name = None
        redis_url = None
        worker = None
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
                *(["--spread"] if opts["spread"] else []),
                timeout=600,
            )  # fmt: skip
            tables = json.loads(tables_file.read_text())
            made = time.monotonic() - started
            if stack == "redis":
                # As on the production stack: a worker on the ``bots`` queue, which
                # adds the finished rounds to the tallies (game.tally_flush).
                with open(tmp / "worker.log", "w") as log:
                    worker = stackprocs.start(
                        stackprocs.celery_worker_command("bots", concurrency=1), env, log
                    )
            # The baseline first, so that the site meets its freshly made
            # database as it did before there was a baseline. Same tables (the
            # echo ignores the cookies), same seed: the same clients.
            self.stdout.write(f"[{stack}] baseline: bare Channels echo on the same layer ...")
            helpers = [worker.pid] if worker is not None else []
            baseline = self.measure(
                f"{stack}-baseline", ECHO_APP, env, processes, tables, opts, tmp, False, helpers
            )
            self.stdout.write(f"[{stack}] the site ...")
            summary = self.measure(
                stack, SITE_APP, env, processes, tables, opts, tmp, bool(opts["profile"]), helpers
            )
            summary["tables_made_seconds"] = round(made, 1)
            if stack == "embedded" and opts["processes"] > 1:
                summary["note"] = ONE_PROCESS_NOTE
            summary["baseline"] = baseline
            summary["vs_baseline"] = ratios(summary, baseline)
            return summary
        except stackprocs.StackError as e:
            raise CommandError(f"[{stack}] {e}") from e
        finally:
            if worker is not None:
                stackprocs.stop(worker)
            if database_name is not None:
                stackprocs.drop_database(opts["postgres_url"], database_name)
            if redis_url is not None:
                stackprocs.flush_redis_db(redis_url)
            shutil.rmtree(tmp, ignore_errors=True)

    def measure(
        self,
        name: str,
        app: str,
        env: dict[str, str],
        processes: int,
        tables: list[dict[str, Any]],
        opts: dict[str, Any],
        tmp: Path,
        profile: bool,
        helpers: list[int],
    ) -> dict[str, Any]:
        """Start ``processes`` Daphne processes on ``app``, play the tables
        through them, stop them: the figures, CPU read over the measured play
        (``helpers``: the pids of the stack's other processes, a Celery worker)."""
        daphnes: list[subprocess.Popen[str]] = []
        spies: list[subprocess.Popen[str]] = []
        try:
            ports = [stackprocs.free_port() for _ in range(processes)]
            for number, port in enumerate(ports):
                with open(tmp / f"{name}-daphne{number}.log", "w") as log:
                    daphnes.append(stackprocs.start(daphne_command(port, app), env, log))
            for port, daphne in zip(ports, daphnes, strict=True):
                stackprocs.wait_for_port(port, daphne, timeout=30)
            pids = [daphne.pid for daphne in daphnes]
            counters: dict[str, tuple[float, float, tuple[float, float], float]] = {}
            helper_cpu: dict[str, float] = {}

            database_url, redis_url = env.get("DATABASE_URL", ""), env.get("REDIS_URL")
            services = database_url.startswith("postgres") and redis_url is not None
            wire_readings: dict[str, WireReading] = {}

            def read_wire(phase: str) -> None:
                assert redis_url is not None
                wire_readings[phase] = (
                    wire.tcp_bytes(pids, wire.port_of(database_url, 5432)),
                    wire.tcp_bytes(pids, wire.port_of(redis_url, 6379)),
                    wire.postgres_commits(database_url),
                    wire.redis_commands(redis_url),
                    wire.service_cpu_seconds(),
                )

            def read_counters(phase: str) -> None:
                if services:
                    read_wire(phase)
                if profile and phase == "start":
                    # From the first move on: the sockets' connecting is not a move's cost.
                    spies.extend(
                        self.start_profiler(daphne.pid, f"{name}-{number}", opts)
                        for number, daphne in enumerate(daphnes)
                    )
                helper_cpu[phase] = sum(loadtest.process_cpu_seconds(pid) for pid in helpers)
                counters[phase] = (
                    sum(loadtest.process_cpu_seconds(pid) for pid in pids),
                    loadtest.process_cpu_seconds(os.getpid()),
                    loadtest.machine_cpu(),
                    time.monotonic(),
                )

            figures = asyncio.run(
                loadtest.run_clients(
                    ports, tables, seconds=opts["seconds"], interval=opts["interval"],
                    seed=opts["seed"], warmup=opts["warmup"], on_phase=read_counters,
                )
            )  # fmt: skip
            summary = figures.summary()
            summary.update(
                processes=processes,
                tables=len(tables),
                sockets=4 * len(tables),
                actions_per_second=round(figures.sent / opts["seconds"], 1),
                **cpu_figures(counters["start"], counters["stop"], figures.sent),
            )
            if services:
                summary.update(wire_figures(wire_readings, figures.sent))
            if helpers and figures.sent:
                used = helper_cpu["stop"] - helper_cpu["start"]
                summary["worker_cpu_ms_per_action"] = round(1000 * used / figures.sent, 3)
            exited = [daphne.returncode for daphne in daphnes if daphne.poll() is not None]
            if exited:
                summary["server_exited"] = exited
            if spies:
                for spy in spies:
                    spy.wait(timeout=opts["seconds"] + 30)
                out = Path(opts["profile"])
                summary["hot_spots"] = hot_spots(
                    [out / f"{name}-{number}.txt" for number in range(processes)]
                )
            return summary
        finally:
            for process in [*spies, *daphnes]:
                stackprocs.stop(process)

    def start_profiler(self, pid: int, name: str, opts: dict[str, Any]) -> Any:
        spy_bin = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        if not Path(spy_bin).exists():
            raise CommandError("--profile needs py-spy: pip install py-spy")
        out = Path(opts["profile"])
        out.mkdir(parents=True, exist_ok=True)
        return stackprocs.start(
            [
                spy_bin, "record", "--pid", str(pid), "--format", "raw", "--nonblocking",
                "--duration", str(int(opts["seconds"]) + 1), "-o", str(out / f"{name}.txt"),
            ],
            os.environ,
        )  # fmt: skip

    # ----- output ----------------------------------------------------------------

    def report(self, stack: str, s: dict[str, Any]) -> None:
        processes = s.get("processes", 1)
        self.stdout.write(
            f"\n{LABELS[stack]}: {s['tables']} tables, {s['sockets']} sockets "
            f"(made in {s['tables_made_seconds']} s) on {processes} Daphne process(es), "
            f"{s['actions_sent']} actions ({s['actions_per_second']}/s), "
            f"{s['deliveries']} state deliveries measured\n"
            f"  act -> state  p50 {_ms(s['p50_ms'])} ms  p99 {_ms(s['p99_ms'])} ms  "
            f"max {_ms(s['max_ms'])} ms\n"
            f"    acting socket  p50 {_ms(s['acting_p50_ms'])}  "
            f"p99 {_ms(s['acting_p99_ms'])}; other three  p50 {_ms(s['others_p50_ms'])}  "
            f"p99 {_ms(s['others_p99_ms'])}\n"
            f"  version gaps {s['gaps']} (recovered by resync {s['gaps_recovered']}), "
            f"undelivered {s['undelivered']}, late turns skipped {s['skipped_ticks']}, "
            f"errors {s['errors'] or 0}, connect failures {s['connect_failures']}, "
            f"finished tables {s['finished_tables']}\n"
            f"  CPU: Daphne {_ms(s['daphne_cpu_ms_per_action'], 3)} ms per action "
            f"({s['daphne_cpu_percent']}% of a core"
            f"{', summed over the processes' if processes > 1 else ''}), clients "
            f"{s['client_cpu_percent']}%, whole machine {s['machine_cpu_percent']}% "
            f"(of {100 * (os.cpu_count() or 1)}%)"
        )
        if "postgres_commits_per_action" in s:
            self.stdout.write(
                f"  per action: PostgreSQL {s['postgres_commits_per_action']} commits, "
                f"{s['postgres_wal_bytes_per_action']} bytes of WAL (whole server), "
                f"{s['postgres_bytes_sent_per_action']} bytes sent / "
                f"{s['postgres_bytes_received_per_action']} received; Redis "
                f"{s['redis_commands_per_action']} commands (whole server), "
                f"{s['redis_bytes_sent_per_action']} bytes sent / "
                f"{s['redis_bytes_received_per_action']} received (Daphne's side); CPU "
                f"postgres {_ms(s['postgres_cpu_ms_per_action'], 3)} ms, redis-server "
                f"{_ms(s['redis_cpu_ms_per_action'], 3)} ms (all their processes)"
                + (
                    f", Celery worker {_ms(s['worker_cpu_ms_per_action'], 3)} ms"
                    if "worker_cpu_ms_per_action" in s
                    else ""
                )
            )
        if "note" in s:
            self.stdout.write(f"  {s['note']}")
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
        base = s.get("baseline")
        if base is not None:
            r = s["vs_baseline"]
            self.stdout.write(
                f"  baseline (bare Channels echo, same layer, clients and processes): "
                f"p50 {_ms(base['p50_ms'])} ms  p99 {_ms(base['p99_ms'])} ms  "
                f"Daphne {_ms(base['daphne_cpu_ms_per_action'], 3)} ms per action "
                f"({base['daphne_cpu_percent']}% of a core); gaps {base['gaps']}, "
                f"undelivered {base['undelivered']}, errors {base['errors'] or 0}\n"
                f"  vs baseline: p50 {_times(r['p50'])}  p99 {_times(r['p99'])}  "
                f"Daphne CPU per action {_times(r['cpu_per_action'])}"
            )
        for entry in (s, base or {}):
            if "server_exited" in entry:
                self.stdout.write(f"  Daphne exited ({entry['server_exited']}) during the run!")
        for line in s.get("hot_spots", []):
            self.stdout.write(f"    {line}")


def _hidden() -> Any:
    import argparse

    return argparse.SUPPRESS


def _ms(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _times(value: float | None) -> str:
    return "-" if value is None else f"x{value:.2f}"


def daphne_command(port: int, app: str) -> list[str]:
    """Daphne on 127.0.0.1:port serving ``app`` (the site's, or the echo's)."""
    command = stackprocs.daphne_command(port)
    assert command[-1] == SITE_APP, command
    return [*command[:-1], app]


def cpu_figures(
    start: tuple[float, float, tuple[float, float], float],
    stop: tuple[float, float, tuple[float, float], float],
    actions: int,
) -> dict[str, float | None]:
    """CPU over the measured play from two readings (Daphne seconds summed over
    its processes, the clients' seconds, the machine's (busy, total) jiffies,
    the clock): Daphne's ms per action, and shares of a core."""
    (server0, client0, (busy0, total0), t0), (server1, client1, (busy1, total1), t1) = start, stop
    wall = max(t1 - t0, 1e-9)
    return {
        "measured_seconds": round(wall, 1),
        "daphne_cpu_ms_per_action": (
            round(1000 * (server1 - server0) / actions, 3) if actions else None
        ),
        "daphne_cpu_percent": round(100 * (server1 - server0) / wall, 1),
        "client_cpu_percent": round(100 * (client1 - client0) / wall, 1),
        "machine_cpu_percent": round(
            100 * (busy1 - busy0) / max(1, total1 - total0) * (os.cpu_count() or 1), 1
        ),
    }


WireReading = tuple[wire.Bytes, wire.Bytes, tuple[int, int], int, dict[str, float]]


def wire_figures(readings: dict[str, WireReading], actions: int) -> dict[str, float]:
    """Per action, over the measured play: bytes between Daphne and PostgreSQL
    and Redis (each way), PostgreSQL transactions, Redis commands (the whole
    server's), and the CPU of the machine's postgres and redis-server processes."""
    (pg0, redis0, (commits0, wal0), commands0, cpu0) = readings["start"]
    (pg1, redis1, (commits1, wal1), commands1, cpu1) = readings["stop"]
    pg, rd, n = pg1 - pg0, redis1 - redis0, max(1, actions)
    return {
        "postgres_cpu_ms_per_action": round(1000 * (cpu1["postgres"] - cpu0["postgres"]) / n, 3),
        "redis_cpu_ms_per_action": round(
            1000 * (cpu1["redis-server"] - cpu0["redis-server"]) / n, 3
        ),
        "postgres_bytes_sent_per_action": round(pg.sent / n),
        "postgres_bytes_received_per_action": round(pg.received / n),
        "postgres_commits_per_action": round((commits1 - commits0) / n, 2),
        "postgres_wal_bytes_per_action": round((wal1 - wal0) / n),
        "redis_bytes_sent_per_action": round(rd.sent / n),
        "redis_bytes_received_per_action": round(rd.received / n),
        "redis_commands_per_action": round((commands1 - commands0) / n, 2),
    }


def ratios(stack: dict[str, Any], baseline: dict[str, Any]) -> dict[str, float | None]:
    """The stack's p50, p99 and Daphne CPU per action over its baseline's (None
    when either is missing or the baseline's is zero)."""
    out: dict[str, float | None] = {}
    for name, key in RATIO_KEYS.items():
        mine, base = stack.get(key), baseline.get(key)
        out[name] = round(mine / base, 2) if mine is not None and base else None
    return out


def comparison_lines(results: dict[str, dict[str, Any]]) -> list[str]:
    """Each stack beside its baseline, one line each: absolute figures and ratios."""
    lines = [
        "stack vs its baseline (bare Channels echo on the same layer): stack / baseline = ratio",
        f"  {'stack':<9} {'Daphne':>6}  {'p50 ms':<22} {'p99 ms':<22} Daphne CPU ms/action",
    ]
    for stack, s in results.items():
        base = s.get("baseline") or {}
        r = s.get("vs_baseline") or {}
        cells = [
            f"{_ms(s.get(key), d)} / {_ms(base.get(key), d)} = {_times(r.get(name))}"
            for name, key, d in (
                ("p50", "p50_ms", 1),
                ("p99", "p99_ms", 1),
                ("cpu_per_action", "daphne_cpu_ms_per_action", 3),
            )
        ]
        lines.append(
            f"  {stack:<9} {s.get('processes', 1):>6}  {cells[0]:<22} {cells[1]:<22} {cells[2]}"
        )
    return lines


def hot_spots(paths: list[Path], top: int = 15) -> list[str]:
    """The functions with most samples (self and total) from py-spy's collapsed
    stacks, one file per Daphne process, added up."""
    written = [path for path in paths if path.exists()]
    if not written:
        return ["(no profile written)"]
    own: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = 0
    for line in (line for path in written for line in path.read_text().splitlines()):
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
