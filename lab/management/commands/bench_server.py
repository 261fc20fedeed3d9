"""``manage.py bench_server``: websocket load on Daphne, embedded and Redis stack, each
against a bare Channels baseline measured in the same run.

For each stack: a scratch database (a SQLite file, or a fresh PostgreSQL
database), migrations, ``--tables`` tables of four guests made through the
service layer. Then two servers side by side under Daphne, on the stack's own
channel layer: the site itself, and its baseline, ``lab.bench.bench_echo`` (no
database, no engine: each act echoed to the table's four sockets), each with
the same clients (``lab.bench.loadtest``: every table acts once per ``--interval``
seconds, same seed). After ``--warmup`` seconds of unmeasured play each (a
process's first moves are its slowest), the two take turns in measured bouts
of ``--bout`` seconds, in the order baseline, site, site, baseline, ..., until
each has played ``--seconds``: the machine's drift over the run (this
machine's neighbours on its host) weighs on both alike, where one run after
the other measured it as a difference between them. The Redis stack (and its
baseline) runs ``--processes`` Daphne processes with a table's sockets dealt
over them, and one Celery worker on the ``bots`` queue, as production does
(it adds finished rounds to the tallies); the embedded stack has one Daphne
process (its in-memory layer reaches no other process). Reports p50/p99
from a sent ``act`` to the ``state`` frame with the new version (at the
acting socket and at the other three), version gaps and whether ``resync``
recovered them, Daphne's CPU per action (summed over its processes, during
the measured bouts; the worker's beside it), and the stack's latency and CPU
per action as ratios to its baseline's. Everything it starts or makes is
removed at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from game.engine import Rules
from lab.bench import bench_figures, bench_tables, loadtest, wire
from lab.bench.commit_probe import EVERY_SECONDS, CommitProbe
from lab.stack import stackprocs

STACKS = ("embedded", "redis")
SITE_APP = "spadesite.asgi:application"
ECHO_APP = "lab.bench.bench_echo:application"
# stack/baseline ratios: name -> the summary's key
RATIO_KEYS = {
    "p50": "p50_ms",
    "p99": "p99_ms",
    "p99_median_of_seconds": "p99_median_of_seconds_ms",
    "cpu_per_action": "daphne_cpu_ms_per_action",
}
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
            "--seconds",
            type=float,
            default=30.0,
            help="measured play per stack and per baseline (default 30)",
        )
        parser.add_argument(
            "--interval", type=float, default=0.5, help="seconds between a table's moves"
        )
        parser.add_argument(
            "--warmup",
            type=float,
            default=3.0,
            help="seconds of unmeasured play before the bouts, on each server (default 3)",
        )
        parser.add_argument(
            "--bout",
            type=float,
            default=5.0,
            help="seconds of one measured bout: the site and the baseline take turns (default 5)",
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
            or opts["bout"] <= 0
        ):
            raise CommandError(
                "--tables, --seconds, --interval, --processes and --bout must be positive, "
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
            f"{opts['seconds']:.0f} s per stack and per baseline in bouts of {opts['bout']:g} s "
            f"taken in turns, after {opts['warmup']:g} s of warm-up play each, "
            f"seed {opts['seed']}, "
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
            # per-address limits (game/sockets/limits.py) by design.
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
                # adds the finished rounds to the tallies (game.research.tally_flush).
                with open(tmp / "worker.log", "w") as log:
                    worker = stackprocs.start(
                        stackprocs.celery_worker_command("bots", concurrency=1), env, log
                    )
            # Same tables (the echo ignores the cookies), same seed: the same
            # clients, taking turns with the site (``interleave``).
            self.stdout.write(
                f"[{stack}] the site and the baseline (bare Channels echo on the same layer), "
                "in turns ..."
            )
            helpers = [worker.pid] if worker is not None else []
            summary, baseline = self.measure(stack, env, processes, tables, opts, tmp, helpers)
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
        stack: str,
        env: dict[str, str],
        processes: int,
        tables: list[dict[str, Any]],
        opts: dict[str, Any],
        tmp: Path,
        helpers: list[int],
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start ``processes`` Daphne processes of the site and as many of the
        baseline, play the tables through both in turns, stop them: the site's
        figures and the baseline's, CPU read over each one's measured bouts
        (``helpers``: the pids of the site's other processes, a Celery worker)."""
        sides = [
            Side(f"{stack}-baseline", ECHO_APP, [], env),
            Side(stack, SITE_APP, helpers, env),
        ]
        spies: list[subprocess.Popen[str]] = []
        # The disk's commits while the baseline plays (lab/bench/commit_probe.py).
        probe = CommitProbe(env["DATABASE_URL"]) if sides[1].services else None
        try:
            if probe is not None:
                probe.start()
            for side in sides:
                side.start(processes, tmp)
            for side in sides:
                side.wait_until_up()
            site = sides[1]
            if opts["profile"]:
                site.on_first_bout = lambda: spies.extend(
                    self.start_profiler(pid, f"{stack}-{number}", opts)
                    for number, pid in enumerate(site.pids)
                )
            asyncio.run(interleave(sides, tables, opts, probe))
            summaries = [side.summary(opts) for side in sides]
            if probe is not None:
                summaries[1]["postgres_commit_probe"] = probe.summary()
            if spies:
                for spy in spies:
                    spy.send_signal(signal.SIGINT)  # py-spy writes what it has and stops
                    spy.wait(timeout=60)
                out = Path(opts["profile"])
                summaries[1]["hot_spots"] = hot_spots(
                    [out / f"{stack}-{number}.txt" for number in range(processes)]
                )
            return summaries[1], summaries[0]
        finally:
            if probe is not None:
                probe.stop()
            for process in [*spies, *(d for side in sides for d in side.daphnes)]:
                stackprocs.stop(process)

    def start_profiler(self, pid: int, name: str, opts: dict[str, Any]) -> Any:
        spy_bin = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        if not Path(spy_bin).exists():
            raise CommandError("--profile needs py-spy: pip install py-spy")
        out = Path(opts["profile"])
        out.mkdir(parents=True, exist_ok=True)
        return subprocess.Popen(
            [
                spy_bin, "record", "--pid", str(pid), "--format", "raw", "--nonblocking",
                "-o", str(out / f"{name}.txt"),
            ],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
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
        probe = s.get("postgres_commit_probe")
        if probe is not None and probe["commits"]:
            self.stdout.write(
                f"  the disk: bare PostgreSQL commits during the baseline's bouts (no site; "
                f"one insert every {EVERY_SECONDS * 1e3:.0f} ms): p50 {_ms(probe['p50_ms'], 2)} ms"
                f"  p99 {_ms(probe['p99_ms'], 2)} ms  max {_ms(probe['max_ms'])} ms, "
                f"{probe['over_50_ms']} of {probe['commits']} over 50 ms"
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
                f"  vs baseline: p50 {_times(r['p50'])}  p99 {_times(r['p99'])} "
                f"(median of the seconds' p99s {_times(r['p99_median_of_seconds'])})  "
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


# ----- the two sides, in turns ---------------------------------------------------------

# Bouts of each side in the order A B B A, A B B A, ...: a drift of the machine
# over the run (another machine's load on the same host) weighs on both alike.
BOUT_ORDER = (0, 1, 1, 0)
# PostgreSQL publishes a backend's counters (commits, WAL) up to a second after
# its last transaction: read them after the site's bout once it has.
STATS_SETTLE_SECONDS = 1.2
# After the last bout: the site's work left from it (a round's tallies are
# added a second after its end, in steps).
OWN_SETTLE_SECONDS = 3.0


@dataclass
class Side:
    """One server of a run (the site, or its baseline): its Daphne processes, its
    clients, and the counters summed over its measured bouts."""

    name: str
    app: str
    helpers: list[int]
    env: dict[str, str]
    daphnes: list[subprocess.Popen[str]] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    used: dict[str, float] = field(default_factory=dict)
    figures: bench_figures.Figures | None = None
    tables: int = 0
    on_first_bout: Callable[[], None] | None = None

    @property
    def pids(self) -> list[int]:
        return [daphne.pid for daphne in self.daphnes]

    @property
    def services(self) -> bool:
        database_url = self.env.get("DATABASE_URL", "")
        return database_url.startswith("postgres") and self.env.get("REDIS_URL") is not None

    def start(self, processes: int, tmp: Path) -> None:
        self.ports = [stackprocs.free_port() for _ in range(processes)]
        for number, port in enumerate(self.ports):
            with open(tmp / f"{self.name}-daphne{number}.log", "w") as log:
                self.daphnes.append(stackprocs.start(daphne_command(port, self.app), self.env, log))

    def wait_until_up(self) -> None:
        for port, daphne in zip(self.ports, self.daphnes, strict=True):
            stackprocs.wait_for_port(port, daphne, timeout=30)

    def read_own(self) -> dict[str, float]:
        """CPU seconds so far of this side's own processes: Daphne's, the helpers'."""
        return {
            "daphne": sum(bench_figures.process_cpu_seconds(pid) for pid in self.pids),
            "helpers": sum(bench_figures.process_cpu_seconds(pid) for pid in self.helpers),
        }

    def read_cpu(self) -> dict[str, float]:
        """CPU seconds so far of the clients and the machine (busy and total
        jiffies), and the clock."""
        busy, total = bench_figures.machine_cpu()
        return {
            "client": bench_figures.process_cpu_seconds(os.getpid()),
            "busy": busy,
            "total": total,
            "wall": time.monotonic(),
        }

    def read_wire(self) -> dict[str, float]:
        """With services: Daphne's bytes to and from PostgreSQL and Redis, the
        servers' commits, WAL bytes and commands, and their processes' CPU."""
        if not self.services:
            return {}
        database_url, redis_url = self.env["DATABASE_URL"], self.env["REDIS_URL"]
        pg = wire.tcp_bytes(self.pids, wire.port_of(database_url, 5432))
        rd = wire.tcp_bytes(self.pids, wire.port_of(redis_url, 6379))
        commits, wal = wire.postgres_commits(database_url)
        cpu = wire.service_cpu_seconds()
        return {
            "pg_sent": pg.sent, "pg_received": pg.received, "redis_sent": rd.sent,
            "redis_received": rd.received, "commits": commits, "wal": wal,
            "commands": wire.redis_commands(redis_url), "postgres_cpu": cpu["postgres"],
            "redis_cpu": cpu["redis-server"],
        }  # fmt: skip

    def add(self, before: dict[str, float], after: dict[str, float]) -> None:
        for key, value in after.items():
            self.used[key] = self.used.get(key, 0.0) + value - before[key]

    def summary(self, opts: dict[str, Any]) -> dict[str, Any]:
        assert self.figures is not None
        sent = self.figures.sent
        summary = self.figures.summary()
        summary.update(
            processes=len(self.daphnes),
            tables=self.tables,
            sockets=4 * self.tables,
            actions_per_second=round(sent / opts["seconds"], 1),
            **cpu_figures(self.used, sent),
        )
        if self.services:
            summary.update(wire_figures(self.used, sent))
        if self.helpers and sent:
            summary["worker_cpu_ms_per_action"] = round(1000 * self.used["helpers"] / sent, 3)
        exited = [daphne.returncode for daphne in self.daphnes if daphne.poll() is not None]
        if exited:
            summary["server_exited"] = exited
        return summary


async def interleave(
    sides: list[Side],
    tables: list[dict[str, Any]],
    opts: dict[str, Any],
    probe: CommitProbe | None = None,
) -> None:
    """Connect both sides' clients, warm each up, then measure them in bouts
    taken in turns (:data:`BOUT_ORDER`), ``--seconds`` in all per side; the
    ``probe`` times commits during the baseline's (the first side's) bouts."""
    bouts = max(1, round(opts["seconds"] / opts["bout"]))
    length = opts["seconds"] / bouts
    players = []
    for side in sides:
        clients = loadtest.Clients(tables, interval=opts["interval"], seed=opts["seed"])
        await clients.connect(side.ports)
        side.figures, side.tables = clients.figures, len(tables)
        players.append(clients)
    await asyncio.sleep(1.0)  # every socket has its first state
    for clients in players:
        if opts["warmup"] > 0:  # a process's first moves are its slowest
            await clients.play(opts["warmup"], measured=False)
    order = [BOUT_ORDER[i % len(BOUT_ORDER)] for i in range(2 * bouts)]
    # A side's own processes are read from its first bout to the end of the
    # last: what the site does after a bout of its own (a round's tallies added
    # a second later) is its cost, even while the baseline plays. Its processes
    # sit idle otherwise. The clients and the machine are read per bout.
    own: dict[int, dict[str, float]] = {}
    try:
        for index in order:
            side, clients = sides[index], players[index]
            if side.on_first_bout is not None:
                side.on_first_bout()
                side.on_first_bout = None
            if index not in own:
                own[index] = side.read_own()
            # Read on a thread: reading (subprocesses, connections to PostgreSQL
            # and Redis: 30-60 ms) on this loop would hold the other clients.
            before = {
                **await asyncio.to_thread(side.read_cpu),
                **await asyncio.to_thread(side.read_wire),
            }
            if probe is not None and index == 0:
                probe.on()
            await clients.play(length, measured=True)
            if probe is not None:
                probe.off()
            after = await asyncio.to_thread(side.read_cpu)
            if side.services:
                await asyncio.sleep(STATS_SETTLE_SECONDS)
                after.update(await asyncio.to_thread(side.read_wire))
            side.add(before, after)
        await asyncio.sleep(OWN_SETTLE_SECONDS)
        for index, side in enumerate(sides):
            side.add(own[index], side.read_own())
    finally:
        for clients in players:
            await clients.close()


def cpu_figures(used: dict[str, float], actions: int) -> dict[str, float | None]:
    """CPU over the measured bouts from the summed counters (Daphne seconds
    summed over its processes, the clients' seconds, the machine's busy and
    total jiffies, the clock): Daphne's ms per action, and shares of a core."""
    wall = max(used.get("wall", 0.0), 1e-9)
    return {
        "measured_seconds": round(wall, 1),
        "daphne_cpu_ms_per_action": (
            round(1000 * used["daphne"] / actions, 3) if actions else None
        ),
        "daphne_cpu_percent": round(100 * used["daphne"] / wall, 1),
        "client_cpu_percent": round(100 * used["client"] / wall, 1),
        "machine_cpu_percent": round(
            100 * used["busy"] / max(1.0, used["total"]) * (os.cpu_count() or 1), 1
        ),
    }


def wire_figures(used: dict[str, float], actions: int) -> dict[str, float]:
    """Per action, over the measured bouts: bytes between Daphne and PostgreSQL
    and Redis (each way), PostgreSQL transactions, Redis commands (the whole
    server's), and the CPU of the machine's postgres and redis-server processes."""
    n = max(1, actions)
    return {
        "postgres_cpu_ms_per_action": round(1000 * used["postgres_cpu"] / n, 3),
        "redis_cpu_ms_per_action": round(1000 * used["redis_cpu"] / n, 3),
        "postgres_bytes_sent_per_action": round(used["pg_sent"] / n),
        "postgres_bytes_received_per_action": round(used["pg_received"] / n),
        "postgres_commits_per_action": round(used["commits"] / n, 2),
        "postgres_wal_bytes_per_action": round(used["wal"] / n),
        "redis_bytes_sent_per_action": round(used["redis_sent"] / n),
        "redis_bytes_received_per_action": round(used["redis_received"] / n),
        "redis_commands_per_action": round(used["commands"] / n, 2),
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
