"""The Celery app: bot moves and searches run in workers in production.

Start workers per queue, e.g. `celery -A spadesite worker -Q bots` for fast
moves and `celery -A spadesite worker -Q search` for UCT searches, so a long
search never delays a quick move. Research runs (the lab's tournaments and
league) have workers of their own: `celery -A lab.tournaments.celery_jobs
worker -Q research`.
"""

import functools
import logging
import os
import time
from typing import Any

from celery import Celery, bootsteps
from celery.signals import (
    beat_init,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_ready,
)
from celery.worker.consumer import Consumer
from kombu.transport import redis as kombu_redis

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spadesite.settings")

app = Celery("spadesite")
# Every CELERY_* Django setting configures Celery (CELERY_BROKER_URL -> broker_url).
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# A worker keeps its database connection from task to task. Celery's Django
# fixup closes it before and after every task, and opening one was a quarter
# of a worker's CPU per bot move (manage.py bench_workers); the server (ASGI)
# keeps Django's CONN_MAX_AGE = 0, as Django advises. A connection that failed
# (a database restart, a terminated backend) is closed after the task, whose
# retry then opens a new one (game/driver/tasks.py).
# Kept connections cannot be pooled (Django refuses both), and a worker needs
# no pool: it holds one connection per task slot, so its concurrency is its
# cap (docs/studies.md, "Sizing", counts them).
WORKER_CONN_MAX_AGE = 300
app.conf["CELERY_DB_REUSE_MAX"] = 10**9  # the fixup's closing off: ours below


@worker_init.connect
@worker_process_init.connect
def _keep_connections(**_: Any) -> None:
    from django.db import connections

    for alias in connections:
        settings_dict = connections[alias].settings_dict
        settings_dict["CONN_MAX_AGE"] = WORKER_CONN_MAX_AGE
        settings_dict.get("OPTIONS", {}).pop("pool", None)


@worker_process_init.connect
def _load_search_kernels(**_: Any) -> None:
    """A pool child loads the compiled search kernels at once, on a thread of
    its own: until they are in, a searching bot plays SRP's card."""
    from bots import solver_compiled

    solver_compiled.warm_up_in_background()


@task_prerun.connect
@task_postrun.connect
def _close_failed_or_old_connections(**_: Any) -> None:
    from django.db import close_old_connections

    close_old_connections()


@worker_ready.connect
def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    """/healthz reads each queue's freshest worker from these (spadesite/heartbeat.py)."""
    from game import redis_clients
    from spadesite import heartbeat

    if (shared := redis_clients.shared()) is None or sender is None:
        return
    queues = list(sender.app.amqp.queues.consume_from or ())
    heartbeat.start(shared, queues, str(sender.hostname))


@beat_init.connect
def _start_beat_heartbeat(sender: Any = None, **_: Any) -> None:
    """Beat's own heartbeat, as a queue named "beat": it alone sweeps for lost moves."""
    from game import redis_clients
    from spadesite import heartbeat

    if (shared := redis_clients.shared()) is not None:
        heartbeat.start(shared, [heartbeat.BEAT], "beat")


# Celery beat (`celery -A spadesite beat`, one per deployment) sweeps for
# tables whose bot move was lost (game/driver/sweeper.py).
app.conf.beat_schedule = {
    "sweep-overdue-turns": {"task": "game.driver.tasks.sweep_overdue", "schedule": 15.0},
    # Study participants whose page went quiet (studies/sweep.py).
    "sweep-studies": {"task": "studies.sweep", "schedule": 15.0},
}


class SweepAfterReconnect(bootsteps.StartStopStep):
    """A worker that connects to the broker again after losing it asks for a
    sweep of every table (game/driver/sweeper.py): a restarted Redis comes back
    without the queued bot moves, and the periodic sweep would find them only
    once they are well overdue (15 s past due, every 15 s)."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def start(self, parent: Any) -> None:
        if parent.restart_count > 0:  # 0 on the first connection
            parent.app.send_task(
                "game.driver.tasks.sweep_overdue", kwargs={"every": True}, queue="bots"
            )


app.steps["consumer"].add(SweepAfterReconnect)

# A worker that lost the broker tries again every second, for as long as it
# takes. kombu's default waits 2 s, then 4, 6, ... up to 30 s between tries, so
# a worker met a Redis back after a 3 s outage 2.9 s late (and after a minute's
# outage up to 30 s late), and the tables whose moves Redis lost waited for it
# (the sweep above). A try is one refused TCP connection: nothing while Redis is up.
RECONNECT_FIRST, RECONNECT_EVERY = 0.5, 1.0  # seconds


class QuickReconnect(Consumer):
    """Celery's consumer, connecting again at :data:`RECONNECT_EVERY` (Celery
    passes no intervals to kombu's ``ensure_connection``, whose defaults back off)."""

    def ensure_connected(self, conn: Any) -> Any:
        conn.ensure_connection = functools.partial(
            conn.ensure_connection,
            interval_start=RECONNECT_FIRST,
            interval_step=RECONNECT_EVERY - RECONNECT_FIRST,
            interval_max=RECONNECT_EVERY,
        )
        return super().ensure_connected(conn)


app.conf.worker_consumer = f"{__name__}:QuickReconnect"
app.conf.broker_connection_max_retries = None  # 100 tries would be 100 s now

# A list of (glob, route) pairs is matched in order, first match wins, so the
# narrower search pattern must come before the catch-all for bot tasks. The bot
# driver's tasks (game/driver/tasks.py) keep their former names' routes too, for
# the messages queued under them before a deploy. The
# lab's research games (tournaments, the league: lab/tournaments/celery_jobs.py,
# which the site never imports) have a queue of their own, so that a research
# run never delays a live table's move or search.
app.conf.task_routes = (
    [
        ("game.driver.tasks.search*", {"queue": "search"}),
        ("game.driver.tasks.*", {"queue": "bots"}),
        ("game.bot_turns.search*", {"queue": "search"}),
        ("game.bot_turns.*", {"queue": "bots"}),
        ("lab.research.*", {"queue": "research"}),
        ("game.replays.*", {"queue": "replays"}),
        ("studies.*", {"queue": "bots"}),
    ],
)


# kombu's Redis transport (5.7) raises AttributeError when its QoS touches a
# channel whose broker connection is gone (Redis stopped or restarted), and
# the worker dies of it ("Unrecoverable error"). Two such places:
# - giving back the messages a worker holds when the connection is lost;
# - acknowledging (or rejecting) a move that finished in a pool child while
#   the connection was lost: its ack waits on the event loop and runs after
#   the worker has connected again, on the old, closed channel.
# The messages are left to Redis: in its unacked set, given to a worker again
# after the visibility timeout (settings.py) and refused there as stale, or
# gone with a restarted Redis, whose lost moves the sweep schedules again.
log = logging.getLogger(__name__)


def _connection_gone(qos: Any) -> bool:
    channel = qos.channel
    return bool(channel.closed or channel.connection is None or channel.connection.client is None)


def _left_to_redis(method: Any, what: str) -> Any:
    """kombu's Redis ``QoS.method``, which on a channel whose connection is gone
    logs ``what`` (``{tag}``: the delivery tag) instead of raising AttributeError."""

    def left(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except AttributeError:
            if not _connection_gone(self):
                raise
            tag = args[0] if args else kwargs.get("delivery_tag")
            log.warning("broker connection gone: %s", what.format(tag=tag))
            self._delivered.clear()  # what the dead channel held is Redis's now
            return None

    return left


def _renewing(restore_visible: Any) -> Any:
    """kombu's Redis ``QoS.restore_visible`` (run every ``unacked_restore_interval``,
    settings.py), renewing first the lease of every message this worker holds.

    kombu gives a message back to the queue once it has been unacknowledged for
    the visibility timeout, timed from its delivery: so a dead worker's move
    waited the whole timeout, and a live worker's move held longer than it (a
    bot's pause, a turn timer) went to a second worker as well. Renewed here,
    a message goes back only when its worker stopped renewing (killed, or its
    loop stalled longer than the timeout less one interval), so the timeout can
    be short. ``xx``: a message acknowledged meanwhile, or lost with a
    restarted Redis, is not put back in the index."""

    def restore(self: Any, *args: Any, **kwargs: Any) -> Any:
        held = [tag for tag in self._delivered if tag not in self._dirty]
        if held:
            with self.channel.conn_or_acquire() as client:
                client.zadd(self.unacked_index_key, dict.fromkeys(held, time.time()), xx=True)
        return restore_visible(self, *args, **kwargs)

    return restore


_QoS = kombu_redis.QoS
_QoS.restore_visible = _renewing(_QoS.restore_visible)
_QoS.restore_unacked = _left_to_redis(_QoS.restore_unacked, "held messages left to Redis")
_QoS.ack = _left_to_redis(_QoS.ack, "message {tag} left unacknowledged to Redis")
_QoS.reject = _left_to_redis(_QoS.reject, "message {tag} left unrejected to Redis")
