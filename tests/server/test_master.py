"""The table master is the one write path: built from the settings in one place.

Which database, bot runner and channel layer a process uses is decided by
``game/builder.py`` alone; every other module of the site takes what the
master was handed (docs/architecture.md, "The table master").
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from game import builder, master
from game.driver import bot_turns
from game.driver.scheduling import CeleryScheduler, ThreadScheduler
from game.moves import db, stores
from game.sockets.events import ChannelAnnouncer
from tests.server.inline import InlineScheduler

ROOT = Path(__file__).resolve().parents[2]
SITE = ("game", "lobby", "spadesite", "studies")

# What decides a process's store or scheduler: read by the builder alone.
SWITCHES = {
    "SPADES_BOTS_IN_PROCESS", "SPADES_BOTS_INLINE", "SPADES_SCHEDULER", "SPADES_ASYNC_MOVES",
    "SPADES_DB_THREADS", "SPADES_REPLAY_ANALYSIS", "moves_on_loop", "calls_on_loop", "vendor",
    "ENGINE",
}  # fmt: skip
ALLOWED = {
    "game/builder.py": "builds the master from the settings",
    "spadesite/settings.py": "defines the settings",
    "spadesite/config.py": "turns the environment into settings",
}


def site_modules() -> list[Path]:
    found = []
    for package in SITE:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if "migrations" in parts or parts[:2] == ("game", "engine"):
                continue
            found.append(path)
    return found


def switches_read(path: Path) -> list[int]:
    """The lines where code names a switch (an attribute, a name or a string
    such as ``getattr(settings, "...")``; docstrings and comments aside)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.value) for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }  # fmt: skip
    lines = set()
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Constant) and id(node) not in docstrings:
            name = node.value if isinstance(node.value, str) else None
        if name in SWITCHES:
            lines.add(node.lineno)
    return sorted(lines)


def test_no_module_but_the_builder_branches_on_the_backend_or_the_runner() -> None:
    offenders = {}
    for path in site_modules():
        name = path.relative_to(ROOT).as_posix()
        hits = switches_read(path)
        if hits and name not in ALLOWED:
            offenders[name] = hits
    assert offenders == {}
    assert all((ROOT / name).exists() for name in ALLOWED)  # no stale exception


@pytest.mark.parametrize(
    ("database", "async_moves", "threads", "store"),
    [
        ("django.db.backends.sqlite3", True, 0, stores.SqliteLoopStore),
        ("django.db.backends.sqlite3", True, 1, stores.SqliteStore),
        ("django.db.backends.postgresql", True, 8, stores.PostgresStore),
        ("django.db.backends.postgresql", False, 8, stores.DjangoStore),
    ],
)
def test_the_store_follows_the_database(
    database: str, async_moves: bool, threads: int, store: type
) -> None:
    built = builder.store_for(database, async_moves=async_moves, db_threads=threads)
    assert type(built) is store


def test_the_tests_database_gets_sqlites_store() -> None:
    assert isinstance(builder.build_store(), stores.SqliteStore)


@pytest.mark.filterwarnings("ignore:Overriding setting DATABASES")
def test_the_research_code_is_handed_the_databases_features(settings: Any) -> None:
    postgres = builder.database_features("django.db.backends.postgresql")
    assert postgres == db.Features(copies_rows=True, reads_side_by_side=True)
    assert db.features() == db.Features()  # the tests' SQLite: the ORM alone
    databases = {"default": {**settings.DATABASES["default"]}}
    databases["default"]["ENGINE"] = "django.db.backends.postgresql"
    settings.DATABASES = databases  # told to the builder (setting_changed), not connected
    assert db.features() == postgres


def test_the_scheduler_follows_where_bots_run(settings: Any) -> None:
    settings.SPADES_BOTS_IN_PROCESS = False
    assert isinstance(builder.build_scheduler(), CeleryScheduler)
    settings.SPADES_BOTS_IN_PROCESS = True
    settings.SPADES_SCHEDULER = None
    threads = builder.build_scheduler()
    try:
        assert isinstance(threads, ThreadScheduler)
        assert threads.mover is bot_turns.take_turn
    finally:
        threads.shutdown()
    settings.SPADES_SCHEDULER = "tests.server.inline.InlineScheduler"
    assert isinstance(builder.build_scheduler(), InlineScheduler)


def test_one_master_per_process_built_again_when_its_settings_change(settings: Any) -> None:
    settings.SPADES_BOTS_IN_PROCESS = True
    settings.SPADES_SCHEDULER = "tests.server.inline.InlineScheduler"
    first = master.get()
    assert master.get() is first
    assert isinstance(first.announcer, ChannelAnnouncer)
    settings.SPADES_BOT_DELAY = 0.3  # not one it is built from
    assert master.get() is first
    settings.SPADES_BOTS_IN_PROCESS = False
    second = master.get()
    assert second is not first and isinstance(second.scheduler, CeleryScheduler)
