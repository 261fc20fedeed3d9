"""The schema the models say is the one the migrations make, and the action
log carries no index a move pays for without a reader that needs it."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.db import connection

from game.models import Action, RoundRecordRow

pytestmark = pytest.mark.django_db


def test_the_migrations_are_up_to_date_with_the_models() -> None:
    out = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out)
    except SystemExit as e:  # --check exits 1 when a migration is missing
        pytest.fail(f"a model change has no migration (exit {e.code}):\n{out.getvalue()}")


def _indexed(table: str) -> list[tuple[str, ...]]:
    """The column lists of a table's indexes (its key and unique constraints too)."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return sorted(
        tuple(c["columns"])
        for c in constraints.values()
        if c["index"] or c["unique"] or c["primary_key"]
    )


def test_the_action_log_has_its_key_and_one_index_by_table_and_version() -> None:
    indexed = _indexed(Action._meta.db_table)
    # Every move inserts into each of these: the unique (table, version) also
    # serves a lookup by table (its first column), so the table has no index
    # of its own.
    assert indexed == [("id",), ("table_id", "version")]


def test_a_round_row_has_the_indexes_its_readers_filter_by_and_no_others() -> None:
    # A round's end writes each of them: the exports filter by time, rules and
    # make-ups, the tally flush finds the untallied rows (a partial index on id),
    # and the unique (table, round_number) serves a lookup by table.
    assert _indexed(RoundRecordRow._meta.db_table) == [
        ("finished_at",),
        ("id",),
        ("id",),
        ("makeup_ns", "makeup_ew"),
        ("rules_key", "finished_at"),
        ("table_id", "round_number"),
    ]
