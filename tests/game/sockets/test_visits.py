"""game.sockets.visits: a process's sockets' visits written together, one UPDATE for
all their tables, and tried again after a failed write."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.db import OperationalError
from django.utils import timezone

from game import abandoned
from game.models import Table
from game.sockets import visits
from tests.support.helpers import make_table

pytestmark = pytest.mark.django_db(transaction=True)


def _visited_ago(table: Table) -> timedelta:
    table.refresh_from_db()
    return timezone.now() - table.last_human_at


def _last_visit(tables: list[Table], minutes_ago: float) -> None:
    ago = timezone.now() - timedelta(minutes=minutes_ago)
    Table.objects.filter(pk__in=[t.pk for t in tables]).update(last_human_at=ago)


@pytest.fixture
def writes(monkeypatch: Any) -> list[list[int]]:
    """The tables of each write, as they go to the database."""
    seen: list[list[int]] = []
    real = abandoned.touch_tables

    def recorded(table_pks: list[int], now: Any = None) -> None:
        seen.append(list(table_pks))
        real(table_pks, now)

    monkeypatch.setattr(abandoned, "touch_tables", recorded)
    monkeypatch.setattr(visits, "WRITE_AFTER", 0.1)
    return seen


async def test_the_visits_of_a_moment_are_one_write_of_all_their_tables(writes) -> None:
    first, second, quiet = [await database_sync_to_async(make_table)("HHHH") for _ in range(3)]
    await database_sync_to_async(_last_visit)([first, second, quiet], 30)
    writes.clear()  # the tables' own visits as they were made
    for table in (first, second, first):  # two sockets at the first table
        visits.note(table.pk)
    assert writes == []  # nothing written yet: gathered first
    await asyncio.sleep(0.4)
    assert writes == [sorted([first.pk, second.pk])]
    for table in (first, second):
        assert await database_sync_to_async(_visited_ago)(table) < timedelta(minutes=1)
    assert await database_sync_to_async(_visited_ago)(quiet) > timedelta(minutes=29)

    visits.note(second.pk)  # a later visit: a write of its own
    await asyncio.sleep(0.4)
    assert writes == [sorted([first.pk, second.pk]), [second.pk]]


async def test_a_closed_table_stays_closed(writes) -> None:
    table = await database_sync_to_async(make_table)("HHHH")
    await database_sync_to_async(Table.objects.filter(pk=table.pk).update)(
        status=Table.Status.ABANDONED
    )
    writes.clear()
    visits.note(table.pk)
    await asyncio.sleep(0.4)
    assert writes == [[table.pk]]
    await database_sync_to_async(table.refresh_from_db)()
    assert table.status == Table.Status.ABANDONED


async def test_a_failed_write_is_tried_again_with_the_next(monkeypatch: Any, writes) -> None:
    first, second = [await database_sync_to_async(make_table)("HHHH") for _ in range(2)]
    await database_sync_to_async(_last_visit)([first, second], 30)
    writes.clear()
    recorded = abandoned.touch_tables
    failures = [OperationalError("the database went away")]

    def failing_once(table_pks: list[int], now: Any = None) -> None:
        if failures:
            raise failures.pop()
        recorded(table_pks, now)

    monkeypatch.setattr(abandoned, "touch_tables", failing_once)
    visits.note(first.pk)
    await asyncio.sleep(0.15)  # the first write failed; its table waits for the next
    visits.note(second.pk)
    await asyncio.sleep(0.4)
    assert writes == [sorted([first.pk, second.pk])]
    for table in (first, second):
        assert await database_sync_to_async(_visited_ago)(table) < timedelta(minutes=1)
