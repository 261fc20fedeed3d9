"""Blocked balanced random assignment: balanced at every arrival, reproducible
from the seed, recorded, and never one slot for two concurrent arrivals."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection

from studies import assignment, participants
from studies.assignment import block_order, sequence
from studies.models import Assignment, Participant, Study
from tests.support.sqlite_threads import threads_database


def test_a_thousand_arrivals_over_three_conditions_never_differ_by_more_than_one() -> None:
    counts: Counter[int] = Counter()
    for position in sequence(20250611, 3, 1000):
        counts[position] += 1
        assert max(counts.values()) - min(counts[c] for c in range(3)) <= 1
    assert sorted(counts.values()) == [333, 333, 334]


def test_the_same_seed_gives_the_same_sequence_and_another_seed_another() -> None:
    assert sequence(7, 3, 300) == sequence(7, 3, 300)
    assert sequence(7, 3, 300) != sequence(8, 3, 300)
    assert [block_order(7, block, 3) for block in range(2)] == [
        sequence(7, 3, 6)[:3],
        sequence(7, 3, 6)[3:],
    ]
    # Pinned: a change of method would silently change every running study.
    assert sequence(1, 2, 8) == [p for b in range(4) for p in block_order(1, b, 2)] and sorted(
        sequence(1, 3, 3)
    ) == [0, 1, 2]


@pytest.mark.django_db
def test_arrivals_through_the_database_follow_the_seeded_sequence_and_are_recorded(
    three_conditions: Study,
) -> None:
    for n in range(60):
        participants.consent(three_conditions, {"PROLIFIC_PID": f"pid{n}"})
    rows = list(Assignment.objects.filter(study=three_conditions).select_related("condition"))
    assert [r.sequence for r in rows] == list(range(60))
    assert [r.condition.position for r in rows] == sequence(three_conditions.seed, 3, 60)
    assert [(r.block, r.position_in_block) for r in rows[:4]] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert rows[3].seed == f"{three_conditions.seed}:1"
    assert all(r.participant.condition_id == r.condition_id for r in rows)


@pytest.mark.django_db(transaction=True)  # not inside the test's own transaction
def test_a_slot_is_only_taken_inside_a_transaction(study: Study) -> None:
    with pytest.raises(RuntimeError, match="inside a transaction"):
        assignment.take_slot(study)


SLOTS = Assignment.objects.order_by("sequence")
SLOTS_SQL = (
    "SELECT a.sequence, c.position FROM studies_assignment a"
    " JOIN studies_condition c ON c.id = a.condition_id ORDER BY a.sequence"
)


@pytest.mark.django_db(transaction=True)
def test_concurrent_arrivals_take_distinct_slots(three_conditions: Study, tmp_path: Path) -> None:
    """Eight threads, each on its own connection, consent at once."""
    start, errors = threading.Barrier(8), []

    def arrive(n: int) -> None:
        try:
            start.wait(timeout=10)
            participants.consent(three_conditions, {"PROLIFIC_PID": f"t{n}"})
            participants.consent(three_conditions, {"PROLIFIC_PID": f"t{n}"})  # a second tab
        except Exception as error:  # reported below
            errors.append(error)
        finally:
            connection.close()

    with threads_database(tmp_path / "db.sqlite3") as database:
        threads = [threading.Thread(target=arrive, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        assert errors == []
        rows = SLOTS.values_list("sequence", "condition__position")
        if database is not None:
            rows = database.execute(SLOTS_SQL).fetchall()
            assert database.execute("SELECT COUNT(*) FROM studies_participant").fetchone() == (8,)
        else:
            assert Participant.objects.count() == 8
    rows = list(rows)
    assert [sequence for sequence, _ in rows] == list(range(8))
    assert [position for _, position in rows] == sequence(three_conditions.seed, 3, 8)
