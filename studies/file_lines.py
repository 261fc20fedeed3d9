"""Where a key of a TOML file sits: ``tomllib`` parses without positions, and a
study file's errors must name their line (``FILE:LINE: message``), so this
scans the text once for its table headers and keys.

A path is what the parsed data is indexed by: ``("conditions", 1, "seats")``
is the ``seats`` key of the second ``[[conditions]]``. A path that is not in
the file (a missing key) falls back to its nearest enclosing table's line.
Inline tables and arrays are one line: their inner keys name the line of the
key that holds them.

:class:`FileReader` reads the parsed values with those lines at hand: each
wrong or missing value is noted as ``FILE:LINE: message`` and reading goes
on, so that one run lists every problem of a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bots.registry import UnknownBot, make_bot
from game import external_bots
from game.errors import SeatError

Path = tuple[str | int, ...]

_ARRAY_HEADER = re.compile(r"^\[\[\s*([A-Za-z0-9_.\- ]+?)\s*\]\]")
_TABLE_HEADER = re.compile(r"^\[\s*([A-Za-z0-9_.\- ]+?)\s*\]")
_KEY = re.compile(r"^([A-Za-z0-9_\-]+(?:\s*\.\s*[A-Za-z0-9_\-]+)*)\s*=(.*)$")


def _parts(dotted: str) -> list[str]:
    return [p.strip() for p in dotted.split(".")]


@dataclass
class FileLines:
    """The line (from 1) of every table header and key of one TOML text."""

    lines: dict[Path, int] = field(default_factory=dict)

    @classmethod
    def scan(cls, text: str) -> FileLines:
        found = cls()
        arrays: dict[tuple[str, ...], int] = {}  # array-of-tables path -> tables seen
        current: Path = ()
        closing: str | None = None  # the delimiter of an open multi-line string
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if closing is not None:
                if line.count(closing) % 2 == 1:
                    closing = None
                continue
            if header := _ARRAY_HEADER.match(line):
                name = tuple(_parts(header.group(1)))
                arrays[name] = arrays.get(name, 0) + 1
                current = found._resolve(name, arrays)
            elif header := _TABLE_HEADER.match(line):
                current = found._resolve(tuple(_parts(header.group(1))), arrays)
            elif key := _KEY.match(line):
                found.lines.setdefault((*current, *_parts(key.group(1))), number)
                closing = _opens_multiline(key.group(2))
                continue
            else:
                continue
            found.lines.setdefault(current, number)
        return found

    def _resolve(self, name: tuple[str, ...], arrays: dict[tuple[str, ...], int]) -> Path:
        """A header's path, with the index of every array of tables it passes."""
        path: list[str | int] = []
        for depth in range(1, len(name) + 1):
            path.append(name[depth - 1])
            if name[:depth] in arrays:
                path.append(arrays[name[:depth]] - 1)
        return tuple(path)

    def line_of(self, path: Path) -> int:
        """The line of ``path``, or of its nearest enclosing table or key (1: the file)."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return 1


def _opens_multiline(value: str) -> str | None:
    """The delimiter of a multi-line string the value opens and leaves open."""
    for delimiter in ('"""', "'''"):
        if value.count(delimiter) % 2 == 1:
            return delimiter
    return None


_REQUIRED = object()


class FileReader:
    """Reads parsed TOML values, noting each problem as ``FILE:LINE: message``."""

    def __init__(self, name: str, lines: FileLines) -> None:
        self.name, self.lines, self.problems = name, lines, []

    def problem(self, path: Path, message: str) -> None:
        self.problems.append(f"{self.name}:{self.lines.line_of(path)}: {message}")

    def value(self, data: dict, path: Path, key: str, kind: type, default: Any = _REQUIRED) -> Any:
        """``data[key]`` of type ``kind`` (text: non-empty), else a problem and ``default``."""
        where = ".".join(str(p) for p in (*path, key) if isinstance(p, str))
        if key not in data:
            if default is _REQUIRED:
                self.problem(path, f"{where} is missing")
                return None
            return default
        got = data[key]
        wrong = not isinstance(got, kind) or (kind is int and isinstance(got, bool))
        if kind is float and isinstance(got, int) and not isinstance(got, bool):
            got, wrong = float(got), False
        if wrong or (kind is str and not got.strip()):
            need = {
                str: "a non-empty text",
                int: "a whole number",
                bool: "true or false",
                float: "a number",
                dict: "a table",
                list: "a list",
            }[kind]
            self.problem((*path, key), f"{where} must be {need}, not {got!r}")
            return None if default is _REQUIRED else default
        return got

    def only(self, data: dict, path: Path, allowed: set[str]) -> None:
        for key in sorted(set(data) - allowed):
            self.problem((*path, key), f"unknown key {key!r} (known: {', '.join(sorted(allowed))})")

    def number(self, data: dict, path: Path, key: str, low: int, high: int, default: Any) -> Any:
        got = self.value(data, path, key, int, default)
        if isinstance(got, int) and not low <= got <= high:
            self.problem((*path, key), f"{key} must be between {low} and {high}, not {got}")
        return got

    def text(
        self,
        data: dict,
        path: Path,
        key: str,
        pattern: re.Pattern[str],
        what: str,
        default: Any = _REQUIRED,
    ) -> Any:
        got = self.value(data, path, key, str, default)
        if isinstance(got, str) and not pattern.match(got):
            self.problem((*path, key), f"{key} {got!r} is not {what}")
        return got

    def bot(self, data: dict, path: Path, key: str, default: Any = _REQUIRED) -> Any:
        name = self.value(data, path, key, str, default)
        if isinstance(name, str) and not self.is_bot(name):
            self.problem(
                (*path, key),
                f"unknown bot {name!r} (bots are BIDDER+PLAYER names "
                "of bots/registry.py, e.g. BIS+SRP)",
            )
        return name

    @staticmethod
    def is_bot(name: str, external: bool = False) -> bool:
        """A house bot of the registry; with ``external``, also a registered
        external bot ``ext:<name>`` that may be seated now (a live token)."""
        try:  # the check a table's seat makes (game.seating.add_bot)
            if external and external_bots.is_external(name):
                external_bots.check(name)
            else:
                make_bot(name)
        except (UnknownBot, SeatError):
            return False
        return True

    def tables(self, data: dict, path: Path, key: str) -> list[tuple[Path, dict]]:
        """A non-empty array of tables (``[[key]]``), as (path, table) pairs."""
        given = self.value(data, path, key, list)
        if given == []:
            self.problem((*path, key), f"{key} needs at least one table")
        out = []
        for index, table in enumerate(given or []):
            if isinstance(table, dict):
                out.append(((*path, key, index), table))
            else:
                self.problem((*path, key, index), f"each of {key} must be a table, not {table!r}")
        return out

    def section(self, data: dict, key: str, required: bool = True) -> dict | None:
        if key not in data and not required:
            return None
        return self.value(data, (), key, dict, None if required else {}) or {}
