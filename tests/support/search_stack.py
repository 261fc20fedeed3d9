"""The production stack for the search queue's tests: a scratch PostgreSQL
database, an empty Redis database, a Celery worker for the ``bots`` queue and
a prefork worker for the ``search`` queue (where the time limits apply), as
``lab/stack/run.py`` runs them; and a table of bots started on it."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from subprocess import Popen

from bots.solver_compiled import KERNELS_READY
from game.engine import Rules
from lab.stack import stackprocs
from tests.support import services


@dataclass
class SearchStack:
    database_url: str
    env: dict[str, str]
    logs: Path
    search_worker: Popen[str]

    def logs_tail(self) -> str:
        return "\n".join(
            f"--- {path.name}:\n{stackprocs.tail(path, 2000)}"
            for path in sorted(self.logs.glob("*.log"))
        )

    def log_text(self) -> str:
        return "\n".join(path.read_text() for path in sorted(self.logs.glob("*.log")))

    def start_bot_table(self, rules: Rules, bots: Sequence[str]) -> int:
        """A table with ``bots`` at seats 0-3, started; its pk."""
        code = (
            "import json\n"
            "from game import seating\n"
            "from game.engine import Rules\n"
            f"t = seating.create_table(rules=Rules.from_dict({rules.to_dict()!r}),"
            " stand_in_bots=False)\n"
            f"for p, name in enumerate({list(bots)!r}):\n"
            "    seating.add_bot(t, p, name)\n"
            "seating.start_table(t.pk)\n"
            "print(json.dumps({'pk': t.pk}))\n"
        )
        out = stackprocs.manage(self.env, "shell", "-c", code)
        return int(json.loads(out.strip().splitlines()[-1])["pk"])


@contextmanager
def running_search_stack(prefix: str, budget: float) -> Iterator[SearchStack]:
    """The stack with a live bot budget of ``budget`` seconds and no pacing
    delay, its search worker's compiled kernels loaded (as a deployment waits
    for them: compiled on a fresh clone, from numba's cache after); everything
    stopped and dropped on the way out."""
    admin_url = services.postgres_url()
    redis_url = stackprocs.pick_empty_redis_db(services.redis_url())
    name, database_url = stackprocs.create_scratch_database(admin_url, prefix)
    processes = []
    with tempfile.TemporaryDirectory(prefix=f"{prefix}-") as tmp:
        logs = Path(tmp)
        env = stackprocs.stack_env(
            database_url, redis_url, SPADES_BOT_DELAY="0", SPADES_BOT_BUDGET=str(budget)
        )
        try:
            stackprocs.manage(env, "migrate", "--noinput")
            with open(logs / "bots.log", "w") as bots_out, open(logs / "search.log", "w") as out:
                bots_worker = stackprocs.start(
                    stackprocs.celery_worker_command("bots", concurrency=2), env, bots_out
                )
                processes.append(bots_worker)
                search_worker = stackprocs.start(
                    stackprocs.celery_worker_command("search", concurrency=1, pool="prefork"),
                    env,
                    out,
                )
                processes.append(search_worker)
                stackprocs.wait_for_text(logs / "bots.log", "ready.", bots_worker, timeout=60)
                stackprocs.wait_for_text(logs / "search.log", "ready.", search_worker, timeout=60)
                stackprocs.wait_for_text(
                    logs / "search.log", KERNELS_READY, search_worker, timeout=180
                )
                yield SearchStack(database_url, env, logs, search_worker)
        finally:
            for process in processes:
                stackprocs.stop(process)
            stackprocs.drop_database(admin_url, name)
            stackprocs.flush_redis_db(redis_url)
