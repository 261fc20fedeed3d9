"""The research worker: tournament and league games as Celery tasks on the
``research`` queue, never the bots' or the searches' (docs/scaling.md,
"Research runs"). Start one per machine, against the run's broker:

    REDIS_URL=redis://broker:6379/0 celery -A lab.tournaments.celery_jobs worker \\
        -Q research --pool prefork -c $(nproc) -n research@%h

A task is a few games of one tournament (a duplicate pair); each game is
played from its own seed by ``play_game``, so which worker plays it, and in
what order, changes nothing. Faults, with the run's keys in Redis
(:class:`RunKeys`), collected by ``lab.tournaments.celery_run``:

- a game is *leased* while it is played (a key renewed by a thread, gone
  soon after its worker dies), and marked done in the same Redis transaction
  that hands its record over: a second delivery of the task (Redis gives an
  unacknowledged message to another worker after the broker's visibility
  timeout, a killed pool child's message comes back at once) skips the games
  that are done or leased by a live worker, and every task of a run already
  collected;
- the message is acknowledged only after its games (``acks_late``), so a
  worker killed with them loses nothing;
- a task whose sender's fingerprint (``lab.tournaments.identity``: commit,
  sources, weights, bot settings) differs from the worker's own is refused:
  the worker plays none of it, tells the run, and stops taking research tasks.

The site never imports this module; the queue's route is in spadesite/celery.py.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import redis
from celery.signals import celeryd_init, worker_process_init

from bots.base import Bot
from bots.registry import make_bot
from lab.tournaments.identity import differences, identity
from lab.tournaments.tournament import TournamentConfig, play_game
from spadesite.celery import _load_search_kernels, app

# A research worker plays no search against a clock (tournaments give searches
# fixed playouts or samples), so its children compile the search kernels when a
# game first needs them rather than all of them at their start.
worker_process_init.disconnect(_load_search_kernels)
# A game may take minutes. This worker renews the broker's lease of each task it
# holds every half second (spadesite/celery.py), so no one hands a task on while
# it lives; its own look at the others' held tasks waits an hour, not the site's
# 1.5 s (spadesite/settings.py), so that a research worker whose main process
# stalls on a busy machine does not have its games copied by the others (the
# copies would only be skipped, the games being leased, but pile up). A dead
# worker's games come back through the collector, which sends a game again once
# its lease has run out.
VISIBILITY_TIMEOUT = 3600


@celeryd_init.connect
def _long_visibility_timeout(conf: Any, **_: Any) -> None:
    """Before the worker connects (only in a worker process, not in a collector)."""
    conf.broker_transport_options = {
        **(conf.broker_transport_options or {}),
        "visibility_timeout": VISIBILITY_TIMEOUT,
    }


QUEUE = "research"
TASK = "lab.research.play_games"
KEY_TTL = 7 * 24 * 3600  # a run's keys outlive a stopped coordinator by a week

log = logging.getLogger(__name__)

# Take a game's lease if no one holds it, and note it in play, at once:
# KEYS lease, started; ARGV worker, lease ms, game, the keys' TTL.
TAKE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
  redis.call('EXPIRE', KEYS[2], ARGV[4])
  return 1
end
return 0
"""


class RunKeys:
    """A run's keys in Redis. ``game``: ``"{config index}/{game index}"``."""

    def __init__(self, run: str) -> None:
        self.prefix = f"research:{run}:"
        self.results = self.prefix + "results"  # list: records, refusals (JSON)
        self.done = self.prefix + "done"  # set: games whose record was handed over
        self.started = self.prefix + "started"  # hash: game in play -> the worker that took it
        self.coordinator = self.prefix + "coordinator"  # who collects the run now
        self.finished = self.prefix + "finished"  # set when every record was collected
        # the run's games and collector (research_status); kept, as "finished", past its end
        self.size = self.prefix + "size"

    def lease(self, game: str) -> str:
        return self.prefix + "lease:" + game

    def all(self) -> list[str]:
        return [self.results, self.done, self.started, self.coordinator]


_process: dict[str, Any] = {}


def _redis() -> redis.Redis:
    if _process.get("redis") is None:
        _process["redis"] = redis.Redis.from_url(app.conf.broker_url, socket_timeout=30)
    return _process["redis"]  # type: ignore[no-any-return]


def _bot(name: str) -> Bot:
    bots = _process.setdefault("bots", {})
    if name not in bots:
        bots[name] = make_bot(name)
    return bots[name]  # type: ignore[no-any-return]


@contextmanager
def _leased(r: redis.Redis, key: str, holder: str, seconds: float) -> Iterator[None]:
    """Keep the lease ``key`` alive while the body runs."""
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(seconds / 3):
            # The broker away: the record is handed over later, or the game replayed.
            with suppress(redis.RedisError):
                r.set(key, holder, xx=True, px=int(seconds * 1000))

    thread = threading.Thread(target=renew, name="research-lease", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def play_unit(payload: dict[str, Any], worker: str) -> dict[str, int]:
    """Play the payload's games not done or leased elsewhere; hand each record
    over to the run. What the task does, callable without Celery."""
    r = _redis()
    keys = RunKeys(payload["run"])
    if r.exists(keys.finished):  # a copy of a task of a run already collected
        return {"played": 0, "refused": 0}
    index, lease = payload["config_index"], float(payload["lease"])
    differ = differences(payload["identity"], identity())
    if differ:
        refusal = {"refused": differ, "worker": worker, "config_index": index,
                   "games": payload["games"]}  # fmt: skip
        r.rpush(keys.results, json.dumps(refusal))
        r.expire(keys.results, KEY_TTL)
        log.error("research task refused, its sender runs other code: %s", "; ".join(differ))
        return {"played": 0, "refused": len(payload["games"])}
    config = TournamentConfig(**payload["config"])
    played = 0
    for g in payload["games"]:
        game = f"{index}/{g}"
        if r.sismember(keys.done, game):
            continue
        took = r.eval(TAKE, 2, keys.lease(game), keys.started, worker, int(lease * 1000), game,
                      KEY_TTL)  # fmt: skip
        if not took:
            continue  # a live worker plays it now
        if r.sismember(keys.done, game):  # finished elsewhere since the look above
            r.delete(keys.lease(game))
            continue
        with _leased(r, keys.lease(game), worker, lease):
            cpu = time.process_time()
            record = play_game(config, g, _bot(config.ns), _bot(config.ew))
            cpu = time.process_time() - cpu
        result = {"config_index": index, "record": record, "worker": worker, "cpu": cpu}
        with r.pipeline() as p:  # MULTI: the record, done and the lease's end at once
            p.rpush(keys.results, json.dumps(result))
            p.sadd(keys.done, game)
            p.delete(keys.lease(game))
            p.hdel(keys.started, game)  # "started": the games in play (and the lost)
            p.expire(keys.results, KEY_TTL)
            p.expire(keys.done, KEY_TTL)
            p.execute()
        played += 1
    return {"played": played, "refused": 0}


@app.task(name=TASK, bind=True, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def play_games(self: Any, payload: dict[str, Any]) -> dict[str, int]:
    worker = self.request.hostname or socket.gethostname()
    done = play_unit(payload, worker)
    if done["refused"] and self.request.hostname:
        # Take no more research tasks: every one would be refused the same way.
        app.control.cancel_consumer(QUEUE, destination=[self.request.hostname])
    return done
