"""`make stack`: the production stack on this machine, in the foreground.

Runs migrations and collectstatic, then starts ``STACK_DAPHNES`` Daphne
processes behind nginx (``lab/stack/proxy.py``: websockets and HTTP balanced, no
sticky sessions, ``/static/`` served by nginx), three Celery workers (queue
``bots`` for quick moves, queue ``search`` for UCT searches, queue
``replays`` for the rounds' double-dummy analyses) and Celery beat
(the sweep for lost moves, ``game/driver/sweeper.py``) against PostgreSQL and
Redis, prints the URL, and stops every child on Ctrl-C (or when one of them
dies).

Environment (defaults are the local services):

- ``DATABASE_URL`` (``postgres://postgres@127.0.0.1:5432/spades``; the
  database is created when it does not exist yet)
- ``REDIS_URL`` (``redis://127.0.0.1:6379/0``)
- ``STACK_HOST`` / ``STACK_PORT`` (``127.0.0.1`` / ``8000``): where nginx listens
- ``STACK_DAPHNES`` (2): Daphne processes, each on a free port of 127.0.0.1
- ``STACK_BOT_WORKERS`` / ``STACK_SEARCH_WORKERS`` / ``STACK_REPLAY_WORKERS``
  (2 / 1 / 1): worker concurrency
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from lab.stack import proxy, stackprocs  # noqa: E402

STATIC_ROOT = Path(__file__).resolve().parents[2] / "staticfiles"

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/spades"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def ensure_postgres_database(url: str) -> None:
    """Create the database named in a postgres:// URL if it is missing."""
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    if not urlsplit(url).scheme.startswith("postgres") or not name:
        return
    admin = stackprocs.with_database_name(url, "postgres")
    with psycopg.connect(
        stackprocs._psycopg_url(admin), autocommit=True, connect_timeout=5
    ) as conn:
        found = conn.execute("select 1 from pg_database where datname = %s", [name]).fetchone()
        if found is None:
            print(f"creating database {name}")
            conn.execute(f'CREATE DATABASE "{name}"')


def main() -> int:
    database_url = os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL
    redis_url = os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL
    host = os.environ.get("STACK_HOST", "127.0.0.1")
    port = int(os.environ.get("STACK_PORT", "8000"))
    daphnes = max(1, int(os.environ.get("STACK_DAPHNES", "2")))
    env = stackprocs.stack_env(database_url, redis_url, DJANGO_DEBUG="0")
    env.setdefault("DJANGO_ALLOWED_HOSTS", f"{host},127.0.0.1,localhost")
    env.setdefault("DJANGO_SECRET_KEY", "make-stack-on-this-machine-only")

    ensure_postgres_database(database_url)
    print("applying migrations, collecting static files")
    stackprocs.manage(env, "migrate", "--noinput")
    stackprocs.manage(env, "collectstatic", "--noinput")
    workdir = Path(tempfile.mkdtemp(prefix="spades-stack-"))
    daphne_ports = [stackprocs.free_port() for _ in range(daphnes)]
    nginx_conf = proxy.nginx_config(port, daphne_ports, STATIC_ROOT, workdir / "nginx")
    if host != "127.0.0.1":
        text = nginx_conf.read_text().replace("listen 127.0.0.1:", f"listen {host}:")
        nginx_conf.write_text(text)

    commands = {
        **{
            f"daphne {n + 1}": stackprocs.daphne_command(p, proxied=True)
            for n, p in enumerate(daphne_ports)
        },
        "nginx": proxy.nginx_command(nginx_conf),
        "worker bots": stackprocs.celery_worker_command(
            "bots", int(os.environ.get("STACK_BOT_WORKERS", "2")), pool="prefork"
        ),
        "worker search": stackprocs.celery_worker_command(
            "search", int(os.environ.get("STACK_SEARCH_WORKERS", "1")), pool="prefork"
        ),
        # each finished round's double-dummy analysis (game/replays/), apart from the moves
        # and at the lowest priority: the site's own work yields to the people using it
        "worker replays": [
            "nice", "-n", "19",
            *stackprocs.celery_worker_command(
                "replays", int(os.environ.get("STACK_REPLAY_WORKERS", "1")), pool="prefork"
            ),
        ],
        # Lost moves (a worker killed mid-move, a broker restarted) are swept up.
        "beat": stackprocs.celery_beat_command(str(workdir / "celerybeat-schedule")),
    }
    children = {}
    stopping = False

    def request_stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    try:
        for name, command in commands.items():
            # Output goes to this terminal (stdout inherited).
            children[name] = stackprocs.start(command, env, log=sys.stdout)
        for n, daphne_port in enumerate(daphne_ports):
            stackprocs.wait_for_port(daphne_port, children[f"daphne {n + 1}"], timeout=30)
        stackprocs.wait_for_port(port, children["nginx"], timeout=10)
        print(f"Spades (production stack) is running at http://{host}:{port}/")
        print(f"  nginx in front of {daphnes} Daphne processes (ports {daphne_ports})")
        print(f"  DATABASE_URL={database_url}  REDIS_URL={redis_url}")
        print("  Ctrl-C stops nginx, Daphne and the workers.")
        sys.stdout.flush()
        while not stopping:
            dead = [name for name, p in children.items() if p.poll() is not None]
            if dead:
                print(f"{', '.join(dead)} exited: stopping the stack", file=sys.stderr)
                return 1
            time.sleep(0.5)
        return 0
    finally:
        print("stopping the stack")
        for process in children.values():
            stackprocs.stop(process)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
