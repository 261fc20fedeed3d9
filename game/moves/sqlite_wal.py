"""SQLite's write-ahead log checkpoints, off the event loop (the embedded default).

In WAL mode a commit appends its pages to the log, and the commit that takes
the log past 1,000 pages also copies the log back into the database file and
syncs it: SQLite's automatic checkpoint, run by whichever connection commits.
On the embedded server that connection is the event loop's, where the
websockets' moves commit, so about once a second under load one player's
move took 5-9 ms instead of 0.2 while every socket of the process waited
(``bench_server --stacks embedded``: the slowest callback of each second,
and the p99 it set).

Here the loop's connection checkpoints nothing itself; a thread of the
process does it on a connection of its own, passively (it never blocks a
writer and never waits for a reader) and often enough that the log stays
small. Python's sqlite3 releases the GIL while SQLite works, so the loop
runs on meanwhile. Connections made off the loop (threads, commands, Celery
workers) keep SQLite's automatic checkpoints: they hold no loop up.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
from typing import Any

log = logging.getLogger(__name__)

# How often the thread checkpoints while the log has pages, and when it had
# none: at 200 moves a second the log grows by about 1,000 pages a second.
BUSY_EVERY_SECONDS = 0.25
IDLE_EVERY_SECONDS = 2.0
# A passive checkpoint copies the log back but does not start it over: the
# next writer does that, only if the copy had caught up with the log's end.
# Under writes one after another it never does, and the log grew without end
# (120 MB in 6,000 moves). Past this many pages the thread also truncates the
# log: that holds new writers back only while it copies what the passive
# pass just left (a few milliseconds, and only when the server is saturated).
LOG_LIMIT_PAGES = 4000

_lock = threading.Lock()
_checkpointers: dict[tuple[int, str], Checkpointer] = {}  # (pid, file) -> its thread


def on_connection_created(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created`` of a SQLite connection (``game.builder`` sends
    only those): hand an event loop's connection's checkpoints to the
    process's checkpointer thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return  # a thread or a command: SQLite's own checkpoints hold no loop up
    raw = connection.connection
    if raw.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        return  # an in-memory database (tests) has no log
    path = raw.execute("PRAGMA database_list").fetchone()[2]
    if not path:
        return
    checkpointer_for(path)
    raw.execute("PRAGMA wal_autocheckpoint=0")


def checkpointer_for(path: str) -> Checkpointer:
    """This process's checkpointer of the database file ``path`` (started if new
    or dead: a forked child inherits no threads)."""
    key = (os.getpid(), path)
    with _lock:
        found = _checkpointers.get(key)
        if found is None or not found.is_alive():
            found = _checkpointers[key] = Checkpointer(path)
            found.start()
        return found


class Checkpointer(threading.Thread):
    """Checkpoints one SQLite file's log, passively, for the life of the process."""

    def __init__(self, path: str) -> None:
        super().__init__(name="spades-sqlite-checkpoint", daemon=True)
        self.path = path
        self.checkpoints = 0  # passes that found pages in the log
        self.truncations = 0  # passes that found the log past LOG_LIMIT_PAGES
        self.wake = threading.Event()  # set: checkpoint now (tests)

    def run(self) -> None:
        conn: sqlite3.Connection | None = None
        pause = BUSY_EVERY_SECONDS
        while True:
            self.wake.wait(pause)
            self.wake.clear()
            try:
                if conn is None:
                    conn = sqlite3.connect(self.path, isolation_level=None, timeout=5)
                    conn.execute("PRAGMA synchronous=NORMAL")
                _busy, pages, _copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                if pages > LOG_LIMIT_PAGES:
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                    self.truncations += 1
            except sqlite3.Error as e:
                # The file went away or is locked for long: try again later,
                # on a new connection. The loop's log only grows meanwhile.
                log.warning("SQLite checkpoint of %s failed: %r", self.path, e)
                if conn is not None:
                    conn.close()
                    conn = None
                pause = IDLE_EVERY_SECONDS
                continue
            if pages > 0:
                self.checkpoints += 1
            pause = BUSY_EVERY_SECONDS if pages > 0 else IDLE_EVERY_SECONDS
