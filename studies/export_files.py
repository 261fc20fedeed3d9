"""The shape of a study's export files: each file's columns, defined once for
its writer and for the codebook (``studies.export``, ``studies.export_rounds``)."""

from __future__ import annotations

from dataclasses import dataclass

TIME = "date-time (ISO 8601, UTC)"
BOOL = "boolean (true/false)"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    unit: str
    meaning: str


@dataclass(frozen=True)
class ExportFile:
    name: str
    about: str
    columns: tuple[Column, ...]
    header: bool = True  # False: a platform's upload (Prolific's bulk bonus) takes none

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]


def col(name: str, type_: str, meaning: str, unit: str = "") -> Column:
    return Column(name, type_, unit, meaning)


PSEUDONYM = col("pseudonym", "text", "the participant's random pseudonym (not from the ID)")
