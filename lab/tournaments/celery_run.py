"""A research run's games sent to the Celery ``research`` queue and collected:
``manage.py tournament ... --celery`` and ``manage.py league ... --celery``.

The caller (the tournament or the league) keeps its games log and report as
with its process pool; this module only replaces the pool. It sends each
unit (a game, or a duplicate pair of games) as a task carrying this
machine's fingerprint (``lab.tournaments.identity``), takes the records the
workers hand over in Redis, and keeps each game once, whoever played it and
however often (``lab.tournaments.celery_jobs`` says how a game is leased and
marked done). It sends a game again when:

- its worker took it and died: its lease ran out before its record came;
- a worker refused it (other code or settings);
- the run stalled: games missing, none leased, the queue empty, no record
  for a while (messages lost with a restarted broker).

The run's key in Redis is a digest of its games (every tournament's
settings) and of the fingerprint, so a run stopped and started again, here
or on another machine with the same code and the log, finds the records the
workers handed over meanwhile. One process collects a run at a time.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from lab.tournaments.celery_jobs import KEY_TTL, QUEUE, TASK, RunKeys
from lab.tournaments.identity import identity
from lab.tournaments.tournament import ProgressBar, TournamentConfig, TournamentError

# A game's lease, renewed every third of it while the game is played. The
# compiled search kernels hold the GIL, so the renewing thread waits for the
# longest kernel call: a 13-card PIMC solve, two minutes at its p99
# (docs/bots.md). A shorter lease would only have live workers' games played
# twice (each counted once); a dead worker's games wait this long.
LEASE_SECONDS = 300.0
HOLD_SECONDS = 30  # a collector's hold on its run, renewed every 10 s at most
Unit = tuple[int, list[int]]  # (the tournament's index among the run's, its games)


@dataclass
class RunStats:
    """What the collecting process saw: for the summary's ``run`` and the bar."""

    workers: set[str] = field(default_factory=set)
    refused: dict[str, list[str]] = field(default_factory=dict)  # worker -> what differs
    cpu_seconds: list[float] = field(default_factory=list)  # per game handed over
    duplicates_ignored: int = 0
    sent_again: int = 0

    def note(self) -> str:
        text = f"{len(self.workers)} worker(s)"
        if self.refused:
            text += f", refused by {', '.join(sorted(self.refused))}"
        return text

    def to_dict(self) -> dict[str, Any]:
        cpu = sorted(self.cpu_seconds)

        def quantile(q: float) -> float | None:
            return round(cpu[min(len(cpu) - 1, int(q * len(cpu)))], 4) if cpu else None

        return {
            "workers_seen": sorted(self.workers),
            "refused_by": self.refused,
            "cpu_seconds_per_game": round(sum(cpu) / len(cpu), 4) if cpu else None,
            # the spread: a cluster's last games wait for the slowest
            "cpu_seconds_p50_p90_max": [quantile(0.5), quantile(0.9), quantile(1.0)],
            "duplicates_ignored": self.duplicates_ignored,
            "games_sent_again": self.sent_again,
        }


def broker_url(broker: str | None = None) -> str:
    """``broker``, or the Celery app's (REDIS_URL): a Redis URL, or a clear error."""
    from spadesite.celery import app

    url = broker or str(app.conf.broker_url or "")
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise TournamentError(
            "--celery needs the research broker, a Redis URL: give --broker or set "
            "REDIS_URL (e.g. redis://host:6379/0); the workers' REDIS_URL names the same"
        )
    return url


def run_id(configs: Sequence[TournamentConfig], fingerprint: dict[str, Any]) -> str:
    text = json.dumps({"configs": [c.to_dict() for c in configs], "identity": fingerprint},
                      sort_keys=True)  # fmt: skip
    return hashlib.sha256(text.encode()).hexdigest()[:20]


class CeleryRun:
    """Send a run's units and yield ``(config index, record)`` once per game."""

    def __init__(
        self,
        configs: Sequence[TournamentConfig],
        lease: float = LEASE_SECONDS,
        broker: str | None = None,
    ) -> None:
        from spadesite.celery import app

        if lease <= 0:
            raise TournamentError("the lease must be positive")
        self.configs = list(configs)
        self.lease = lease
        self.identity = identity()
        self.run = run_id(self.configs, self.identity)
        self.keys = RunKeys(self.run)
        self.broker = broker_url(broker)
        self.redis = redis.Redis.from_url(self.broker, socket_timeout=30)
        self.connection = app.connection_for_write(self.broker)
        self.me = f"{socket.gethostname()}:{os.getpid()}"
        self.stats = RunStats()
        self.outstanding: dict[str, Unit] = {}  # "ci/g" -> (ci, [g])
        self.unit_of: dict[str, list[str]] = {}  # "ci/g" -> the games sent with it
        self.got: list[tuple[int, dict[str, Any]]] = []
        self.bar: ProgressBar | None = None
        # Each game's worker and CPU seconds, a JSON line a game (the caller
        # names the file): what a cluster's run of these games will cost.
        self.timings: Path | None = None

    # ----- sending ---------------------------------------------------------------

    def _send(self, unit: Unit) -> None:
        from spadesite.celery import app

        index, games = unit
        payload = {"run": self.run, "identity": self.identity, "config_index": index,
                   "config": self.configs[index].to_dict(), "games": games,
                   "lease": self.lease}  # fmt: skip
        with app.amqp.Producer(self.connection) as producer:
            app.send_task(TASK, args=[payload], queue=QUEUE, producer=producer)
        self.last_send = time.monotonic()

    def _send_again(self, games: list[str]) -> None:
        by_config: dict[int, list[int]] = {}
        for key in games:
            if key in self.outstanding:
                index, (g,) = self.outstanding[key]
                by_config.setdefault(index, []).append(g)
        for index, gs in sorted(by_config.items()):
            for g in sorted(gs):
                self._send((index, [g]))
                self.stats.sent_again += 1

    # ----- collecting -------------------------------------------------------------

    def _take(self, raw: bytes) -> None:
        msg = json.loads(raw)
        worker = str(msg.get("worker", "?"))
        if "refused" in msg:
            self.stats.refused[worker] = list(msg["refused"])
            self._send_again([f"{msg['config_index']}/{g}" for g in msg["games"]])
            return
        self.stats.workers.add(worker)
        index, record = int(msg["config_index"]), msg["record"]
        key = f"{index}/{record['game']}"
        if key not in self.outstanding:
            self.stats.duplicates_ignored += 1
            return
        del self.outstanding[key]
        self.stats.cpu_seconds.append(float(msg["cpu"]))
        if self.timings is not None:
            config = self.configs[index]
            line = {"ns": config.ns, "ew": config.ew, "game": record["game"], "worker": worker,
                    "cpu_seconds": round(float(msg["cpu"]), 4)}  # fmt: skip
            with self.timings.open("a") as f:
                f.write(json.dumps(line) + "\n")
        self.got.append((index, record))
        self.last_progress = time.monotonic()

    def _drain(self, wait: float = 0.0) -> None:
        if wait > 0:
            item = self.redis.blpop([self.keys.results], timeout=wait)
            if item is None:
                return
            self._take(item[1])
        while (raw := self.redis.lpop(self.keys.results)) is not None:
            self._take(raw)  # type: ignore[arg-type]

    def _hold(self) -> None:
        """Be the run's one collector (a second would take records from the first)."""
        ttl = HOLD_SECONDS
        k = self.keys.coordinator
        if self.redis.set(k, self.me, nx=True, ex=ttl):
            return
        holder = self.redis.get(k)
        if holder is not None and holder.decode() == self.me:
            self.redis.expire(k, ttl)
            return
        raise TournamentError(
            f"run {self.run} is being collected by {holder.decode() if holder else '?'}; "
            f"stop that one first (or wait {ttl} s if it was killed)"
        )

    def _check(self) -> None:
        """Send again the games whose worker died, or all missing ones if the run stalled."""
        started = {k.decode(): v.decode() for k, v in self.redis.hgetall(self.keys.started).items()}
        self.stats.workers.update(started.values())
        taken = [k for k in self.outstanding if k in started]
        with self.redis.pipeline(transaction=False) as p:
            for k in taken:
                p.exists(self.keys.lease(k))
            alive = [bool(x) for x in p.execute()] if taken else []
        self._drain()  # a record handed over after the look at its lease is in the list
        lost = [k for k, a in zip(taken, alive, strict=True) if not a and k in self.outstanding]
        if lost:
            self.redis.hdel(self.keys.started, *lost)
            # The games sent with a lost one and not started died with its worker too.
            mates = {m for k in lost for m in self.unit_of.get(k, []) if m not in started}
            self._send_again(sorted(set(lost) | mates))
        now = time.monotonic()
        quiet = 3 * self.lease
        if (self.outstanding and not any(alive) and not self.redis.llen(QUEUE)
                and now - self.last_progress > quiet and now - self.last_send > quiet):  # fmt: skip
            self.redis.srem(self.keys.done, *self.outstanding)
            self._send_again(list(self.outstanding))

    def play(
        self, units: Sequence[Unit], bar: ProgressBar | None = None
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """Send ``units`` and yield each game's record once, as the workers hand them over."""
        self._hold()
        self.bar = bar
        self.last_progress = self.last_send = time.monotonic()
        for index, games in units:
            for g in games:
                self.outstanding[f"{index}/{g}"] = (index, [g])
                self.unit_of[f"{index}/{g}"] = [f"{index}/{x}" for x in games]
        # What any machine's research_status shows of this run: its size and collector.
        about = {"games": sum(c.games for c in self.configs), "configs": len(self.configs),
                 "collector": self.me, "left": sum(len(g) for _, g in units)}  # fmt: skip
        self.redis.set(self.keys.size, json.dumps(about), ex=KEY_TTL)
        try:
            self.redis.delete(self.keys.finished)  # the same games played again
            self._drain()  # handed over while no one collected: resume from them
            # Done in Redis but not in the caller's log (a collector killed between
            # taking a record and logging it): to be played again.
            if self.outstanding:
                self.redis.srem(self.keys.done, *self.outstanding)
            for index, games in units:
                left = [g for g in games if f"{index}/{g}" in self.outstanding]
                if left:
                    self._send((index, left))
            last_check = time.monotonic()
            while self.outstanding or self.got:
                while self.got:
                    yield self.got.pop(0)
                if not self.outstanding:
                    break
                self._drain(wait=1.0)
                if bar is not None:
                    bar.note = self.stats.note()
                if time.monotonic() - last_check >= min(self.lease / 2, HOLD_SECONDS / 3):
                    self._hold()
                    self._check()
                    last_check = time.monotonic()
            # Finished: every record is the caller's; copies of its tasks still
            # queued are skipped by the workers.
            self.redis.delete(*self.keys.all())
            self.redis.set(self.keys.finished, 1, ex=KEY_TTL)
        finally:
            if self.redis.get(self.keys.coordinator) == self.me.encode():
                self.redis.delete(self.keys.coordinator)
            self.redis.close()
            self.connection.release()


# ----- the commands' options ------------------------------------------------------


def add_celery_arguments(parser: Any) -> None:
    """``--celery``, ``--lease`` and ``--broker`` (the tournament's and the league's commands)."""
    parser.add_argument(
        "--celery",
        action="store_true",
        help="send the games to the Celery 'research' queue (workers: celery -A "
        "lab.tournaments.celery_jobs worker -Q research) instead of --workers processes",
    )
    parser.add_argument(
        "--lease",
        type=float,
        default=None,
        help="with --celery: seconds a dead worker's game waits before it is sent again "
        "(default 300)",
    )
    parser.add_argument(
        "--broker",
        help="with --celery: the research broker's Redis URL (default: REDIS_URL); "
        "the workers' REDIS_URL must name the same",
    )


def remote_from_options(
    opts: dict[str, Any],
) -> Callable[[list[TournamentConfig]], CeleryRun] | None:
    """With ``--celery``: what makes the run of a tournament's or the league's games."""
    if not opts.get("celery"):
        return None
    lease, broker = opts.get("lease") or LEASE_SECONDS, opts.get("broker")
    return lambda configs: CeleryRun(configs, lease, broker)
