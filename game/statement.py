"""The quick move's one statement on PostgreSQL's asyncio path, with no cursor.

A move of a table whose rows the process knows is one statement
(``game.rows.quick_move_query``, ``game.moves``). In Daphne's profile of the
Redis stack, psycopg's cursor and its parameter dumpers cost more CPU than
the rest of the move's database work; here the parameters are written into
the text as literals by libpq's own escaping (as ``game.db.run_steps_async``
sends statements: client-bound, simple protocol) and the statement is sent
and awaited on the event loop directly: 0.106 -> 0.059 ms of CPU a statement
in a same-run microbenchmark. ``tests/server/test_db_postgres.py`` checks that
values arrive as psycopg's binding sends them, and that errors are psycopg's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from game.rows import Query

TUPLES_OK = psycopg.pq.ExecStatus.TUPLES_OK


async def run_alone(conn: psycopg.AsyncConnection[Any], query: Query) -> Any:
    """One statement that returns no rows, as its own transaction (the
    connection is in autocommit): one round trip; its value, read from its row
    count. A parameter of a type :func:`_literal` does not write goes through
    psycopg's client-side binding instead."""
    text = _inline(conn, query)
    if text is None:
        cursor = psycopg.AsyncClientCursor(conn)
        await cursor.execute(cursor.mogrify(query.sql, query.params))
        return query.read(cursor.rowcount, [])
    async with conn.lock:
        result = await _execute(conn.pgconn, text)
    if result.status != psycopg.pq.ExecStatus.COMMAND_OK:
        if result.status == TUPLES_OK:
            raise TypeError("run_alone takes a statement that returns no rows")
        if conn.pgconn.status == psycopg.pq.ConnStatus.BAD:  # as psycopg's execute says it
            message = (result.error_message or b"").decode(errors="replace").strip()
            raise psycopg.OperationalError(f"the connection is lost: {message}")
        raise psycopg.errors.error_from_result(result, encoding=conn.info.encoding)
    tuples = result.command_tuples
    return query.read(-1 if tuples is None else tuples, [])


async def read(conn: psycopg.AsyncConnection[Any], query: Query) -> Any:
    """A statement that reads, as its own transaction; its value. Sent as
    ``game.db.run_steps_async`` sends statements (its rows read the same way)."""
    cursor = psycopg.AsyncClientCursor(conn)
    await cursor.execute(cursor.mogrify(query.sql, query.params))
    result = cursor.pgresult
    fetched = await cursor.fetchall() if result is not None and result.status == TUPLES_OK else []
    return query.read(cursor.rowcount, fetched)


async def _execute(pgconn: psycopg.pq.abc.PGconn, text: bytes) -> psycopg.pq.abc.PGresult:
    """Send one statement on a nonblocking connection and wait on the event loop
    for its result (what psycopg's ``execute`` generator does, in fewer steps)."""
    loop = asyncio.get_running_loop()
    fd = pgconn.socket
    pgconn.send_query(text)
    while pgconn.flush():
        await _ready(loop.add_writer, loop.remove_writer, fd)
    while True:
        pgconn.consume_input()
        if not pgconn.is_busy():
            break
        await _ready(loop.add_reader, loop.remove_reader, fd)
    last = None
    while (result := pgconn.get_result()) is not None:
        last = result
    if last is None:
        raise psycopg.OperationalError("the server sent no result")
    return last


async def _ready(add: Callable[..., Any], remove: Callable[[int], Any], fd: int) -> None:
    """Until ``fd`` is ready (``add``/``remove``: the loop's reader or writer)."""
    ready = asyncio.get_running_loop().create_future()
    add(fd, lambda: ready.done() or ready.set_result(None))
    try:
        await ready
    finally:
        remove(fd)


def _literal(escape: psycopg.pq.Escaping, value: Any) -> str | None:
    """``value`` as an SQL literal, for the types a move's statement binds (None
    for another type: the caller falls back to psycopg's client-side binding)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return escape.escape_literal(value.encode()).decode()
    if isinstance(value, datetime) and value.tzinfo is not None:
        return escape.escape_literal(value.isoformat().encode()).decode() + "::timestamptz"
    if isinstance(value, Jsonb):
        return escape.escape_literal(value.dumps(value.obj).encode()).decode() + "::jsonb"
    return None


def _inline(conn: psycopg.AsyncConnection[Any], query: Query) -> bytes | None:
    """The statement with its parameters as literals, or None (a type
    :func:`_literal` does not take)."""
    escape = psycopg.pq.Escaping(conn.pgconn)
    literals = []
    for value in query.params:
        literal = _literal(escape, value)
        if literal is None:
            return None
        literals.append(literal)
    return (query.sql % tuple(literals)).encode()
