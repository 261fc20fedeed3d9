"""The quick move's one statement on PostgreSQL's asyncio path, with no cursor.

A move of a table whose rows the process knows is one statement
(``game.rows.quick_move_query``, ``game.moves``). In Daphne's profile of the
Redis stack, psycopg's cursor and its parameter dumpers cost more CPU than
the rest of the move's database work; here the statement is sent and awaited
on the event loop with libpq's own calls (0.106 -> 0.059 ms of CPU a
statement in a same-run microbenchmark). It is prepared once per connection
and parameter types, so PostgreSQL parses and plans it once rather than at
every move, and its parameters go in text format: PostgreSQL's CPU per action
0.56-0.58 -> 0.42-0.44 ms and the bytes sent to it 562 -> 273
(``bench_server --stacks redis``, docs/scaling.md). ``tests/server/test_db_postgres.py``
checks that values arrive as psycopg's binding sends them, that errors are
psycopg's, and that a statement is prepared once. A connection pooler put in
front of PostgreSQL in transaction mode would have to keep prepared
statements per client (PgBouncer 1.21 and later: ``max_prepared_statements``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from game import rows
from game.rows import Query

TUPLES_OK = psycopg.pq.ExecStatus.TUPLES_OK


async def run_alone(conn: psycopg.AsyncConnection[Any], query: Query) -> Any:
    """One statement that returns no rows, as its own transaction (the
    connection is in autocommit): one round trip; its value, read from its row
    count. A parameter of a type :func:`_bind` does not take goes through
    psycopg's client-side binding instead."""
    bound = _bind(query.params)
    if bound is None:
        cursor = psycopg.AsyncClientCursor(conn)
        await cursor.execute(cursor.mogrify(query.sql, query.params))
        return query.read(cursor.rowcount, [])
    values, types = bound
    async with conn.lock:
        name = await _prepared(conn, query.sql, types)
        conn.pgconn.send_query_prepared(name, values)
        result = await _result(conn.pgconn)
    if result.status != psycopg.pq.ExecStatus.COMMAND_OK:
        if result.status == TUPLES_OK:
            raise TypeError("run_alone takes a statement that returns no rows")
        _raise(conn, result)
    tuples = result.command_tuples
    return query.read(-1 if tuples is None else tuples, [])


def _raise(conn: psycopg.AsyncConnection[Any], result: psycopg.pq.abc.PGresult) -> None:
    """The error of a failed result, as psycopg's ``execute`` raises it."""
    if conn.pgconn.status == psycopg.pq.ConnStatus.BAD:
        message = (result.error_message or b"").decode(errors="replace").strip()
        raise psycopg.OperationalError(f"the connection is lost: {message}")
    raise psycopg.errors.error_from_result(result, encoding=conn.info.encoding)


async def _prepared(conn: psycopg.AsyncConnection[Any], sql: str, types: tuple[int, ...]) -> bytes:
    """The name of ``sql`` prepared on this connection for these parameter
    types (prepared on first use: parsed and planned once per connection)."""
    names: dict[tuple[str, tuple[int, ...]], bytes] | None = getattr(conn, "_spades_prepared", None)
    if names is None:
        names = conn._spades_prepared = {}  # type: ignore[attr-defined]
    name = names.get((sql, types))
    if name is None:
        name = f"spades_{len(names)}".encode()
        conn.pgconn.send_prepare(name, _numbered(sql).encode(), types)
        result = await _result(conn.pgconn)
        if result.status != psycopg.pq.ExecStatus.COMMAND_OK:
            _raise(conn, result)
        names[(sql, types)] = name
    return name


def _numbered(sql: str) -> str:
    """Django's ``%s`` placeholders as PostgreSQL's ``$1``, ``$2``, ..."""
    return rows.with_marks(sql, lambda n: f"${n}")


async def _result(pgconn: psycopg.pq.abc.PGconn) -> psycopg.pq.abc.PGresult:
    """Wait on the event loop for the result of what was just sent on a
    nonblocking connection (what psycopg's ``execute`` generator does, in fewer steps)."""
    loop = asyncio.get_running_loop()
    fd = pgconn.socket
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


# The parameter types a move's statement binds: sent typed as PostgreSQL would
# read the literals psycopg's client-side binding writes (a string untyped, as
# a quoted literal is, so that its column decides).
_INT8, _BOOL, _TIMESTAMPTZ, _JSONB, _UNKNOWN = 20, 16, 1184, 3802, 0


def _bind(params: list[Any]) -> tuple[list[bytes | None], tuple[int, ...]] | None:
    """The parameters in text format and their types, or None (a type this
    does not bind: the caller falls back to psycopg's client-side binding)."""
    values: list[bytes | None] = []
    types: list[int] = []
    for value in params:
        if value is None:
            values.append(None)
            types.append(_UNKNOWN)
        elif isinstance(value, bool):
            values.append(b"t" if value else b"f")
            types.append(_BOOL)
        elif isinstance(value, int):
            values.append(str(value).encode())
            types.append(_INT8)
        elif isinstance(value, str):
            values.append(value.encode())
            types.append(_UNKNOWN)
        elif isinstance(value, datetime) and value.tzinfo is not None:
            values.append(value.isoformat().encode())
            types.append(_TIMESTAMPTZ)
        elif isinstance(value, Jsonb):
            values.append(value.dumps(value.obj).encode())
            types.append(_JSONB)
        else:
            return None
    return values, tuple(types)
