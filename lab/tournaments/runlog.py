"""The JSONL logs of long resumable runs (tournaments, self-play): a header line
with the run's settings, then one line per finished piece of work, appended
as it finishes. The readers live with each run, which knows its own header."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def rewrite(path: Path, header: dict[str, Any], records: Iterable[dict[str, Any]]) -> None:
    """Write ``header`` and ``records`` afresh (dropping the torn last line of a
    stopped run), through a temporary file so a crash leaves the old log whole."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w") as f:
        f.write(json.dumps(header) + "\n")
        for rec in records:
            f.write(json.dumps(rec) + "\n")
    tmp.replace(path)


def append(path: Path, header: dict[str, Any], record: dict[str, Any]) -> None:
    """Append one finished record. The file is opened for each record, not once
    per run: a log replaced under a running process (a git checkout, a copy
    put back) then gets every later record, where a file held open would write
    them to the unlinked old file; a log removed meanwhile starts again with
    ``header``."""
    with path.open("a") as f:
        if f.tell() == 0:
            f.write(json.dumps(header) + "\n")
        f.write(json.dumps(record) + "\n")
