"""The schema the models say is the one the migrations make, and the action
log carries no index a move pays for without a reader that needs it."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection

from game.models import Action

pytestmark = pytest.mark.django_db


def test_the_migrations_are_up_to_date_with_the_models() -> None:
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out)
    except SystemExit as e:  # --check exits 1 when a migration is missing
        pytest.fail(f"a model change has no migration (exit {e.code}):\n{out.getvalue()}")


def test_the_action_log_has_its_key_and_one_index_by_table_and_version() -> None:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, Action._meta.db_table)
    indexed = sorted(
        tuple(c["columns"])
        for c in constraints.values()
        if c["index"] or c["unique"] or c["primary_key"]
    )
    # Every move inserts into each of these: the unique (table, version) also
    # serves a lookup by table (its first column), so the table has no index
    # of its own.
    assert indexed == [("id",), ("table_id", "version")]
