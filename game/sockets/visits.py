"""A process's table sockets' visits, written together in one statement.

A player's socket records a visit (``game.abandoned``: the table's
``last_human_at``) when it opens, when it closes, and at its first frame
after every ``abandoned.TOUCH_EVERY`` seconds. Those periodic visits were an
UPDATE each, on the event loop. Sockets that connected together (a server's
restart, every socket of ``bench_server``) stay in step, so once a minute
every socket's write came in the same second or two, and the moves of that
second queued behind them. Here the event loop gathers the visits for
:data:`WRITE_AFTER` seconds and writes them as one UPDATE of all their
tables. A process that dies first loses at most that much of a table's last
visit, against the hour after which a table counts as abandoned; a write
that fails is tried again with the next.
"""

from __future__ import annotations

import asyncio
import logging
import weakref

from game import abandoned
from game.moves.db import db_call, hold

log = logging.getLogger(__name__)

WRITE_AFTER = 5.0  # seconds the loop gathers visits before it writes them


class Visits:
    """One event loop's visits not yet written."""

    def __init__(self) -> None:
        self.tables: set[int] = set()
        self.scheduled = False

    def note(self, table_pk: int) -> None:
        self.tables.add(table_pk)
        if not self.scheduled:
            self.scheduled = True
            asyncio.get_running_loop().call_later(WRITE_AFTER, self.start_writing)

    def start_writing(self) -> None:
        self.scheduled = False
        hold(asyncio.ensure_future(self.write()))

    async def write(self) -> None:
        tables, self.tables = sorted(self.tables), set()
        if not tables:
            return
        try:
            await db_call(abandoned.touch_tables)(tables)
        except Exception as e:
            log.warning("writing the visits of %d table(s) failed: %r", len(tables), e)
            for table_pk in tables:  # with the next write
                self.note(table_pk)


_visits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Visits] = weakref.WeakKeyDictionary()


def note(table_pk: int) -> None:
    """On the event loop: a player is at this table now; written within
    :data:`WRITE_AFTER` seconds, with this loop's other visits."""
    loop = asyncio.get_running_loop()
    found = _visits.get(loop)
    if found is None:
        found = _visits[loop] = Visits()
    found.note(table_pk)
