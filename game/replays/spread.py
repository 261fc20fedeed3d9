"""``manage.py analyse_rounds --celery``: stored rounds analysed by the
``replays`` workers of any number of machines, watched from the database.

The command sends the rounds to analyse in batches, each a task
(``game.replays.tasks.ROUNDS_TASK``) on the site's ``replays`` queue (``spadesite/celery.py``
routes ``game.replays.*`` there), and then only reads the database: a round
is done when its ``RoundAnalysis`` row exists, with its alternatives if they
are asked for (their worker may die between the two writes), whoever wrote it. Nothing of a
run lives anywhere else, so a run stopped (Ctrl-C, the machine lost) is
started again from any machine with the database: it sends what is not
analysed yet.

A batch is sent again when none of its rounds was analysed for ``timeout``
seconds while nothing was waiting in the queue (a batch still queued behind
others is not late): its worker died with it (a task is acknowledged when it
starts, so a killed worker's batch is gone from the broker). A live worker
that was only slow is harmless: each round is analysed when its turn comes
only if it has no analysis yet, and a second writer's analysis of a round is
dropped (``game.replays.tasks``), so a round is stored once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import redis
from celery import current_app
from django.db import close_old_connections

from .tasks import QUEUE, ROUNDS_TASK, to_analyse

BATCH = 20  # rounds a task: about 20 CPU seconds at the median (docs/replays.md)
TIMEOUT = 900.0  # a slow nil round takes minutes; a dead worker's batch waits this long
CHUNK = 1000  # rounds looked up in the database per query


class SpreadError(Exception):
    """A run that cannot start (no broker): a clear message for the command."""


def broker_url(broker: str | None) -> str:
    """``broker``, or the site's (REDIS_URL): a Redis URL, or a clear error."""
    url = broker or str(current_app.conf.broker_url or "")
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise SpreadError(
            "--celery needs the site's broker, a Redis URL: give --broker or set REDIS_URL "
            "(e.g. redis://host:6379/0), the one the replays workers use"
        )
    return url


@dataclass
class Batch:
    rounds: list[int]
    clock: float  # when it was sent, last progressed, or last waited in the queue


@dataclass
class Spread:
    """Send ``rounds`` in batches and wait until every one has its analysis."""

    rounds: Sequence[int]
    broker: str
    batch: int = BATCH
    timeout: float = TIMEOUT
    with_alternatives: bool = True
    progress: Callable[[int, int], None] | None = None
    sent_again: int = 0
    batches: list[Batch] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.batch < 1:
            raise SpreadError("--batch must be at least 1")
        if self.timeout <= 0:
            raise SpreadError("--timeout must be positive")

    def _send(self, batch: Batch) -> None:
        # a producer that declares the queue: a broker no worker has used yet keeps the batch
        with current_app.amqp.Producer(self.connection) as producer:
            current_app.send_task(ROUNDS_TASK, args=[batch.rounds, self.with_alternatives],
                                  queue=QUEUE, producer=producer)  # fmt: skip

    def left(self, rounds: list[int]) -> set[int]:
        """Those of ``rounds`` with no analysis yet (or none of its alternatives)."""
        left: set[int] = set()
        rows = to_analyse(self.with_alternatives)
        for i in range(0, len(rounds), CHUNK):
            chunk = rounds[i : i + CHUNK]
            left.update(rows.filter(pk__in=chunk).values_list("pk", flat=True))
        return left

    def run(self) -> int:
        """Send, watch, send again the lost batches; the number of rounds done."""
        total = len(self.rounds)
        queue = redis.Redis.from_url(self.broker, socket_timeout=30)
        self.connection = current_app.connection_for_write(self.broker)
        try:
            now = time.monotonic()
            size = self.batch
            self.batches = [Batch(list(self.rounds[i : i + size]), now)
                            for i in range(0, total, size)]  # fmt: skip
            for b in self.batches:
                self._send(b)
            while True:
                left = self.left([r for b in self.batches for r in b.rounds])
                if self.progress:
                    self.progress(total - len(left), total)
                if not left:
                    return total
                now = time.monotonic()
                waiting = bool(queue.llen(QUEUE))
                still = []
                for b in self.batches:
                    rest = [r for r in b.rounds if r in left]
                    if not rest:
                        continue
                    if waiting or len(rest) < len(b.rounds):
                        b.clock = now  # its turn has not come, or it moves
                    b.rounds = rest
                    if now - b.clock > self.timeout:
                        b.clock = now
                        self.sent_again += 1
                        self._send(b)
                    still.append(b)
                self.batches = still
                # a second between looks, longer on long runs (one query per CHUNK rounds)
                time.sleep(min(1.0 + len(left) / 20_000, 10.0, self.timeout / 3))
        finally:
            queue.close()
            self.connection.release()
            close_old_connections()
