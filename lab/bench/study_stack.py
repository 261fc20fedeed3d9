"""The servers of ``manage.py bench_study``, the study file it loads, and what is
read from the outside after a run: CPU per process, the servers' logs, the
study's export.

Two stacks, as ``bench_server`` starts them (``lab.stack.stackprocs``):

- ``embedded``: one Daphne on a scratch SQLite file and the in-memory layer,
  its bots and replay analysis in the process (the analysis in a spawned
  child at the lowest priority, ``game/replays/child.py``);
- ``redis``: a fresh PostgreSQL database and an empty Redis database number,
  ``processes`` Daphne processes behind nginx (``lab.stack.proxy``), Celery
  workers for the queues ``bots``, ``search`` and ``replays`` and Celery
  beat, as ``make stack`` runs them (``lab/stack/run.py``).

Every process's output (Daphne's stderr included) goes to a log file of its
own, scanned afterwards for PostgreSQL's ``deadlock detected`` and ``too
many clients``. Everything started or made is removed by :meth:`Stack.close`.
"""

from __future__ import annotations

import csv
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lab.stack import proxy, stackprocs

EXAMPLE = stackprocs.BASE_DIR / "docs" / "examples" / "study.toml"
SLUG = "bench-study"
# What the logs are scanned for: PostgreSQL's errors that reach a participant.
LOG_SIGNS = {
    "deadlock detected": "deadlock detected",
    "too many clients": "too many clients",
    "Traceback": "Traceback (most recent call last)",
    "HTTP 500 logged": "Internal Server Error",
}
ACCESS_5XX = re.compile(r'^\S+ - - \[[^]]+\] "[A-Z]+ [^"]*" 5\d\d ')
# PostgreSQL's own log, read from where it was at the start of the run if this
# user may (the server is shared: other databases' errors count too).
POSTGRES_LOGS = Path("/var/log/postgresql")
# The processes whose CPU is read: "postgres" and "redis-server" are the
# machine's (a shared server's other clients count too).
SERVICES = ("postgres", "redis-server")


# ----- the study file -------------------------------------------------------------


def short_study(rounds: int, wait_seconds: int, bot_delay: float | None) -> str:
    """docs/examples/study.toml with matches of ``rounds`` rounds, a waiting-room
    time-out of ``wait_seconds`` (a lone participant gets a stand-in partner
    then) and, if given, the bots' think time; the same conditions, consent,
    quiz and questionnaire."""
    text = EXAMPLE.read_text()
    replacements = {
        'slug = "partner-trust-pilot"': f'slug = "{SLUG}"',
        "winning_goal = 100\n": "",  # rounds = N: the goals do not apply
        "losing_goal = -100\n": "",
        "matches = 1 ": f"rounds = {rounds} ",
        "timeout_seconds = 60": f"timeout_seconds = {wait_seconds}",
    }
    if bot_delay is not None:
        replacements["bot_delay = 1.5"] = f"bot_delay = {bot_delay:g}"
    for old, new in replacements.items():
        if old not in text:
            raise ValueError(f"{EXAMPLE}: {old!r} not found: the example changed")
        text = text.replace(old, new)
    return text


def plan_of(text: str) -> dict[str, Any]:
    """What a participant needs of the study file: the quiz's right options (by
    number), the questionnaire's items, the recruitment parameters' names."""
    data = tomllib.loads(text)
    questions = data.get("quiz", {}).get("questions", [])
    return {
        "slug": data["slug"],
        "quiz_answers": [q["options"].index(q["answer"]) for q in questions],
        "items": data.get("questionnaire", {}).get("items", []),
        "id_param": data["recruitment"]["id_param"],
        "study_param": data["recruitment"]["study_param"],
        "session_param": data["recruitment"]["session_param"],
    }


# ----- CPU, from /proc ------------------------------------------------------------


def _stat(pid: int) -> tuple[str, int, list[int]] | None:
    """(name, parent pid, [utime, stime, cutime, cstime] in ticks), None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    name = text[text.index("(") + 1 : text.rindex(")")]
    fields = text.rsplit(")", 1)[1].split()
    return name, int(fields[1]), [int(v) for v in fields[11:15]]


def _all_stats() -> dict[int, tuple[str, int, list[int]]]:
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None:
            found[int(entry)] = stat
    return found


def tree_cpu(pid: int, stats: dict[int, tuple[str, int, list[int]]]) -> tuple[float, float]:
    """(the process's own CPU seconds, its children's: those alive and those it
    has waited for) so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    if pid not in stats:
        return 0.0, 0.0
    utime, stime, cutime, cstime = stats[pid][2]
    children = cutime + cstime
    stack = [pid]
    while stack:
        parent = stack.pop()
        for child, (_, ppid, times) in stats.items():
            if ppid == parent:
                children += times[0] + times[1]
                stack.append(child)
    return (utime + stime) / ticks, children / ticks


def services_cpu(stats: dict[int, tuple[str, int, list[int]]]) -> dict[str, float]:
    """CPU seconds so far of every process named in SERVICES, with the children
    their root has waited for (PostgreSQL's ended backends)."""
    ticks = os.sysconf("SC_CLK_TCK")
    used = dict.fromkeys(SERVICES, 0.0)
    for _, (name, ppid, times) in stats.items():
        if name in used:
            used[name] += (times[0] + times[1]) / ticks
            if stats.get(ppid, ("",))[0] != name:  # the root: its reaped children too
                used[name] += (times[2] + times[3]) / ticks
    return used


# ----- the stack ------------------------------------------------------------------


@dataclass
class Stack:
    """A running stack: its processes by name, their logs, where to reach it."""

    name: str
    processes: int
    redis_url: str
    postgres_url: str
    tmp: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="spades-study-")))
    env: dict[str, str] = field(default_factory=dict)
    children: dict[str, subprocess.Popen[str]] = field(default_factory=dict)
    port: int = 0  # where participants go: Daphne's, or nginx's
    database_name: str | None = None
    redis_db_url: str | None = None

    def start(self) -> None:
        extra = {
            "DJANGO_DEBUG": "0",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(32),
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            # Every participant comes from 127.0.0.1: past the per-address limits.
            "SPADES_RATE_LIMITS": "0",
        }
        if self.name == "embedded":
            database_url = f"sqlite:///{self.tmp / 'study.sqlite3'}"
            self.env = stackprocs.stack_env(database_url, None, **extra)
        else:
            self.redis_db_url = stackprocs.pick_empty_redis_db(self.redis_url)
            self.database_name, database_url = stackprocs.create_scratch_database(
                self.postgres_url, "spades_study"
            )
            self.env = stackprocs.stack_env(database_url, self.redis_db_url, **extra)
        stackprocs.manage(self.env, "migrate", "--noinput", timeout=300)
        if self.name == "embedded":
            self.port = stackprocs.free_port()
            self.spawn("daphne 1", stackprocs.daphne_command(self.port))
            stackprocs.wait_for_port(self.port, self.children["daphne 1"], timeout=60)
            return
        ports = [stackprocs.free_port() for _ in range(self.processes)]
        for n, port in enumerate(ports, 1):
            self.spawn(f"daphne {n}", stackprocs.daphne_command(port, proxied=True))
        # As make stack: quick moves, searches and replay analyses on queues of their own.
        workers = {"bots": 2, "search": 1, "replays": 1}
        for queue, concurrency in workers.items():
            command = stackprocs.celery_worker_command(
                queue, concurrency, pool="prefork", name=f"{queue}@%h"
            )
            self.spawn(f"worker {queue}", command)
        self.spawn("beat", stackprocs.celery_beat_command(str(self.tmp / "celerybeat-schedule")))
        self.port = stackprocs.free_port()
        config = proxy.nginx_config(self.port, ports, self.tmp / "static", self.tmp / "nginx")
        self.spawn("nginx", proxy.nginx_command(config))
        for n, port in enumerate(ports, 1):
            stackprocs.wait_for_port(port, self.children[f"daphne {n}"], timeout=60)
        for queue in workers:
            stackprocs.wait_for_text(
                self.log(f"worker {queue}"), "ready.", self.children[f"worker {queue}"], 90
            )
        stackprocs.wait_for_port(self.port, self.children["nginx"], timeout=20)

    def log(self, name: str) -> Path:
        return self.tmp / f"{name.replace(' ', '-')}.log"

    def spawn(self, name: str, command: list[str]) -> None:
        with open(self.log(name), "w") as out:  # stdout and stderr both
            self.children[name] = stackprocs.start(command, self.env, out)

    def manage(self, *args: str, timeout: float = 300) -> str:
        return stackprocs.manage(self.env, *args, timeout=timeout)

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far: each process of the stack (its children apart:
        the embedded Daphne's analysis child, a worker's pool) and the services."""
        stats = _all_stats()
        used: dict[str, float] = {}
        for name, child in self.children.items():
            own, children = tree_cpu(child.pid, stats)
            used[name] = own
            if name.startswith("worker"):
                used[name] += children  # a prefork worker's work is its pool's
            elif name.startswith("daphne"):
                # The embedded default's replay analysis runs in a child of Daphne.
                used[f"{name} children"] = children
        if self.name == "redis":
            used.update({f"{k} (machine)": v for k, v in services_cpu(stats).items()})
        # The participants share the machine's cores with the servers.
        used["bench clients"] = tree_cpu(os.getpid(), stats)[0]  # its children are the stack
        return used

    def analysis_progress(self) -> dict[str, int]:
        """Rounds stored and rounds analysed so far (``game.replays``): whether the
        site's own work kept up with the launch."""
        code = (
            "from game.models import RoundRecordRow as R\n"
            "from game.replays.models import RoundAnalysis as A\n"
            "print(R.objects.count(), A.objects.count())\n"
        )
        stored, analysed = self.manage("shell", "-c", code).split()[-2:]
        return {"rounds_stored": int(stored), "rounds_analysed": int(analysed)}

    def backends(self) -> list[int] | None:
        """The pids of PostgreSQL's backends on the stack's database now (None: not
        PostgreSQL, or the server refused: the sampler must not add a connection
        when it is full)."""
        if self.database_name is None:
            return None
        import psycopg

        try:
            # From the admin database, as the scratch one was made: not counted.
            admin = stackprocs._psycopg_url(self.postgres_url)
            with psycopg.connect(admin, connect_timeout=2) as conn:
                rows = conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = %s", [self.database_name]
                ).fetchall()
        except psycopg.Error:
            return None
        return [int(row[0]) for row in rows]

    def exited(self) -> dict[str, int]:
        return {n: c.returncode for n, c in self.children.items() if c.poll() is not None}

    def scan_logs(self) -> dict[str, dict[str, int]]:
        """The lines with each sign in each process's log (those with any)."""
        found: dict[str, dict[str, int]] = {}
        for name in self.children:
            text = stackprocs.tail(self.log(name), chars=50_000_000)
            lines = text.splitlines()
            counts = {
                sign: sum(needle in line for line in lines) for sign, needle in LOG_SIGNS.items()
            }
            # Daphne's access log: what the server itself answered with a 5xx.
            counts["5xx in the access log"] = sum(bool(ACCESS_5XX.search(line)) for line in lines)
            if any(counts.values()):
                found[name] = {k: v for k, v in counts.items() if v}
        return found

    def postgres_log_sizes(self) -> dict[Path, int]:
        """The size of each readable PostgreSQL log now (where the run's lines start)."""
        if self.name != "redis" or not POSTGRES_LOGS.is_dir():
            return {}
        sizes = {}
        for path in POSTGRES_LOGS.glob("*.log"):
            if os.access(path, os.R_OK):
                sizes[path] = path.stat().st_size
        return sizes

    def scan_postgres_log(self, sizes: dict[Path, int]) -> dict[str, int] | None:
        """Each sign's count in the PostgreSQL log lines written since ``sizes``
        (None: no log readable)."""
        if not sizes:
            return None
        counts = dict.fromkeys(("deadlock detected", "too many clients"), 0)
        for path, start in sizes.items():
            with path.open("rb") as f:
                f.seek(start)
                text = f.read().decode(errors="replace")
            for sign in counts:
                counts[sign] += text.count(sign)
        return counts

    def close(self, keep: bool = False) -> None:
        for child in self.children.values():
            stackprocs.stop(child)
        if self.database_name is not None and not keep:
            stackprocs.drop_database(self.postgres_url, self.database_name)
        if self.redis_db_url is not None:
            stackprocs.flush_redis_db(self.redis_db_url)
        if not keep:
            shutil.rmtree(self.tmp, ignore_errors=True)


class ConnectionSampler(threading.Thread):
    """The stack's PostgreSQL backends once a second, on a thread of its own (a
    query on the clients' loop would hold every participant): how many, and
    their CPU. The machine's ``postgres`` processes count every database of a
    shared server; these are the study's own (less each ended backend's CPU
    after its last sample)."""

    def __init__(self, stack: Stack, every: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.stack = stack
        self.every = every
        self.samples: list[int] = []
        self.first: dict[int, int] = {}  # pid -> CPU ticks when first seen
        self.last: dict[int, int] = {}
        self.stopping = threading.Event()

    def sample(self) -> None:
        pids = self.stack.backends()
        if pids is None:
            return
        self.samples.append(len(pids))
        for pid in pids:
            if (stat := _stat(pid)) is None:
                continue
            ticks = stat[2][0] + stat[2][1]
            # A backend there at the start counts from then; a later one from its birth.
            self.first.setdefault(pid, ticks if len(self.samples) == 1 else 0)
            self.last[pid] = ticks

    def run(self) -> None:
        self.sample()
        while not self.stopping.wait(self.every):
            self.sample()

    def stop(self) -> dict[str, float] | None:
        self.stopping.set()
        self.join(timeout=5)
        if not self.samples:
            return None
        ticks = sum(self.last[pid] - self.first[pid] for pid in self.last)
        return {
            "peak": max(self.samples),
            "last": self.samples[-1],
            "samples": len(self.samples),
            "backends_seen": len(self.last),
            "backend_cpu_seconds": round(ticks / os.sysconf("SC_CLK_TCK"), 2),
        }


# ----- the export -------------------------------------------------------------------


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def check_export(out: Path, raw_ids: set[str], consented: int, completed: int) -> dict[str, Any]:
    """The export's files against what the participants did: one row per
    participant who consented, nobody at two tables, one payment row each."""
    people = _rows(out / "participants.csv")
    payments = _rows(out / "payments.csv")
    pseudonyms = Counter(row["pseudonym"] for row in people)
    tables_of: dict[str, set[str]] = {}
    for row in _rows(out / "actions.csv"):
        if row["player_kind"] == "participant":
            tables_of.setdefault(row["player"], set()).add(row["table"])
    for row in _rows(out / "rounds.csv"):
        for seat in "nesw":
            if row[f"player_kind_{seat}"] == "participant":
                tables_of.setdefault(row[f"player_{seat}"], set()).add(row["table"])
    paid = Counter(row["recruitment_id"] for row in payments)
    stages = Counter(row["stage"] for row in people)
    checks = {
        "participant_rows": len(people),
        "participants_consented": consented,
        "one_row_per_participant": len(people) == consented
        and all(n == 1 for n in pseudonyms.values()),
        "completed_rows": stages.get("completed", 0),
        "completed_by_clients": completed,
        "stages": dict(stages),
        "participants_at_tables": len(tables_of),
        "at_two_tables": sorted(p for p, tables in tables_of.items() if len(tables) > 1),
        "payment_rows": len(payments),
        "one_payment_row_each": len(payments) == consented
        and all(n == 1 for n in paid.values())
        and set(paid) <= raw_ids,
        "payments_completed": sum(row["completed"] == "true" for row in payments),
    }
    checks["ok"] = bool(
        checks["one_row_per_participant"]
        and not checks["at_two_tables"]
        and checks["one_payment_row_each"]
        and checks["completed_rows"] == completed
    )
    return checks
