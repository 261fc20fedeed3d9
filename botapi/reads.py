"""The bot socket's database reads, tried again when the database refused them
for a moment.

A bot learns of its seats, its tables' states and its token's fate only from
these reads, sent on no request of its own: a read refused once and not tried
again meant a ``seated`` frame never sent and a bot waiting forever. SQLite
refuses at once a read of a table another connection is writing in the same
shared cache ("database table is locked", the tests' in-memory database) and
after its busy time-out a write ("database is locked"); PostgreSQL reports a
serialization failure, a deadlock, a lock time-out or a connection lost in a
restart. Each of those is tried again, :data:`ATTEMPTS` times in all, after a
short, growing pause on the event loop (nothing else of the socket waits:
its frames are handled in order after it). Everything read here is a read,
or idempotent (a table's due move scheduled again is refused as stale), so a
second run is safe. Anything else, and the last refusal, goes to the caller.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from django.db import InterfaceError, OperationalError

from game.moves.db import db_call

log = logging.getLogger(__name__)
T = TypeVar("T")

ATTEMPTS = 5
PAUSES = (0.02, 0.05, 0.1, 0.2)  # seconds before the 2nd, 3rd... attempt
# SQLSTATEs of a refusal that passes: serialization_failure, deadlock_detected,
# lock_not_available, admin_shutdown, cannot_connect_now; class 08: the connection.
TRANSIENT_STATES = frozenset({"40001", "40P01", "55P03", "57P01", "57P03"})
TRANSIENT_SQLITE = ("database is locked", "database table is locked")


def is_transient(error: BaseException) -> bool:
    """A refusal that another try a moment later may not meet."""
    if not isinstance(error, OperationalError | InterfaceError | psycopg.OperationalError):
        return False
    for e in (error, error.__cause__):
        state = getattr(e, "sqlstate", None) or getattr(e, "pgcode", None)
        if state is not None and (state in TRANSIENT_STATES or str(state).startswith("08")):
            return True
    if any(s in str(error) for s in TRANSIENT_SQLITE):
        return True
    # A connection lost or refused (a restart): psycopg's OperationalError.
    return isinstance(error, InterfaceError) or isinstance(
        error.__cause__ or error, psycopg.OperationalError
    )


async def read(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` through ``db_call``, tried again on a transient refusal."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return await db_call(func)(*args)
        except Exception as e:
            if attempt == ATTEMPTS or not is_transient(e):
                raise
            log.info("bot socket: %s refused (%r), attempt %d again",
                     getattr(func, "__qualname__", func), e, attempt + 1)  # fmt: skip
            await asyncio.sleep(PAUSES[attempt - 1])
    raise AssertionError("unreachable")
