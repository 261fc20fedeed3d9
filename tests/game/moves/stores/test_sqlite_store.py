"""A move's transaction on the SQLite connection itself (game/sqlite.py)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Generator
from typing import Any

import pytest
from django.db import OperationalError, connection, transaction

from game import master
from game.engine import action_to_dict, view_for
from game.errors import IllegalMove, StaleVersion
from game.models import Action, Table
from game.moves import matches
from game.moves.stores import sqlite
from game.sql.statements import Query, no_value
from tests.support.helpers import make_table
from tests.support.inline import InlineScheduler

pytestmark = pytest.mark.django_db(transaction=True)

SCRATCH = 'CREATE TABLE IF NOT EXISTS "scratch" ("x" integer)'


def count_scratch(rowcount: int, fetched: list[tuple[Any, ...]]) -> int:
    return int(fetched[0][0])


def scratch_steps(then: str) -> Generator[Query, Any, int | None]:
    """A write, then: ``commit`` (a value), ``decline`` (None) or ``fail``."""
    yield Query('INSERT INTO "scratch" ("x") VALUES (%s)', [7], no_value)
    if then == "fail":
        yield Query('SELECT "nope" FROM "no_such_table"', [], no_value)
    counted = yield Query('SELECT count(*) FROM "scratch" WHERE "x" = %s', [7], count_scratch)
    return counted if then == "commit" else None


def scratch_rows() -> int:
    with connection.cursor() as cursor:
        cursor.execute('SELECT count(*) FROM "scratch"')
        return int(cursor.fetchone()[0])


@pytest.fixture
def scratch() -> None:
    with connection.cursor() as cursor:
        cursor.execute(SCRATCH)
        cursor.execute('DELETE FROM "scratch"')


def test_committed_when_the_steps_return_a_value(scratch: None) -> None:
    assert sqlite.run_sqlite_transaction(scratch_steps("commit")) == 1
    assert scratch_rows() == 1
    assert not connection.connection.in_transaction


def test_rolled_back_when_the_steps_decline(scratch: None) -> None:
    assert sqlite.run_sqlite_transaction(scratch_steps("decline")) is None
    assert scratch_rows() == 0
    assert not connection.connection.in_transaction


def test_a_failing_statement_is_djangos_error_and_undoes_the_rest(scratch: None) -> None:
    with pytest.raises(OperationalError, match="no_such_table"):
        sqlite.run_sqlite_transaction(scratch_steps("fail"))
    assert scratch_rows() == 0
    assert not connection.connection.in_transaction


def test_placeholders_in_sqlites_style() -> None:
    assert sqlite._qmark("SELECT %s, '100%%' WHERE x = %s") == "SELECT ?, '100%' WHERE x = ?"


def test_a_refused_move_changes_nothing(live: InlineScheduler) -> None:
    table = make_table("HHHH")
    match = matches.load_match(table)
    seat = match.round.to_act
    master.submit(table.pk, seat, view_for(match, seat).legal_actions[0], table.version)
    table.refresh_from_db()
    logged = Action.objects.filter(table=table).count()
    match = matches.load_match(table)
    to_act = match.round.to_act
    legal = view_for(match, to_act).legal_actions[0]
    with pytest.raises(IllegalMove):  # the seat after the one to act, refused in the step
        master.submit(table.pk, (to_act + 1) % 4, action_to_dict(legal), table.version)
    with pytest.raises(StaleVersion):
        master.submit(table.pk, to_act, legal, table.version - 1)
    assert Table.objects.get(pk=table.pk).version == table.version
    assert Action.objects.filter(table=table).count() == logged
    assert not connection.connection.in_transaction


def test_inside_a_callers_transaction_the_move_is_djangos(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = make_table("HHHH")
    match = matches.load_match(table)
    seat = match.round.to_act
    master.submit(table.pk, seat, view_for(match, seat).legal_actions[0], table.version)

    def not_here(steps: Any) -> None:
        raise AssertionError("a caller's transaction is open: Django's path")

    monkeypatch.setattr(sqlite, "run_sqlite_transaction", not_here)
    table.refresh_from_db()
    match = matches.load_match(table)
    seat = match.round.to_act
    with transaction.atomic():
        master.submit(table.pk, seat, view_for(match, seat).legal_actions[0], table.version)
    assert Table.objects.get(pk=table.pk).version == table.version + 1


# ----- never waiting for the write lock on the event loop ---------------------------


def file_connection(path: Any) -> sqlite3.Connection:
    raw = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=5)
    raw.execute("PRAGMA journal_mode=WAL")
    return raw


def test_a_busy_write_lock_is_refused_at_once_and_nothing_is_held(tmp_path: Any) -> None:
    path = tmp_path / "lock.sqlite3"
    mine, other = file_connection(path), file_connection(path)
    mine.execute("CREATE TABLE moves (x integer)")
    other.execute("BEGIN IMMEDIATE")  # another writer: the tally flush, a bot's move
    started = time.monotonic()
    with pytest.raises(sqlite.WriteLockBusy):
        sqlite.begin_without_waiting(mine)
    assert time.monotonic() - started < 0.5  # not SQLite's five seconds of waiting
    assert not mine.in_transaction
    assert mine.execute("PRAGMA busy_timeout").fetchone()[0] == 5000  # as it was
    other.execute("COMMIT")
    sqlite.begin_without_waiting(mine)
    assert mine.in_transaction
    mine.execute("INSERT INTO moves VALUES (1)")
    mine.execute("COMMIT")


def test_without_waiting_the_quick_move_commits_when_nobody_writes(scratch: None) -> None:
    assert sqlite.run_sqlite_transaction(scratch_steps("commit"), wait=False) == 1
    assert scratch_rows() == 1


async def test_a_move_refused_by_the_lock_yields_the_loop_and_tries_again() -> None:
    ticks = 0
    tries: list[bool] = []

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async def call(wait: bool) -> str:
        tries.append(wait)
        if len(tries) < 4:
            raise sqlite.WriteLockBusy
        return "moved"

    other = asyncio.create_task(ticker())
    try:
        assert await sqlite.move_when_free(call) == "moved"
    finally:
        other.cancel()
    assert tries == [False, False, False, False]
    assert ticks >= 3  # the other sockets' work went on between the tries


async def test_past_its_patience_a_move_waits_in_sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite, "PATIENCE", 0.02)
    tries: list[bool] = []

    async def call(wait: bool) -> str:
        tries.append(wait)
        if not wait:
            raise sqlite.WriteLockBusy
        return "moved"

    assert await sqlite.move_when_free(call) == "moved"
    assert tries[-1] is True and set(tries[:-1]) == {False}


def test_a_waiting_move_holds_the_write_lock_before_its_first_read(tmp_path: Any) -> None:
    # A deferred BEGIN would hold only a read snapshot here: the other
    # connection's commit would go through, and the move's first write then
    # fail at once with "database is locked" (WAL mode does not wait then).
    path = tmp_path / "lock.sqlite3"
    mine, other = file_connection(path), file_connection(path)
    mine.execute("CREATE TABLE moves (x integer)")
    other.execute("PRAGMA busy_timeout = 50")
    sqlite.begin_waiting(mine)
    assert mine.execute("SELECT count(*) FROM moves").fetchone() == (0,)  # the stand-in read
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        other.execute("INSERT INTO moves VALUES (2)")  # a bot's move, the tally flush
    mine.execute("INSERT INTO moves VALUES (1)")
    mine.execute("COMMIT")
    other.execute("INSERT INTO moves VALUES (2)")
    assert mine.execute("SELECT x FROM moves ORDER BY x").fetchall() == [(1,), (2,)]
