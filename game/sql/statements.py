"""Statements as values, and their runner on Django's connection: the SQL toolkit
below the move path (``game.moves``), the ratings and the research code.

A :class:`Query` is a statement, its parameters and how to read its result;
code that writes SQL yields them from generators (:data:`Steps`), and a runner
executes each and sends its value back: :func:`run_steps` on Django's
connection, ``game.moves.stores`` on SQLite's own connection or PostgreSQL's
asyncio ones. :func:`insert_query` writes any model instance as ``save()``
would, from the model's metadata. Nothing here knows a move.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from django.db import connection, models
from django.db.models import Field, Model

from game.sql.instances import dialect, quote


@dataclass(frozen=True)
class Query:
    """One statement: ``read(rowcount, rows)`` gives its value.

    A step may also yield a tuple of queries (a batch) and gets a tuple of
    their values: the asyncio runner sends a batch in one round trip
    (``game.moves.stores.asyncio_steps``)."""

    sql: str
    params: list[Any]
    read: Callable[[int, list[tuple[Any, ...]]], Any]

    @property
    def wants_result(self) -> bool:
        """False for a write whose outcome is only known at the commit."""
        return self.read is not no_value


Step = Query | tuple[Query, ...]


T = TypeVar("T")
Steps = Generator[Step, Any, T]


def run_steps(steps: Steps[T]) -> T:
    """Run a generator of statements on Django's connection (in the caller's
    transaction): each yielded :class:`Query` is executed and its value sent
    back (a batch's one by one, their values as a tuple); returns what the
    generator returns."""

    def value_of(query: Query) -> Any:
        with connection.cursor() as cursor:
            cursor.execute(query.sql, query.params)
            fetched = cursor.fetchall() if cursor.description else []
            return query.read(cursor.rowcount, fetched)

    return drive(steps, value_of)


def drive(steps: Steps[T], value_of: Callable[[Query], Any]) -> T:
    """Run ``steps`` with ``value_of`` executing each statement."""
    try:
        step = next(steps)
        while True:
            if isinstance(step, tuple):
                step = steps.send(tuple(value_of(query) for query in step))
            else:
                step = steps.send(value_of(step))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def with_marks(sql: str, mark: Callable[[int], str]) -> str:
    """``sql`` with Django's ``%s`` placeholders written as ``mark(n)`` (n from
    1) and ``%%`` as ``%``: for a driver's own placeholder style."""
    count = iter(range(1, 1_000_000))
    return _FORMAT_MARK.sub(lambda m: "%" if m.group() == "%%" else mark(next(count)), sql)


_FORMAT_MARK = re.compile(r"%%|%s")


def no_value(rowcount: int, fetched: list[tuple[Any, ...]]) -> None:
    """The ``read`` of a write whose outcome only the commit tells."""
    return None


def names_and_marks(columns: tuple[str, ...]) -> tuple[str, str]:
    """The quoted column list and as many placeholders, for an INSERT."""
    return ", ".join(quote(c) for c in columns), ", ".join(["%s"] * len(columns))


# Fields whose value, of the type they hold, is what the database is sent: their
# ``get_db_prep_save`` would only convert it to that type again.
_PLAIN_FIELDS = {models.BooleanField: bool, models.CharField: str} | dict.fromkeys(
    (models.IntegerField, models.PositiveIntegerField, models.PositiveSmallIntegerField,
     models.SmallIntegerField), int,
)  # fmt: skip


@cache
def _insert_sql(model: type[Model]) -> tuple[str, tuple[tuple[Field, type | None], ...]]:
    fields = tuple(f for f in model._meta.concrete_fields if not f.primary_key)
    names, marks = names_and_marks(insert_columns(model))
    sql = f"INSERT INTO {quote(model._meta.db_table)} ({names}) VALUES ({marks})"
    return sql, tuple((f, _PLAIN_FIELDS.get(type(f))) for f in fields)


@cache
def insert_columns(model: type[Model]) -> tuple[str, ...]:
    """The columns :func:`insert_query` writes, in the order of its values."""
    return tuple(f.column for f in model._meta.concrete_fields if not f.primary_key)


def insert_query(instance: Model) -> Query:
    """INSERT a new model instance as ``save()`` would (defaults, auto_now), without
    reading back its id: for the round and result rows written by a move."""
    sql, fields = _insert_sql(type(instance))
    values = []
    for f, plain in fields:
        value = getattr(instance, f.attname)
        # A round row has some 60 columns: Django's preparation of each was a
        # quarter of a round end's CPU (bench_server's round-end second).
        if plain is None or type(value) is not plain:
            value = f.get_db_prep_save(f.pre_save(instance, True), dialect())
        values.append(value)
    return Query(sql, values, no_value)
