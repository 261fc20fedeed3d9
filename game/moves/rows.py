"""The few statements of the move path, as prepared SQL instead of ORM querysets.

A move's statements run for every card of every table. Compiling a queryset to
SQL cost more than running it (bench_server: two thirds of the move's database
time in ``SQLCompiler``), so they are written once here (per process), from
the models' own metadata, and run directly.

Values still go through the fields' ``get_db_prep_save`` (but plain ints,
strings and booleans, which it would return as they are) and the backend's
converters (``game.sql.instances``), as the ORM would, so the same code
serves SQLite and PostgreSQL and gives model instances indistinguishable
from a queryset's.

Each statement is a ``game.sql`` :class:`Query` (SQL, parameters, and how to
read its result), so that the move path can be run by Django's connection
(``game.sql.statements.run_steps``) or, on PostgreSQL in the server, by an asyncio
connection on the event loop (``game.moves.stores.asyncio_steps``).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Model

from game.models import Action, Seat, Table
from game.sql import instances as row_instances
from game.sql.instances import quote as _quote
from game.sql.statements import Query, insert_query, no_value
from game.sql.statements import insert_columns as _insert_columns
from game.sql.statements import names_and_marks as _names_and_marks


@dataclass(frozen=True)
class Think:
    """A human's decision time as stored with the action: the browser's measure
    (None if it sent none), already no larger than the server's bound."""

    think_ms: int | None
    bound_ms: int


def _prep(model: type[Model], attname: str, value: Any) -> Any:
    field = model._meta.get_field(attname.removesuffix("_id"))
    return field.get_db_prep_save(value, row_instances.dialect())


@cache
def _bump_sql() -> str:
    return (
        f"UPDATE {_quote(Table._meta.db_table)} "
        f"SET {_quote('version')} = {_quote('version')} + 1, {_quote('turn_started_at')} = %s "
        f"WHERE {_quote('id')} = %s AND {_quote('version')} = %s AND {_quote('status')} = %s"
    )


def bump_version_query(table_pk: int, expected_version: int, now: datetime.datetime) -> Query:
    """Compare-and-swap: version + 1 and a new turn clock, if still playing at
    ``expected``; reads True when it swapped.

    The UPDATE takes PostgreSQL's row lock and SQLite's write lock, so that
    concurrent moves of a table queue here rather than fail later.
    """
    playing = Table.Status.PLAYING.value
    params = [_prep(Table, "turn_started_at", now), table_pk, expected_version, playing]
    return Query(_bump_sql(), params, lambda rowcount, _: rowcount == 1)


@cache
def _table_sql() -> str:
    select, _, _ = row_instances.columns(Table, "t")
    users, username = _quote(get_user_model()._meta.db_table), row_instances.username_column()
    return (
        f"SELECT {select}, h.{username} FROM {_quote(Table._meta.db_table)} t "
        f"LEFT JOIN {users} h ON h.{_quote('id')} = t.{_quote('host_id')} "
        f"WHERE t.{_quote('id')} = %s"
    )


def fetch_table_query(table_pk: int) -> Query:
    """The table row with its host's name, or None."""
    return Query(_table_sql(), [table_pk], _read_table)


def _read_table(rowcount: int, fetched: list[tuple[Any, ...]]) -> Table | None:
    if not fetched:
        return None
    row = fetched[0]
    table = row_instances.instance(Table, "t", row[:-1])
    table.host = row_instances.user(table.host_id, row[-1])
    return table


@cache
def _seats_sql() -> str:
    select, _, _ = row_instances.columns(Seat, "s")
    users, username = _quote(get_user_model()._meta.db_table), row_instances.username_column()
    return (
        f"SELECT {select}, u.{username} FROM {_quote(Seat._meta.db_table)} s "
        f"LEFT JOIN {users} u ON u.{_quote('id')} = s.{_quote('user_id')} "
        f"WHERE s.{_quote('table_id')} = %s"
    )


def fetch_seats_query(table_pk: int) -> Query:
    """The table's seats by position, each with its user's name loaded."""
    return Query(_seats_sql(), [table_pk], _read_seats)


def _read_seats(rowcount: int, fetched: list[tuple[Any, ...]]) -> dict[int, Seat]:
    seats = {}
    for row in fetched:
        seat = row_instances.instance(Seat, "s", row[:-1])
        seat.user = row_instances.user(seat.user_id, row[-1])
        seats[seat.position] = seat
    return dict(sorted(seats.items()))


@cache
def _action_sql(columns: tuple[str, ...]) -> str:
    names, marks = _names_and_marks(columns)
    return f"INSERT INTO {_quote(Action._meta.db_table)} ({names}) VALUES ({marks})"


def _action_values(
    table_pk: int,
    version: int,
    round_number: int,
    seat: int,
    action: dict[str, Any],
    by_stand_in: bool,
    now: datetime.datetime,
    think: Think | None = None,
) -> dict[str, Any]:
    return {
        "table_id": table_pk,
        "version": version,
        "round_number": round_number,
        "seat": seat,
        "action": _prep(Action, "action", action),
        "created_at": _prep(Action, "created_at", now),
        "by_stand_in": by_stand_in,
        "think_ms": None if think is None else think.think_ms,
        "think_bound_ms": None if think is None else think.bound_ms,
    }


def insert_action_query(
    table_pk: int,
    version: int,
    round_number: int,
    seat: int,
    action: dict[str, Any],
    by_stand_in: bool,
    now: datetime.datetime,
    think: Think | None = None,
) -> Query:
    """Append one action to the table's log (the unique (table, version) guards it)."""
    values = _action_values(table_pk, version, round_number, seat, action, by_stand_in, now, think)
    return Query(_action_sql(tuple(values)), list(values.values()), no_value)


@cache
def _quick_swap_sql() -> str:
    return f"{_bump_sql()} AND {_quote('seats_version')} = %s"


def quick_swap_query(table: Table, expected_version: int, now: datetime.datetime) -> Query:
    """:func:`bump_version_query` that also requires the seats of
    ``table.seats_version``: the quick move's compare-and-swap."""
    swap = bump_version_query(table.pk, expected_version, now)
    return Query(_quick_swap_sql(), [*swap.params, table.seats_version], swap.read)


@cache
def _quick_move_sql(columns: tuple[str, ...], also: type[Model] | None = None) -> str:
    names, marks = _names_and_marks(columns)
    swap = f"WITH swapped AS ({_quick_swap_sql()} RETURNING {_quote('id')}) "
    insert = f"INSERT INTO {_quote(Action._meta.db_table)} ({names}) SELECT {marks} FROM swapped"
    if also is None:
        return swap + insert
    # A round's last card: its pending round too, inserted only if the swap was made.
    names, marks = _names_and_marks(_insert_columns(also))
    table = _quote(also._meta.db_table)
    return f"{swap}, moved AS ({insert}) INSERT INTO {table} ({names}) SELECT {marks} FROM swapped"


def quick_move_query(
    table: Table,
    expected_version: int,
    round_number: int,
    seat: int,
    action: dict[str, Any],
    by_stand_in: bool,
    now: datetime.datetime,
    also: Model | None = None,
    think: Think | None = None,
) -> Query:
    """A whole move as one statement (PostgreSQL): the version's compare-and-swap
    and the action's INSERT (and ``also``'s, a round's pending round), which
    insert nothing unless the table is still playing at ``expected_version``
    with the seats of ``table.seats_version``. Reads True when the move was made."""
    values = _action_values(
        table.pk, expected_version + 1, round_number, seat, action, by_stand_in, now, think
    )
    swap = quick_swap_query(table, expected_version, now)
    params = [*swap.params, *values.values()]
    if also is not None:
        params += insert_query(also).params
    sql = _quick_move_sql(tuple(values), None if also is None else type(also))
    return Query(sql, params, lambda rowcount, _: rowcount == 1)


@cache
def _stand_in_sql() -> str:
    return (
        f"SELECT {_quote('round_number')}, {_quote('seat')}, {_quote('action')} "
        f"FROM {_quote(Action._meta.db_table)} "
        f"WHERE {_quote('table_id')} = %s AND {_quote('by_stand_in')} = %s"
    )


def stand_in_actions_query(table_pk: int) -> Query:
    """The (round number, seat, action type) of every move a stand-in bot made at the table."""
    return Query(_stand_in_sql(), [table_pk, True], _read_stand_ins)


def _read_stand_ins(rowcount: int, fetched: list[tuple[Any, ...]]) -> list[tuple[int, int, str]]:
    field = Action._meta.get_field("action")
    col = field.get_col("a")
    backend = row_instances.dialect()
    converters = backend.ops.get_db_converters(col) + field.get_db_converters(backend)
    out = []
    for round_number, seat, data in fetched:
        for convert in converters:
            data = convert(data, col, backend)
        out.append((round_number, seat, data.get("type", "")))
    return out


@cache
def _finish_sql() -> str:
    return (
        f"UPDATE {_quote(Table._meta.db_table)} "
        f"SET {_quote('status')} = %s, {_quote('finished_at')} = %s WHERE {_quote('id')} = %s"
    )


def finish_table_query(table_pk: int, now: datetime.datetime) -> Query:
    """The match is over: the table's status and end time."""
    params = [Table.Status.FINISHED.value, _prep(Table, "finished_at", now), table_pk]
    return Query(_finish_sql(), params, no_value)


@cache
def _seat_away_sql() -> str:
    return (
        f"UPDATE {_quote(Seat._meta.db_table)} "
        f"SET {_quote('away')} = %s, {_quote('played_for')} = %s, "
        f"{_quote('missed_in_a_row')} = %s, {_quote('most_missed_in_a_row')} = %s, "
        f"{_quote('away_since')} = %s WHERE {_quote('id')} = %s"
    )


def seat_away_query(seat: Seat) -> Query:
    """A human seat went away (a stand-in moved for it) or came back."""
    played_for, since = _prep(Seat, "played_for", seat.played_for), seat.away_since
    missed = [seat.missed_in_a_row, seat.most_missed_in_a_row, _prep(Seat, "away_since", since)]
    return Query(_seat_away_sql(), [seat.away, played_for, *missed, seat.pk], no_value)


@cache
def _seats_changed_sql() -> str:
    version = _quote("seats_version")
    return (
        f"UPDATE {_quote(Table._meta.db_table)} SET {version} = {version} + 1 "
        f"WHERE {_quote('id')} = %s"
    )


def seats_changed_query(table_pk: int) -> Query:
    """A seat changed in a move: a quick move on the rows before it must not happen."""
    return Query(_seats_changed_sql(), [table_pk], no_value)
