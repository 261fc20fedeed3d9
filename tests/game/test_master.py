"""The table master is the one write path: built from the settings in one place.

Which database, bot runner and channel layer a process uses is decided by
``game/builder.py`` alone; every other module of the site takes what the
master was handed (docs/architecture.md, "The table master").
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from game import builder, master, switches
from game.driver import bot_turns
from game.driver.scheduling import CeleryScheduler, ThreadScheduler
from game.moves import stores
from game.sockets.events import ChannelAnnouncer
from game.sql import connections
from tests.support import ROOT
from tests.support.inline import InlineScheduler

SITE = ("game", "lobby", "spadesite", "studies")

# What decides a process's store, scheduler, a move's pace or where the shared
# state lives: read by the builder alone.
SWITCHES = {
    "SPADES_BOTS_IN_PROCESS", "SPADES_SCHEDULER", "SPADES_ASYNC_MOVES", "SPADES_DB_THREADS",
    "SPADES_REPLAY_ANALYSIS", "SPADES_BOT_WORKERS", "SPADES_BOT_DELAY", "SPADES_STAND_IN_BOT",
    "SPADES_BOT_BUDGET", "moves_on_loop", "calls_on_loop", "vendor", "ENGINE",
}  # fmt: skip
# Whether Redis is there: a switch where code names it (a variable, a function,
# an attribute), not in a string (an error message may say to set REDIS_URL).
REDIS_NAMES = {"REDIS_URL", "redis_url"}
ALLOWED = {
    "game/builder.py": "builds the master from the settings",
    "spadesite/settings.py": "defines the settings",
    "spadesite/config.py": "turns the environment into settings",
}
BUILDER = "game/builder.py"
# Every other setting (or environment value) the site reads, with its readers:
# the framework's, and plain configuration of one module, no switch of the stack.
OWN_CONFIGURATION = {
    "AUTH_USER_MODEL": {"game/models.py", "game/ratings/models.py", "lobby/models.py"},
    "SECRET_KEY_FALLBACKS": {"studies/models.py"},
    "SECRET_KEY": {"game/research/exports.py", "studies/models.py", "studies/playing.py"},
    "DEBUG": {"spadesite/asgi.py"},
    "DJANGO_SETTINGS_MODULE": {"spadesite/asgi.py", "spadesite/celery.py", "spadesite/wsgi.py"},
    "USE_TZ": {"game/moves/stores/postgres.py"},
    "SPADES_ASYNC_DB_CONNECTIONS": {"game/moves/stores/postgres.py"},
    "SPADES_RATE_LIMITS": {"game/sockets/limits.py"},
    "SPADES_LIMITS": {"game/sockets/limits.py"},
    "SPADES_MAX_SOCKETS": {"game/sockets/limits.py"},
    "SPADES_ABANDON_MINUTES": {"game/abandoned.py"},
    "SPADES_ANALYSIS_TABLE_BITS": {"game/replays/rounds.py"},
    "SPADES_RATING_BANDS": {"game/ratings/bands.py"},
    "SPADES_LEAGUE_FILE": {"game/research/league_table.py"},
    "SPADES_HEALTH_QUEUES": {"spadesite/health.py"},
    "SPADES_METRICS_ALLOW": {"spadesite/metrics.py"},
    "SPADES_METRICS_TOKEN": {"spadesite/metrics.py"},
    "SPADES_BOT_LEVELS": {"lobby/levels.py"},
    "SPADES_LEADERBOARD_MIN_MATCHES": {"lobby/player_pages.py"},
    "SPADES_CSP": {"spadesite/security.py"},
    # the bots' own knobs (tournaments, the lab), from the environment
    "SPADES_SIM_DEALS": {"bots/sim.py"},
    "SPADES_SIM_PLAYOUT": {"bots/sim.py"},
    "SPADES_UCT_BUDGET": {"bots/uct.py"},
    "SPADES_UCT_ITERATIONS": {"bots/uct.py"},
    "SPADES_PIMC_SAMPLES": {"bots/pimc.py"},
}


def site_modules(packages: tuple[str, ...] = SITE) -> list[Path]:
    found = []
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if "migrations" in parts or parts[:2] == ("game", "engine"):
                continue
            found.append(path)
    return found


def switches_read(path: Path) -> list[int]:
    """The lines where code names a switch (an attribute, a name, a function,
    an argument or a string such as ``getattr(settings, "...")``; docstrings and
    comments aside)."""
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
        elif isinstance(node, ast.FunctionDef | ast.arg):  # def redis_url(), f(redis_url)
            named = node.name if isinstance(node, ast.FunctionDef) else node.arg
            name = named if named in REDIS_NAMES else None
        quoted = isinstance(node, ast.Constant) and name in REDIS_NAMES
        if (name in SWITCHES or name in REDIS_NAMES) and not quoted:
            lines.add(node.lineno)
    return sorted(lines)


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def _key(node: ast.AST | None) -> str:
    """A read's key: the constant, or ``?`` for one computed (never allowed)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return "?"


def settings_read(source: str) -> set[str]:
    """Every setting and environment value ``source`` reads: ``settings.X``,
    ``getattr(settings, "X", ...)``, ``os.environ["X"]``, ``os.environ.get("X")``
    (any method of it) and ``os.getenv("X")``."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        named = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        if named and node.value.id == "settings" and node.attr.isupper():
            found.add(node.attr)
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            found.add(_key(node.slice))
        if not isinstance(node, ast.Call):
            continue
        func, first = node.func, node.args[0] if node.args else None
        if isinstance(func, ast.Name) and func.id == "getattr" and isinstance(first, ast.Name):
            if first.id == "settings":
                found.add(_key(node.args[1] if len(node.args) > 1 else None))
        elif isinstance(func, ast.Attribute) and (_is_environ(func.value) or func.attr == "getenv"):
            found.add(_key(first))
    return found


def settings_readers() -> dict[str, set[str]]:
    """Each setting the site and its bots read (the settings modules aside),
    with the modules that read it."""
    readers: dict[str, set[str]] = {}
    for path in site_modules((*SITE, "bots")):
        name = path.relative_to(ROOT).as_posix()
        if name in ALLOWED and name != BUILDER:
            continue
        for setting in settings_read(path.read_text()):
            readers.setdefault(setting, set()).add(name)
    return readers


def test_no_module_but_the_builder_branches_on_the_backend_or_the_runner() -> None:
    offenders = {}
    for path in site_modules():
        name = path.relative_to(ROOT).as_posix()
        hits = switches_read(path)
        if hits and name not in ALLOWED:
            offenders[name] = hits
    assert offenders == {}
    assert all((ROOT / name).exists() for name in ALLOWED)  # no stale exception


def test_every_setting_the_site_reads_is_known_with_its_readers() -> None:
    """The builder reads the switches, and hears when a test changes one of
    them (the master built again, or the switches handed in again); every
    other setting has the readers listed above, and a new one fails here."""
    readers = settings_readers()
    assert {k for k, who in readers.items() if BUILDER in who} == builder.READS | builder.HANDED_IN
    others = {k: who - {BUILDER} for k, who in readers.items() if who - {BUILDER}}
    assert others == OWN_CONFIGURATION


def switch_table() -> dict[str, set[str]]:
    """docs/architecture.md's "Where each switch lives": each setting it names,
    with the files its "read in" column names."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## Where each switch lives", 1)[1].split("\n## ", 1)[0]
    table: dict[str, set[str]] = {}
    for row in section.splitlines():
        cells = row.split("|")
        if not row.startswith("| `") or len(cells) < 5:
            continue
        files = set(re.findall(r"`([\w/]+\.py)`", cells[3]))
        for setting in re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[1]):
            table[setting] = files
    return table


def test_the_docs_switch_table_says_where_each_switch_is_read() -> None:
    table, readers = switch_table(), settings_readers()
    wrong = {k: readers.get(k) for k, files in table.items() if not readers.get(k, set()) <= files}
    assert wrong == {}
    assert all(readers.get(k) for k in table)  # no switch read nowhere
    assert table.keys() >= builder.READS | builder.HANDED_IN  # every switch in the table


def test_the_settings_reads_are_all_found() -> None:
    source = (
        "import os\nfrom django.conf import settings\n"
        "a = settings.ONE\nb = getattr(settings, 'TWO', 1)\nc = os.environ.get('THREE')\n"
        "d = os.environ['FOUR']\ne = os.getenv('FIVE')\nf = getattr(settings, name)\n"
        "g = settings.configure\nh = getattr(other, 'SIX')\n"
    )
    assert settings_read(source) == {"ONE", "TWO", "THREE", "FOUR", "FIVE", "?"}


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
    assert postgres == connections.Features(
        copies_rows=True, reads_side_by_side=True, row_locks=True
    )
    assert connections.features() == connections.Features()  # the tests' SQLite: the ORM alone
    databases = {"default": {**settings.DATABASES["default"]}}
    databases["default"]["ENGINE"] = "django.db.backends.postgresql"
    settings.DATABASES = databases  # told to the builder (setting_changed), not connected
    assert connections.features() == postgres


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
    settings.SPADES_SCHEDULER = "tests.support.inline.InlineScheduler"
    assert isinstance(builder.build_scheduler(), InlineScheduler)


def test_one_master_per_process_built_again_when_its_settings_change(settings: Any) -> None:
    settings.SPADES_BOTS_IN_PROCESS = True
    settings.SPADES_SCHEDULER = "tests.support.inline.InlineScheduler"
    first = master.get()
    assert master.get() is first
    assert isinstance(first.announcer, ChannelAnnouncer)
    settings.SPADES_BOT_DELAY = 0.3  # not one it is built from: handed in beside it
    assert master.get() is first
    assert switches.current.bot_delay == 0.3
    settings.SPADES_BOTS_IN_PROCESS = False
    second = master.get()
    assert second is not first and isinstance(second.scheduler, CeleryScheduler)
