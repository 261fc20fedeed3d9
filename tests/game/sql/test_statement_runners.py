"""The statement runners (game/sql/statements.py, game/moves/stores/asyncio_steps.py):
a step may yield one query or a batch, and gets back one value or a tuple; on an asyncio
connection a batch goes to the server in one message, with the writes queued
before it, inside one transaction that a failure rolls back."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import psycopg
import pytest

from game.moves.stores import asyncio_steps
from game.sql import statements
from game.sql.statements import Query, Step, no_value
from tests.support import services


def _first(rowcount: int, fetched: list[tuple[Any, ...]]) -> Any:
    return fetched[0][0]


def _count(rowcount: int, fetched: list[tuple[Any, ...]]) -> int:
    return rowcount


def _steps() -> Generator[Step, Any, list[Any]]:
    one = yield Query("SELECT 1", [], _first)
    batch = yield (Query("SELECT %s + 1", [one], _first), Query("SELECT 40 + %s", [2], _first))
    return [one, batch]


@pytest.mark.django_db
def test_run_steps_answers_a_batch_with_a_tuple() -> None:
    assert statements.run_steps(_steps()) == [1, (2, 42)]


@pytest.mark.stack
def test_a_batch_is_one_message_and_the_write_goes_with_the_commit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = services.postgres_url()
    sent: list[str] = []
    real_execute = psycopg.AsyncClientCursor.execute

    async def counting_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(str(query))
        return await real_execute(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.AsyncClientCursor, "execute", counting_execute)

    async def scenario() -> tuple[Any, int]:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
        try:
            await conn.execute("CREATE TEMP TABLE t (n int, note text)")
            await conn.execute("INSERT INTO t VALUES (1), (2), (3)")

            def steps() -> Generator[Step, Any, Any]:
                changed, total, rows = yield (
                    Query("UPDATE t SET n = n + 1 WHERE n < %s", [3], _count),
                    Query("SELECT sum(n) FROM t", [], _first),
                    Query("SELECT count(*) FROM t", [], _first),
                )
                # A write whose value nobody reads waits for the commit; a
                # parameter with quotes and a percent sign is bound safely.
                yield Query("INSERT INTO t VALUES (10, %s)", ["it's 100%; DROP"], no_value)
                return changed, total, rows

            values = await asyncio_steps.run_steps_async(conn, steps())
            cursor = await conn.execute("SELECT sum(n), max(note) FROM t")
            row = await cursor.fetchone()
            assert row is not None and row[1] == "it's 100%; DROP"
            return values, int(row[0])
        finally:
            await conn.close()

    values, total = asyncio.run(scenario())
    assert values == (2, 8, 3)  # 1, 2 -> 2, 3: the UPDATE's rows seen by the SELECTs
    assert len(sent) == 2  # BEGIN and the batch; the INSERT with the COMMIT
    assert sent[0].startswith("BEGIN;") and sent[1].endswith("COMMIT")
    assert total == 18  # committed


@pytest.mark.stack
def test_a_failure_rolls_the_whole_transaction_back() -> None:
    url = services.postgres_url()

    async def scenario() -> tuple[list[Any], str]:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
        try:
            await conn.execute("CREATE TEMP TABLE t (n int primary key)")
            await conn.execute("INSERT INTO t VALUES (1)")

            def refused() -> Generator[Step, Any, Any]:
                yield (Query("UPDATE t SET n = 2", [], _count), Query("SELECT 1", [], _first))
                raise ValueError("the engine refused the move")

            def conflicting() -> Generator[Step, Any, Any]:
                yield Query("UPDATE t SET n = 3", [], _count)
                yield Query("INSERT INTO t VALUES (3)", [], no_value)  # fails at the commit

            with pytest.raises(ValueError):
                await asyncio_steps.run_steps_async(conn, refused())
            with pytest.raises(psycopg.errors.UniqueViolation):
                await asyncio_steps.run_steps_async(conn, conflicting())
            cursor = await conn.execute("SELECT n FROM t")
            left = [row[0] for row in await cursor.fetchall()]
            return left, conn.info.transaction_status.name
        finally:
            await conn.close()

    left, status = asyncio.run(scenario())
    assert left == [1]  # neither the refused nor the conflicting move changed anything
    assert status == "IDLE"  # the connection is ready for the next move
