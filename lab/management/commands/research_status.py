"""The research runs on a broker, as any machine sees them (docs/scaling.md).

A run's collector draws its progress bar on its own machine only; this reads
the run's keys in Redis (``lab.tournaments.celery_jobs.RunKeys``), so a
researcher on any machine with the checkout sees every run on the broker:
games done of the run's total, the games in play and their workers, the
collector, and with ``--follow`` the rate and the time left.
"""

from __future__ import annotations

import json
import time
from typing import Any

import redis
from django.core.management.base import BaseCommand, CommandError

from lab.tournaments.celery_jobs import RunKeys
from lab.tournaments.celery_run import broker_url
from lab.tournaments.tournament import TournamentError


def runs(client: redis.Redis) -> list[dict[str, Any]]:
    """Every run on the broker that a collector has started (finished ones for a while)."""
    found = []
    for key in sorted(client.scan_iter("research:*:size")):
        run = key.decode().split(":")[1]
        keys = RunKeys(run)
        about = json.loads(client.get(key) or "{}")
        workers = sorted({w.decode() for w in client.hvals(keys.started)})
        found.append({
            "run": run,
            "games": int(about.get("games", 0)),
            "done": int(client.scard(keys.done)),
            "in_play": int(client.hlen(keys.started)),
            "workers": workers,
            "collector": (client.get(keys.coordinator) or b"").decode(),
            "finished": bool(client.exists(keys.finished)),
        })  # fmt: skip
    return found


def line(run: dict[str, Any], rate: float | None) -> str:
    state = "finished" if run["finished"] else f"{run['done']} of {run['games']} games done"
    text = f"run {run['run']}: {state}, {run['in_play']} in play"
    if run["workers"]:
        text += f" ({', '.join(run['workers'])})"
    text += f"; collector: {run['collector'] or 'none (start the command again to resume)'}"
    if rate is not None and not run["finished"]:
        left = max(run["games"] - run["done"], 0)
        eta = f"{left / rate / 60:.1f} min left" if rate > 0 else "no game in the last poll"
        text += f"; {rate:.2f} games/s, {eta}"
    return text


class Command(BaseCommand):
    help = "Show the research runs on the broker (tournaments and the league with --celery)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--broker", help="the research broker's Redis URL (default REDIS_URL)")
        parser.add_argument(
            "--follow", type=float, default=0, metavar="SECONDS",
            help="poll every SECONDS until every run is finished, with rates and times left",
        )  # fmt: skip

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            client = redis.Redis.from_url(broker_url(opts["broker"]), socket_timeout=10)
            before = {r["run"]: (r["done"], time.monotonic()) for r in runs(client)}
        except (TournamentError, redis.RedisError) as e:
            raise CommandError(str(e)) from None
        if not before:
            self.stdout.write("no research run on this broker")
            return
        found = runs(client)
        for run in found:
            self.stdout.write(line(run, None))
        while opts["follow"] > 0 and not all(r["finished"] for r in found):
            time.sleep(opts["follow"])
            found = runs(client)
            for run in found:
                done, since = before.get(run["run"], (run["done"], time.monotonic()))
                rate = (run["done"] - done) / max(time.monotonic() - since, 1e-9)
                self.stdout.write(line(run, rate))
