"""The one place that reads the run-time switches: the table master built from the settings.

Which database (SQLite or PostgreSQL, moves on the event loop or not), which
bot runner (Celery, or this process's threads) and which channel layer are
decided here, once per process, and handed to ``game.master.TableMaster``;
so are the moves' switches (the bots' pace and budget, the stand-in bot:
``game.switches``) and where the small shared state lives (rate limits,
watchers, a move task's starts: Redis with ``REDIS_URL``, else memory). No
other module of the server reads or branches on them
(``tests/game/test_master.py`` parses every module for it). ``game.apps``
installs :func:`build` at start-up; the master is built again when one of
the settings it is built from changes, and the rest handed in again when
one of theirs does (the tests change them).

``SPADES_SCHEDULER`` (a dotted path, optional) names the scheduler class for
bots in-process instead of the thread pool, called with the bot driver's
mover: the tests' inline scheduler.
"""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.db.backends.signals import connection_created
from django.utils.module_loading import import_string

from game import master, redis_clients, switches
from game.driver import bot_turns, redelivery
from game.driver.scheduling import CeleryScheduler, ThreadScheduler
from game.moves import db, sqlite_wal, stores
from game.replays import child as replay_child
from game.sockets import limits, watchers
from game.sockets.events import ChannelAnnouncer
from game.sql import connections

# The settings the master is built from: a change builds it again.
READS = frozenset({
    "DATABASES", "SPADES_ASYNC_MOVES", "SPADES_DB_THREADS", "SPADES_BOTS_IN_PROCESS",
    "SPADES_BOT_WORKERS", "SPADES_SCHEDULER", "SPADES_REPLAY_ANALYSIS",
})  # fmt: skip
# The settings handed in beside the master: a change hands them in again, the
# master kept (a test's inline scheduler holds its timers).
HANDED_IN = frozenset({"SPADES_BOT_DELAY", "SPADES_STAND_IN_BOT", "SPADES_BOT_BUDGET", "REDIS_URL"})


def sqlite() -> bool:
    return bool(settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"))


def build_store() -> master.Store:
    return store_for(
        settings.DATABASES["default"]["ENGINE"],
        async_moves=bool(getattr(settings, "SPADES_ASYNC_MOVES", False)),
        db_threads=int(getattr(settings, "SPADES_DB_THREADS", 1)),
    )


def store_for(engine: str, *, async_moves: bool, db_threads: int) -> master.Store:
    """The store for a database ``engine`` (Django's backend path)."""
    if engine.endswith("sqlite3"):
        return stores.SqliteLoopStore() if db_threads == 0 else stores.SqliteStore()
    if "postgresql" in engine and async_moves:
        return stores.PostgresStore()
    return stores.DjangoStore()


def build_scheduler() -> master.Scheduler:
    analyse = bool(getattr(settings, "SPADES_REPLAY_ANALYSIS", True))
    if not getattr(settings, "SPADES_BOTS_IN_PROCESS", True):
        return CeleryScheduler(analyse)
    mover = bot_turns.take_turn
    chosen = getattr(settings, "SPADES_SCHEDULER", None)
    if chosen:
        return import_string(chosen)(mover)  # type: ignore[no-any-return]
    workers = int(getattr(settings, "SPADES_BOT_WORKERS", 4))
    return ThreadScheduler(mover, workers, replay_child.analyse if analyse else None)


def read_switches() -> switches.Switches:
    """The moves' switches from the settings; the bot budget from the
    environment where the settings give none (``SPADES_BOT_BUDGET``)."""
    defaults = switches.Switches()
    budget = getattr(settings, "SPADES_BOT_BUDGET", None)
    if budget is None:
        budget = os.environ.get("SPADES_BOT_BUDGET") or defaults.bot_budget
    return switches.Switches(
        bot_delay=float(getattr(settings, "SPADES_BOT_DELAY", defaults.bot_delay)),
        stand_in_bot=str(getattr(settings, "SPADES_STAND_IN_BOT", defaults.stand_in_bot)),
        bot_budget=float(budget),
    )


def share_state(url: str | None) -> None:
    """Rate limits, watchers and a move task's starts in the Redis at ``url``,
    shared by every process; without one in this process's memory, and no
    starts counted (the embedded default's moves run in its own process)."""
    redis_clients.use_url(url)
    if url:
        limits.use_counters(limits.RedisCounters())
        watchers.use_lists(watchers.RedisLists())
        redelivery.use_counter(redelivery.counted_in_redis)
    else:
        limits.use_counters(limits.MemoryCounters())
        watchers.use_lists(watchers.MemoryLists())
        redelivery.use_counter(redelivery.not_counted)


def hand_in() -> None:
    """What the modules below the master are handed: the moves' switches and
    the shared state's home."""
    switches.install(read_switches())
    share_state(getattr(settings, "REDIS_URL", None) or None)


def database_features(engine: str) -> connections.Features:
    """What the research code may use of a database ``engine`` beyond the ORM."""
    postgresql = "postgresql" in engine
    return connections.Features(
        copies_rows=postgresql, reads_side_by_side=postgresql, row_locks=postgresql
    )


def on_new_connection(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created``: SQLite's log checkpoints go to a thread of their own."""
    if connection.vendor == "sqlite":
        sqlite_wal.on_connection_created(sender, connection)


def build() -> master.TableMaster:
    return master.TableMaster(build_store(), ChannelAnnouncer(), build_scheduler())


def _settings_changed(setting: str, **kwargs: Any) -> None:
    if setting == "SPADES_DB_THREADS":
        db.use_threads(int(getattr(settings, "SPADES_DB_THREADS", 1)))
    if setting == "DATABASES":
        connections.use_features(database_features(settings.DATABASES["default"]["ENGINE"]))
    if setting in HANDED_IN:
        hand_in()
    if setting in READS:
        old = master.reset()
        shutdown = getattr(old.scheduler, "shutdown", None) if old is not None else None
        if shutdown is not None:
            shutdown()


def install() -> None:
    """At start-up (``game.apps``): this process's master, the switches
    and the shared state handed in, its database's features for the research
    code, and SQLite's log checkpoints on a thread of their own
    (``game.moves.sqlite_wal``)."""
    master.configure(build)
    hand_in()
    db.use_threads(int(getattr(settings, "SPADES_DB_THREADS", 1)))
    connections.use_features(database_features(settings.DATABASES["default"]["ENGINE"]))
    setting_changed.connect(_settings_changed, dispatch_uid="spades-master")
    if sqlite():
        connection_created.connect(on_new_connection, dispatch_uid="spades-sqlite-wal")
