"""SQLite's log checkpoints off the event loop (game/moves/sqlite_wal.py)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.db.backends.signals import connection_created

from game import builder
from game.moves import sqlite_wal


def wal_connection(path: Path) -> sqlite3.Connection:
    raw = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    raw.execute("PRAGMA journal_mode=WAL")
    raw.execute("PRAGMA synchronous=NORMAL")
    return raw


def django_like(raw: sqlite3.Connection, vendor: str = "sqlite") -> SimpleNamespace:
    """What ``connection_created`` hands its receivers: Django's wrapper."""
    return SimpleNamespace(vendor=vendor, connection=raw)


def autocheckpoint(raw: sqlite3.Connection) -> int:
    return int(raw.execute("PRAGMA wal_autocheckpoint").fetchone()[0])


def test_the_app_listens_for_new_connections() -> None:
    # Django keys a receiver connected with a dispatch_uid by that uid.
    assert any(entry[0][0] == "spades-sqlite-wal" for entry in connection_created.receivers)


def test_a_loop_connection_hands_its_checkpoints_to_the_thread(tmp_path: Path) -> None:
    path = tmp_path / "play.sqlite3"
    raw = wal_connection(path)
    raw.execute("CREATE TABLE moves (id INTEGER PRIMARY KEY, payload TEXT)")

    async def connect_on_the_loop() -> None:
        sqlite_wal.on_connection_created(None, django_like(raw))

    asyncio.run(connect_on_the_loop())
    assert autocheckpoint(raw) == 0
    checkpointer = sqlite_wal.checkpointer_for(str(path))
    assert checkpointer.is_alive()

    # Past SQLite's own threshold (1,000 pages): this connection copies nothing back.
    payload = "x" * 3000
    for _ in range(1500):
        raw.execute("INSERT INTO moves (payload) VALUES (?)", (payload,))
    before = checkpointer.checkpoints
    checkpointer.wake.set()
    deadline = time.monotonic() + 10
    while checkpointer.checkpoints == before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert checkpointer.checkpoints > before
    # Copied back: a passive checkpoint now finds every page of the log done.
    busy, pages, copied = raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    assert (busy, pages == copied) == (0, True)
    assert raw.execute("SELECT count(*) FROM moves").fetchone()[0] == 1500
    raw.close()


def test_connections_off_the_loop_keep_sqlites_own_checkpoints(tmp_path: Path) -> None:
    raw = wal_connection(tmp_path / "command.sqlite3")
    sqlite_wal.on_connection_created(None, django_like(raw))
    assert autocheckpoint(raw) == 1000
    raw.close()


@pytest.mark.parametrize("vendor", ["postgresql", "sqlite"])
def test_other_databases_and_in_memory_ones_are_left_alone(vendor: str) -> None:
    raw = sqlite3.connect(":memory:", isolation_level=None)

    async def connect_on_the_loop() -> None:
        builder.on_new_connection(None, django_like(raw, vendor))

    asyncio.run(connect_on_the_loop())
    assert autocheckpoint(raw) == 1000
    raw.close()


def test_a_failing_checkpoint_is_logged_and_tried_again(tmp_path: Path, caplog) -> None:
    missing = tmp_path / "gone" / "play.sqlite3"  # no such directory: cannot open
    checkpointer = sqlite_wal.Checkpointer(str(missing))
    checkpointer.start()
    deadline = time.monotonic() + 10
    while "checkpoint" not in caplog.text and time.monotonic() < deadline:
        checkpointer.wake.set()
        time.sleep(0.05)
    assert "SQLite checkpoint of" in caplog.text
    assert checkpointer.is_alive()
    # The file appears: the next pass opens it and goes on.
    missing.parent.mkdir()
    raw = wal_connection(missing)
    raw.execute("PRAGMA wal_autocheckpoint=0")
    raw.execute("CREATE TABLE t (x)")
    raw.execute("INSERT INTO t VALUES (1)")
    before = checkpointer.checkpoints
    deadline = time.monotonic() + 10
    while checkpointer.checkpoints == before and time.monotonic() < deadline:
        checkpointer.wake.set()
        time.sleep(0.05)
    assert checkpointer.checkpoints > before
    raw.close()


def test_under_writes_one_after_another_the_log_is_kept_short(tmp_path: Path, monkeypatch) -> None:
    """A passive checkpoint never lets a busy writer start the log over: past
    LOG_LIMIT_PAGES the thread truncates it."""
    monkeypatch.setattr(sqlite_wal, "LOG_LIMIT_PAGES", 100)
    monkeypatch.setattr(sqlite_wal, "BUSY_EVERY_SECONDS", 0.02)
    path = tmp_path / "busy.sqlite3"
    raw = wal_connection(path)
    raw.execute("PRAGMA wal_autocheckpoint=0")  # as the loop's connection
    raw.execute("CREATE TABLE moves (payload TEXT)")
    checkpointer = sqlite_wal.Checkpointer(str(path))
    checkpointer.start()
    wal = Path(f"{path}-wal")
    payload = "x" * 3000
    written = 0
    deadline = time.monotonic() + 20
    while (checkpointer.truncations < 3 or written < 3000) and time.monotonic() < deadline:
        raw.execute("INSERT INTO moves VALUES (?)", (payload,))  # about a page each
        written += 1
    assert checkpointer.truncations >= 3
    # Without the truncation the log would hold every page written (12 MB and more).
    # The writes may have stopped just before the thread's next pass (a busy
    # machine schedules it late): give it that pass.
    deadline = time.monotonic() + 5
    while wal.stat().st_size >= written * 4096 / 4 and time.monotonic() < deadline:
        checkpointer.wake.set()
        time.sleep(0.05)
    assert wal.stat().st_size < written * 4096 / 4
    assert raw.execute("SELECT count(*) FROM moves").fetchone()[0] == written
    raw.close()
