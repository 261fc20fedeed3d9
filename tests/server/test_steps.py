"""The move path's statement runners (game/db.py): a step may yield one
query or a batch, and gets back one value or a tuple; on an asyncio
connection a batch goes to the server in one round trip (pipeline mode)."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import psycopg
import pytest

from game import db
from game.rows import Query, Step, no_value
from tests import services


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
    assert db.run_steps(_steps()) == [1, (2, 42)]


@pytest.mark.stack
def test_a_batch_is_one_round_trip_in_pipeline_mode() -> None:
    url = services.postgres_url()

    async def scenario() -> tuple[Any, int, int]:
        conn = await psycopg.AsyncConnection.connect(url, autocommit=True)
        try:
            await conn.execute("CREATE TEMP TABLE t (n int)")
            await conn.execute("INSERT INTO t VALUES (1), (2), (3)")
            syncs = 0

            def steps() -> Generator[Step, Any, Any]:
                changed, total, rows = yield (
                    Query("UPDATE t SET n = n + 1 WHERE n < 3", [], _count),
                    Query("SELECT sum(n) FROM t", [], _first),
                    Query("SELECT count(*) FROM t", [], _first),
                )
                # A write whose value nobody reads waits for the commit.
                yield Query("INSERT INTO t VALUES (10)", [], no_value)
                return changed, total, rows

            async with conn.pipeline() as pipeline, conn.transaction():
                real_sync = pipeline.sync

                async def counting_sync() -> None:
                    nonlocal syncs
                    syncs += 1
                    await real_sync()

                pipeline.sync = counting_sync  # type: ignore[method-assign]
                values = await db.run_steps_async(conn, steps(), pipeline)
            cursor = await conn.execute("SELECT sum(n) FROM t")
            row = await cursor.fetchone()
            return values, syncs, int(row[0]) if row else -1
        finally:
            await conn.close()

    values, syncs, total = asyncio.run(scenario())
    assert values == (2, 8, 3)  # 1, 2 -> 2, 3: the UPDATE's rows seen by the SELECTs
    assert syncs == 1  # the batch; the INSERT went with the COMMIT
    assert total == 18  # committed
