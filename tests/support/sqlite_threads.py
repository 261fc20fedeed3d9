"""The test database as other threads see it, for tests of concurrent requests."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db import connection


@contextmanager
def threads_database(path: Path) -> Iterator[sqlite3.Connection | None]:
    """SQLite's in-memory test database copied to a file, which new connections
    (other threads') open meanwhile: the in-memory one is shared-cache, whose
    locks fail at once ("database table is locked") instead of waiting as a
    file's write lock does on the site (spadesite/config.py: BEGIN IMMEDIATE).
    Any other test database as it is (None)."""
    if connection.vendor != "sqlite" or not connection.is_in_memory_db():
        yield None
        return
    connection.ensure_connection()
    copy = sqlite3.connect(path)
    connection.connection.backup(copy)
    name = connection.settings_dict["NAME"]
    connection.settings_dict["NAME"] = str(path)  # the dict every new wrapper shares
    try:
        yield copy
    finally:
        connection.settings_dict["NAME"] = name
        copy.close()
