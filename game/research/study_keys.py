"""The studies the dashboard and the round exports filter by, named for them.

The game knows a study only as a number on its tables, copied to their rows
and tallies (``Table.study_condition``: the study condition's id, 0 for
none) with a pilot flag (``Table.pilot``): the ``studies`` app, above this
layer, sets both when it forms a table and names them here through
:func:`register` (its app config), so that nothing in ``game`` imports it.
Without it (a site without studies) there is nothing to choose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

NO_STUDY = 0  # the study condition of every table no study formed


@dataclass(frozen=True)
class StudyChoice:
    slug: str
    title: str
    pilot: bool
    conditions: tuple[tuple[int, str], ...]  # (id, name), in the study file's order


_named: list[Callable[[], list[StudyChoice]]] = []


def register(source: Callable[[], list[StudyChoice]]) -> None:
    """Name the studies with ``source`` (called on every read: studies come and go)."""
    _named[:] = [source]


def studies() -> list[StudyChoice]:
    return _named[0]() if _named else []


def conditions_of(slug: str) -> tuple[tuple[int, str], ...] | None:
    """The study's conditions, or None if there is no such study."""
    for s in studies():
        if s.slug == slug:
            return s.conditions
    return None
