"""The consumers' database calls keep their connection, and drop a broken one."""

from __future__ import annotations

import asyncio

import pytest
from django.db import connection

from game.models import Table
from game.moves import db, stores
from game.moves.db import db_call
from game.moves.stores import postgres
from game.sql.connections import drop_broken_connections

pytestmark = pytest.mark.django_db(transaction=True)


def _connection_id() -> int:
    Table.objects.count()  # opens the connection if needed
    return id(connection.connection)


async def test_calls_reuse_one_connection() -> None:
    first = await db_call(_connection_id)()
    second = await db_call(_connection_id)()
    assert first == second


def test_a_failed_unusable_connection_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    Table.objects.count()
    assert connection.connection is not None
    connection.errors_occurred = True
    monkeypatch.setattr(connection, "is_usable", lambda: False)
    closed = []
    # (SQLite ignores close() on the in-memory test database, so watch the call.)
    monkeypatch.setattr(connection, "close", lambda: closed.append(True))
    drop_broken_connections()
    assert closed == [True]


def test_a_failed_but_usable_connection_is_kept() -> None:
    Table.objects.count()
    raw = connection.connection
    connection.errors_occurred = True
    drop_broken_connections()
    assert connection.connection is raw and not connection.errors_occurred


async def test_with_several_db_threads_calls_run_on_the_pool_and_keep_their_connections(
    settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    settings.SPADES_DB_THREADS = 2
    monkeypatch.setattr(db, "_thread_pool", None)

    def where() -> tuple[str, int]:
        return threading.current_thread().name, _connection_id()

    try:
        seen = [await db_call(where)() for _ in range(6)]
        assert all(name.startswith("spades-db") for name, _ in seen)
        by_thread: dict[str, set[int]] = {}
        for name, conn in seen:
            by_thread.setdefault(name, set()).add(conn)
        assert all(len(conns) == 1 for conns in by_thread.values())
    finally:
        pool = db._thread_pool
        if pool is not None:
            # The pool threads' connections go with their threads.
            pool.shutdown(wait=True)


async def test_on_the_loop_every_socket_shares_one_connection(settings) -> None:
    import asyncio

    settings.SPADES_DB_THREADS = 0

    async def socket() -> int:
        return await db_call(_connection_id)()

    # Each socket is its own asyncio task; Django alone would give each a connection.
    ids = await asyncio.gather(*(asyncio.create_task(socket()) for _ in range(5)))
    assert len(set(ids)) == 1


class _FakeConnection:
    closed = broken = False


async def test_the_moves_pool_is_filled_ahead_and_then_opens_nothing(
    monkeypatch: pytest.MonkeyPatch, settings
) -> None:
    """The first socket fills the loop's pool (PostgresStore.warm_up): the first moves
    take open connections instead of each waiting for a new one."""
    opened: list[_FakeConnection] = []

    async def connect() -> _FakeConnection:
        opened.append(_FakeConnection())
        return opened[-1]

    monkeypatch.setattr(postgres, "_connect", connect)
    settings.SPADES_ASYNC_DB_CONNECTIONS = 3
    stores.PostgresStore().warm_up()
    stores.PostgresStore().warm_up()  # once per loop
    for _ in range(10):
        await asyncio.sleep(0)
    pool = postgres.pool()
    assert len(opened) == 3 and pool.opened == 3 and pool.idle.qsize() == 3
    taken = [await pool.acquire() for _ in range(3)]
    assert len(opened) == 3 and set(map(id, taken)) == set(map(id, opened))
