"""Model instances from the move path's rows (``game.moves.rows``), as a queryset would
make them: the backend's and the fields' converters applied, ``Model.from_db``;
and the SQL dialect those statements are written in.

The dialect (:func:`dialect`: quoting, value preparation, converters) is not
``django.db.connection``: on an event loop that is a different wrapper in
every asyncio task (asgiref's ``Local`` falls back to a context variable
there), each with its operations, features, creation and introspection
objects, all in reference cycles that only the garbage collector frees. A
move on PostgreSQL runs in a task of its own, so every move made and dropped
one such wrapper; in ``bench_server``'s Redis stack they were most of
Daphne's garbage, and the collections that freed them paused the loop for
10-50 ms at a time. This one is made once per process and never connected:
it only speaks the dialect.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field, Model


@cache
def dialect() -> BaseDatabaseWrapper:
    """The default database's backend, never connected (its ``ops``, ``features``)."""
    return connections.create_connection(DEFAULT_DB_ALIAS)


def quote(name: str) -> str:
    return dialect().ops.quote_name(name)


@cache
def columns(model: type[Model], alias: str) -> tuple[str, tuple[str, ...], tuple[Any, ...]]:
    """(``alias.col, ...`` for a SELECT, attnames, per-column converters) of a model."""
    fields: list[Field] = list(model._meta.concrete_fields)
    select = ", ".join(f"{alias}.{quote(f.column)}" for f in fields)
    converters = []
    for f in fields:
        col = f.get_col(alias)
        found = dialect().ops.get_db_converters(col) + f.get_db_converters(dialect())
        converters.append((tuple(found), col))
    return select, tuple(f.attname for f in fields), tuple(converters)


def instance(model: type[Model], alias: str, values: tuple[Any, ...] | list[Any]) -> Any:
    _, attnames, converters = columns(model, alias)
    backend = dialect()
    converted = []
    for value, (found, col) in zip(values, converters, strict=True):
        for convert in found:
            value = convert(value, col, backend)
        converted.append(value)
    return model.from_db(backend.alias, list(attnames), converted)


def user(user_id: int | None, username: str | None) -> Any:
    """A user with only its id and name loaded (all a table's views use)."""
    if user_id is None or username is None:
        return None
    user_model = get_user_model()
    return user_model.from_db(
        dialect().alias,
        [user_model._meta.pk.attname, user_model.USERNAME_FIELD],
        [user_id, username],
    )


def username_column() -> str:
    user_model = get_user_model()
    return quote(user_model._meta.get_field(user_model.USERNAME_FIELD).column)
