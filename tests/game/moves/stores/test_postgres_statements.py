"""On PostgreSQL: ``postgres.run_alone``, the quick move's one statement, writes its
parameters as literals and waits for its result without a cursor; it must bind
what psycopg's client-side binding binds, raise what psycopg raises, and leave
a lost connection marked broken (the quick move then takes the full path)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from game.moves.stores import postgres
from game.sql.statements import Query
from tests.support import services

pytestmark = pytest.mark.stack

TRICKY = [
    "plain",
    "it's",
    "back\\slash and 'quotes' and \\'",
    "ünïcödé ♠♥♦♣",
    "%s and %% and {braces}",
    "",
    "line\nbreak\ttab",
]


@pytest.fixture
def database_url() -> Iterator[str]:
    with services.scratch_postgres("spades_run_alone") as url:
        yield url


async def _connect(url: str) -> psycopg.AsyncConnection[Any]:
    conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
    await conn.execute(
        "CREATE TEMP TABLE t (id int PRIMARY KEY, s text, at timestamptz, a jsonb, b bool, n int)"
    )
    return conn


def _count(rowcount: int, _: list[Any]) -> int:
    return rowcount


def test_parameters_arrive_as_psycopg_would_bind_them(database_url: str) -> None:
    async def run() -> None:
        conn = await _connect(database_url)
        moments = [
            datetime(2026, 11, 25, 20, 15, 1, 123456, tzinfo=UTC),
            datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=-5, minutes=-30))),
        ]
        sent = []
        for i, s in enumerate(TRICKY):
            action = {"type": "play", "seat": i % 4, "card": s, "n": [1, None, True]}
            row = (i, s, moments[i % 2], Jsonb(action, dumps=json.dumps), i % 2 == 0, -i)
            insert = Query("INSERT INTO t VALUES (%s, %s, %s, %s, %s, %s)", list(row), _count)
            assert await postgres.run_alone(conn, insert) == 1
            sent.append((i, s, moments[i % 2], action, i % 2 == 0, -i))
        cursor = await conn.execute("SELECT id, s, at, a, b, n FROM t ORDER BY id")
        assert await cursor.fetchall() == sent
        update = Query("UPDATE t SET n = %s WHERE n < %s AND s <> %s", [None, 0, "it's"], _count)
        assert await postgres.run_alone(conn, update) == len(TRICKY) - 2
        await conn.close()

    asyncio.run(run())


def test_errors_are_psycopgs_and_a_lost_connection_is_broken(database_url: str) -> None:
    async def run() -> None:
        conn = await _connect(database_url)
        insert = Query("INSERT INTO t (id, s) VALUES (%s, %s)", [1, "x"], _count)
        assert await postgres.run_alone(conn, insert) == 1
        with pytest.raises(psycopg.errors.UniqueViolation):
            await postgres.run_alone(conn, insert)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        with pytest.raises(TypeError, match="no rows"):
            await postgres.run_alone(conn, Query("SELECT %s", [1], _count))
        # A type it does not write itself goes through psycopg's binding.
        odd = Query("INSERT INTO t (id, s) VALUES (%s, %s)", [2, b"bytes"], _count)
        assert await postgres.run_alone(conn, odd) == 1

        other = await psycopg.AsyncConnection.connect(database_url, autocommit=True)
        await other.execute("SELECT pg_terminate_backend(%s)", [conn.info.backend_pid])
        await other.close()
        await asyncio.sleep(0.2)
        with pytest.raises(psycopg.OperationalError):
            await postgres.run_alone(conn, Query("INSERT INTO t (id) VALUES (%s)", [3], _count))
        assert conn.broken or conn.closed

    asyncio.run(run())


def test_placeholders_are_numbered_and_a_percent_sign_kept() -> None:
    assert postgres._numbered("a = %s AND b LIKE '5%%' AND c = %s") == (
        "a = $1 AND b LIKE '5%' AND c = $2"
    )


def test_a_statement_is_prepared_once_per_connection_and_types(database_url: str) -> None:
    async def run() -> list[str]:
        conn = await _connect(database_url)
        sql = "INSERT INTO t (id, s, n) VALUES (%s, %s, %s)"
        for i in range(3):
            assert await postgres.run_alone(conn, Query(sql, [i, "x", i], _count)) == 1
        # A NULL where a number was: other parameter types, another preparation.
        assert await postgres.run_alone(conn, Query(sql, [9, "y", None], _count)) == 1
        cursor = await conn.execute("SELECT statement FROM pg_prepared_statements ORDER BY name")
        prepared = [row[0] for row in await cursor.fetchall()]
        await conn.close()
        return prepared

    assert asyncio.run(run()) == ["INSERT INTO t (id, s, n) VALUES ($1, $2, $3)"] * 2
