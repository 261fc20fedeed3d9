"""The shape of a study's export files: each file's columns, defined once for
its writer and for the codebook (``studies.export``, ``studies.export_rounds``)."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

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


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def write_csv(path: Path, spec: ExportFile, rows: Iterable[Mapping[str, Any]]) -> int:
    """The rows under the file's header; each row must have exactly its columns."""
    count = 0
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        if spec.header:
            writer.writerow(spec.names)
        for row in rows:
            if list(row) != spec.names:
                raise ValueError(f"{spec.name}: a row with {list(row)}, not {spec.names}")
            writer.writerow([_cell(row[name]) for name in spec.names])
            count += 1
    return count
