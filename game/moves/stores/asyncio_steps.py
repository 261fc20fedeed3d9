"""The full path's transaction on an asyncio connection (PostgreSQL's store, on the loop).

The same statements as on Django's connection (``game.sql.statements.run_steps``),
sent in as few round trips as the generator's waits allow.
"""

from __future__ import annotations

import contextlib
from typing import Any

import psycopg

from game.sql.statements import Steps, T

TUPLES_OK = psycopg.pq.ExecStatus.TUPLES_OK

IDLE = psycopg.pq.TransactionStatus.IDLE


async def run_steps_async(conn: psycopg.AsyncConnection[Any], steps: Steps[T]) -> T:
    """:func:`run_steps` as one transaction on an asyncio connection (autocommit),
    one round trip per value the generator waits for, plus the commit.

    Statements are bound on the client (psycopg's ``ClientCursor``: its
    literals are quoted by libpq's rules) and sent together as one
    simple-protocol message: ``BEGIN`` with the first batch that wants a
    value, writes nobody reads with the next message, ``COMMIT`` last. A move
    (BEGIN, the version's compare-and-swap, the table and its seats; then the
    INSERT and COMMIT) is two messages and two round trips. The extended
    protocol's pipeline mode also took two round trips, but its per-statement
    messages and result bookkeeping cost Daphne about twice the CPU (1.16 ms
    against 0.64 ms a move, docs/scaling.md). A failure rolls the transaction
    back before it is raised: nothing is half-written."""
    cursor = psycopg.AsyncClientCursor(conn)
    unsent = ["BEGIN"]
    try:
        step = next(steps)
        while True:
            batch = step if isinstance(step, tuple) else (step,)
            unsent.extend(cursor.mogrify(query.sql, query.params) for query in batch)
            values: list[Any] = [None] * len(batch)
            if any(query.wants_result for query in batch):
                await cursor.execute("; ".join(unsent))
                # Results in order: what was waiting to be sent, then the batch's.
                for _ in range(len(unsent) - len(batch)):
                    cursor.nextset()
                for n, query in enumerate(batch):
                    if n:
                        cursor.nextset()
                    if query.wants_result:
                        result = cursor.pgresult
                        rows_out = result is not None and result.status == TUPLES_OK
                        fetched = await cursor.fetchall() if rows_out else []
                        values[n] = query.read(cursor.rowcount, fetched)
                unsent = []
            step = steps.send(tuple(values) if isinstance(step, tuple) else values[0])
    except StopIteration as done:
        unsent.append("COMMIT")
        try:
            await cursor.execute("; ".join(unsent))
        except BaseException:
            await _roll_back(conn)
            raise
        return done.value  # type: ignore[no-any-return]
    except BaseException:
        await _roll_back(conn)
        raise


async def _roll_back(conn: psycopg.AsyncConnection[Any]) -> None:
    """End a failed move's transaction block, if the connection still has one
    (a broken connection is dropped by the pool instead)."""
    if conn.closed or conn.broken or conn.info.transaction_status == IDLE:
        return
    with contextlib.suppress(psycopg.Error):
        await conn.execute("ROLLBACK")
