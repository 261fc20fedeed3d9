"""Blocked balanced random assignment of participants to conditions.

The conditions are shuffled in blocks of one slot each; the study's nth
arrival takes slot n, so at any moment the counts of the conditions differ
by at most one. A block's order comes from the study's seed and the block's
number alone: the whole sequence can be replayed from the study file, and
each assignment records its block, slot and seed (``Assignment``).

Two arrivals must never take the same slot: the next slot is read and taken
under a lock on the study's row (``FOR NO KEY UPDATE``: the first lock of
the lock order in ``studies.transactions``; on SQLite every transaction here
begins with the write lock, spadesite/config.py), and a unique constraint on
(study, sequence) backs it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Max

from studies.models import Assignment, Condition, Participant, Study


@dataclass(frozen=True)
class Slot:
    """The next free slot of a study, read under its lock."""

    condition: Condition
    sequence: int
    block: int
    position_in_block: int
    seed: str


def block_seed(study_seed: int, block: int) -> str:
    return f"{study_seed}:{block}"


def block_order(study_seed: int, block: int, conditions: int) -> list[int]:
    """The condition positions of one block, in the order they are handed out.

    ``random.Random`` seeded with a string hashes it with SHA-512: the same
    order on every machine and Python run (no hash randomisation)."""
    order = list(range(conditions))
    random.Random(block_seed(study_seed, block)).shuffle(order)
    return order


def sequence(study_seed: int, conditions: int, count: int) -> list[int]:
    """The first ``count`` condition positions handed out (for audits and tests)."""
    return [
        block_order(study_seed, n // conditions, conditions)[n % conditions] for n in range(count)
    ]


def take_slot(study: Study) -> Slot:
    """The study's next slot, its row locked until the caller's transaction ends.

    The participant needs its condition before it is created, so the caller
    (``studies.participants.consent``) takes the slot, creates the
    participant and records it (:func:`record`) in one transaction."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("take_slot() must run inside a transaction (the slot's lock)")
    # NO KEY UPDATE: rows that refer to the study (a participant, its
    # assignment) may still be inserted by others meanwhile.
    seed = (
        Study.objects.select_for_update(no_key=True)
        .values_list("seed", flat=True)
        .get(pk=study.pk)
    )
    conditions = list(Condition.objects.filter(study=study).order_by("position"))
    # The unique (study, sequence) index answers this at once, however many came.
    last = Assignment.objects.filter(study=study).aggregate(last=Max("sequence"))["last"]
    taken = 0 if last is None else last + 1
    full = _full(study, conditions)
    if len(full) == len(conditions):
        raise StudyFull(f"study {study.slug}: every condition has all its places taken")
    # A full condition's slot goes unused: the next slot of the sequence is
    # taken instead, so the others stay balanced among themselves.
    while True:
        block, slot = divmod(taken, len(conditions))
        position = block_order(seed, block, len(conditions))[slot]
        if position not in full:
            return Slot(conditions[position], taken, block, slot, block_seed(seed, block))
        taken += 1


class StudyFull(Exception):
    """Every condition of the study has as many participants as its places."""


def _full(study: Study, conditions: list[Condition]) -> set[int]:
    """The positions of the conditions whose places are all taken."""
    if all(c.places is None for c in conditions):
        return set()
    counts = dict(
        Assignment.objects.filter(study=study)
        .values_list("condition_id")
        .annotate(n=Count("pk"))
    )
    return {
        c.position
        for c in conditions
        if c.places is not None and counts.get(c.pk, 0) >= c.places
    }


def record(study: Study, slot: Slot, participant: Participant) -> Assignment:
    return Assignment.objects.create(
        participant=participant,
        study=study,
        condition=slot.condition,
        sequence=slot.sequence,
        block=slot.block,
        position_in_block=slot.position_in_block,
        seed=slot.seed,
    )
