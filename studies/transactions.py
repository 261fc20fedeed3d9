"""The studies' transactions: short, in one lock order, and retried on a conflict.

A study's launch is a crowd: hundreds of consents, polls and groupings in a
minute, on PostgreSQL from many threads and processes at once. Every
transaction of this package that takes a lock takes them in one order,

    1. the study's row (``Study``: the next assignment slot, consent only),
    2. a condition's row (``Condition``: its waiting room's grouping),
    3. participants' rows (``Participant``: a stage move; a grouping's, in
       the order they waited),
    4. the game's rows of a table the grouping makes (new rows only),

and never one the other way round; rows 1 and 2 are locked ``FOR NO KEY
UPDATE``, which leaves other transactions free to insert rows that refer to
them (a participant's insert takes a key-share lock on its study and
condition), and nothing here locks the study row in order to read it.
Should PostgreSQL still report a deadlock, a serialization failure or a lock
wait past :data:`LOCK_TIMEOUT` (a lock held by something outside this
order), :func:`retried` runs the whole transaction again after a short,
random pause: the participant never sees it, and a transaction rolled back
leaves nothing half-written (consent is stored whole or not at all).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import random
import time
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

from django.db import OperationalError, connection, transaction

from game.sql.connections import features

log = logging.getLogger(__name__)
P = ParamSpec("P")
T = TypeVar("T")

ATTEMPTS = 6
# A lock waited for longer than this is given up and the transaction retried:
# a request never sits on a connection behind a queue that no longer moves.
LOCK_TIMEOUT = "3s"
# SQLSTATEs worth a second try: deadlock_detected, serialization_failure,
# lock_not_available (the lock time-out).
RETRIED_STATES = frozenset({"40P01", "40001", "55P03"})


def is_conflict(error: BaseException) -> bool:
    """A transaction that failed only because another one was in its way."""
    cause = error.__cause__
    state = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
    if state in RETRIED_STATES:
        return True
    # SQLite: the write lock was not had within the busy time-out.
    return "database is locked" in str(error)


@contextlib.contextmanager
def atomic() -> Iterator[None]:
    """``transaction.atomic`` with the lock time-out on PostgreSQL."""
    with transaction.atomic():
        if features().row_locks:
            with connection.cursor() as cursor:
                cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        yield


def retried(func: Callable[P, T]) -> Callable[P, T]:
    """``func`` (which opens its own transaction) run again on a conflict, up to
    :data:`ATTEMPTS` times. Inside a caller's transaction it runs once: only
    the outermost transaction can be rolled back and tried again."""

    @functools.wraps(func)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        if connection.in_atomic_block:
            return func(*args, **kwargs)
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return func(*args, **kwargs)
            except OperationalError as error:
                if attempt == ATTEMPTS or not is_conflict(error):
                    raise
                log.info("%s: %s, attempt %d again", func.__qualname__, error, attempt + 1)
                time.sleep(random.uniform(0.005, 0.025) * attempt)
        raise AssertionError("unreachable")

    return call
