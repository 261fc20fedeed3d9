"""A move task delivered again and again: the bot is passed over, then the task left.

A move task a worker died in is delivered again (acks_late and
task_reject_on_worker_lost, spadesite/settings.py). If the bot itself kills
the worker (a crash in compiled code, memory), that would go on for ever and
the table would wait. So each start of a move counts in Redis, per (table,
seat, version), for ``STARTS_TTL`` seconds: after ``MAX_STARTS`` starts the
plain bot (pure Python, no search) moves instead, and past twice that the
task is dropped with an error. A broken table then costs a few tries each
time its count expires and the sweeper (game.driver.sweeper) sends the move again,
not a loop of dying workers (game.driver.tasks.act).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from redis.exceptions import RedisError

from game import redis_clients

log = logging.getLogger(__name__)

MAX_STARTS = 3
PLAIN, DROP = "plain", "drop"  # what a move started too often gets
PLAIN_BOT = "RB+WRP"
STARTS_KEY = "spades:move-starts:{}:{}:{}"
STARTS_TTL = 600  # seconds


def counted_in_redis(key: str) -> int:
    """The production stack's count: one more start under ``key``, shared by
    every worker (0 with Redis gone: the move is made as usual)."""
    try:
        client = redis_clients.sync_client()
        starts = int(client.incr(key))
        client.expire(key, STARTS_TTL)
    except RedisError:
        return 0
    return starts


def not_counted(key: str) -> int:
    """The embedded default's: its moves run in its own process, and a crash
    there takes the server with it, so no count is kept."""
    return 0


count_start: Callable[[str], int] = not_counted


def use_counter(counter: Callable[[str], int]) -> None:
    """The builder's: how starts are counted from now on (from ``REDIS_URL``)."""
    global count_start
    count_start = counter


def move_starts(table_id: int, seat: int, version: int) -> int:
    """Count one more start of the move of ``seat`` at ``version``: how many
    there have been (0 where no count is kept)."""
    return count_start(STARTS_KEY.format(table_id, seat, version))


def verdict(table_id: int, seat: int, version: int) -> str | None:
    """Count this start of a move: None (the seat's bot moves), ``PLAIN`` or ``DROP``."""
    starts = move_starts(table_id, seat, version)
    if starts <= MAX_STARTS:
        return None
    where = f"move of table {table_id} seat {seat} at version {version}"
    if starts > 2 * MAX_STARTS:
        log.error("%s dropped after %d starts", where, starts)
        return DROP
    log.error("%s started %d times: %s moves", where, starts, PLAIN_BOT)
    return PLAIN
