"""``manage.py bench_workers``: bot moves per second through one Celery worker.

A stack of its own (a scratch PostgreSQL database beside ``--postgres-url``,
an empty database number of ``--redis-url``): ``--tables`` tables of four
``--bot`` bots with no pacing delay and a goal no match reaches, one Celery
worker on the ``bots`` queue (prefork, ``--concurrency`` children). Once the
worker is ready every table is started; after ``--warmup`` seconds the moves
committed in ``--seconds`` are counted from the tables' versions. Each move
is a whole task: fetch from Redis, load the table (cache or log), the bot's
decision, the move's transaction, the group message. Reports moves/s and the
worker's CPU (parent and children) per move. Everything made is removed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
from django.core.management.base import BaseCommand, CommandError

from lab.bench import bench_figures
from lab.stack import stackprocs

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test"
# No match ends during the run: every table keeps its worker busy.
ENDLESS_RULES = {"winning_goal": 10_000, "losing_goal": -10_000}


class Command(BaseCommand):
    help = "Bot moves per second through one Celery worker (Redis broker, PostgreSQL)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--tables", type=int, default=20, help="tables of four bots")
        parser.add_argument("--bot", default="BIS+SRP", help="registry name of the bots")
        parser.add_argument("--concurrency", type=int, default=1, help="worker children")
        parser.add_argument("--seconds", type=float, default=20.0, help="measured time")
        parser.add_argument("--warmup", type=float, default=3.0)
        parser.add_argument(
            "--redis-url", default=os.environ.get("TEST_REDIS_URL") or DEFAULT_REDIS_URL
        )
        parser.add_argument(
            "--postgres-url", default=os.environ.get("TEST_DATABASE_URL") or DEFAULT_POSTGRES_URL
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["tables"] < 1 or opts["concurrency"] < 1 or opts["seconds"] <= 0:
            raise CommandError("--tables, --concurrency and --seconds must be positive")
        tmp = Path(tempfile.mkdtemp(prefix="spades-bench-workers-"))
        redis_url = stackprocs.pick_empty_redis_db(opts["redis_url"])
        name, database_url = stackprocs.create_scratch_database(
            opts["postgres_url"], "spades_bench_workers"
        )
        worker = None
        try:
            env = stackprocs.stack_env(
                database_url, redis_url, DJANGO_DEBUG="0", SPADES_BOT_DELAY="0",
                DJANGO_SECRET_KEY="bench-workers-" + "x" * 40,
            )  # fmt: skip
            stackprocs.manage(env, "migrate", "--noinput")
            pks = self.make_tables(env, opts["tables"], opts["bot"])
            log = tmp / "worker.log"
            with open(log, "w") as out:
                command = stackprocs.celery_worker_command(
                    "bots", opts["concurrency"], pool="prefork"
                )
                worker = stackprocs.start(command, env, out)
            stackprocs.wait_for_text(log, "ready.", worker, timeout=60)
            start = "from game import seating\n" + "".join(
                f"seating.start_table({pk})\n" for pk in pks
            )
            stackprocs.manage(env, "shell", "-c", start)
            time.sleep(opts["warmup"])
            figures = self.measure(database_url, worker.pid, pks, opts["seconds"])
            if worker.poll() is not None:
                raise CommandError(f"the worker exited:\n{stackprocs.tail(log)}")
        finally:
            if worker is not None:
                stackprocs.stop(worker)
            stackprocs.drop_database(opts["postgres_url"], name)
            stackprocs.flush_redis_db(redis_url)
            shutil.rmtree(tmp, ignore_errors=True)
        self.stdout.write(
            f"bench_workers: {opts['tables']} tables of four {opts['bot']}, one worker "
            f"(prefork, {opts['concurrency']} children), {opts['seconds']:.0f} s, "
            f"{os.cpu_count()} CPUs\n"
            f"  {figures['moves']} moves: {figures['moves_per_second']:.1f} moves/s; worker CPU "
            f"{figures['cpu_ms_per_move']:.2f} ms per move "
            f"({figures['worker_cpu_percent']:.0f}% of a core); whole machine "
            f"{figures['machine_cpu_percent']:.0f}% (of {100 * (os.cpu_count() or 1)}%)"
        )

    def make_tables(self, env: dict[str, str], count: int, bot: str) -> list[int]:
        code = (
            "from game import seating\n"
            f"for _ in range({count}):\n"
            f"    t = seating.create_table(rules={ENDLESS_RULES!r}, stand_in_bots=False)\n"
            f"    for p in range(4): seating.add_bot(t, p, {bot!r})\n"
            "    print('table', t.pk)\n"
        )
        out = stackprocs.manage(env, "shell", "-c", code)
        return [int(line.split()[1]) for line in out.splitlines() if line.startswith("table ")]

    def measure(
        self, database_url: str, worker_pid: int, pks: list[int], seconds: float
    ) -> dict[str, Any]:
        def versions() -> int:
            with psycopg.connect(database_url, connect_timeout=5) as conn:
                row = conn.execute(
                    "select coalesce(sum(version), 0) from game_table where id = any(%s)", [pks]
                ).fetchone()
            return int(row[0]) if row else 0

        first, cpu, machine = versions(), tree_cpu_seconds(worker_pid), bench_figures.machine_cpu()
        began = time.monotonic()
        time.sleep(seconds)
        moves = versions() - first
        wall = time.monotonic() - began
        used = tree_cpu_seconds(worker_pid) - cpu
        busy, total = bench_figures.machine_cpu()
        return {
            "moves": moves,
            "moves_per_second": moves / wall,
            "cpu_ms_per_move": 1000 * used / max(1, moves),
            "worker_cpu_percent": 100 * used / wall,
            "machine_cpu_percent": 100
            * (busy - machine[0])
            / max(1, total - machine[1])
            * (os.cpu_count() or 1),
        }


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of a process and its children (a prefork worker's pool)."""
    total = bench_figures.process_cpu_seconds(pid)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            if parent == pid:
                total += bench_figures.process_cpu_seconds(int(entry))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return total
