"""On PostgreSQL: the tallies stay exact when several tables finish rounds at once through
the event loop's asyncio connections, and their rounds are flushed by several threads at
once (concurrent upserts of the same cells; each round taken by one flush)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from lab.stack import stackprocs
from tests.support import SUPPORT, services

pytestmark = pytest.mark.stack

SCRIPT = SUPPORT / "tallies_pg_script.py"


@pytest.fixture
def database_url() -> Iterator[str]:
    with services.scratch_postgres("spades_tallies") as url:
        yield url


def test_concurrent_round_ends_keep_the_tallies_exact(database_url: str) -> None:
    env = stackprocs.stack_env(database_url, None, SPADES_BOTS_IN_PROCESS="1")
    stackprocs.manage(env, "migrate", "-v0")
    out = stackprocs.manage(env, "shell", "-c", SCRIPT.read_text(), timeout=300)
    result = json.loads(out.strip().splitlines()[-1])
    assert result["rounds"] >= 6 and result["stand_in_rounds"] >= 1
    assert result["pending"] == result["rounds"] == result["added"], result
    assert result["left"] == 0 and result["equal"], result
    # N/S: the mean of 0 and 4 (band 1, below 5); E/W: of 20 and 22 (band 4).
    assert result["table_bands"] == [[1, 4]] and result["rows_off_their_tables_bands"] == 0


# Cells written before migration 0021 (and after it, to the same cells and to new ones):
# printed back as (span, partition, n) in key order.
WRITE_CELLS = """
import json
from datetime import date
from django.db import connection
from game.research import tallies
def key(span, start, who):
    return (span, start, "std", False, "HB", "BIS+SRP", "BB", False, "A", who, 1, 0, 0, False, 0, 0)
tallies._write({key("a", date(1970, 1, 1), "human"): [1, 1, 0, 10, 0, 0],
                key("m", date(2026, 3, 1), "human"): [1, 0, 1, 20, 0, 0],
                key(SPAN, date(2026, 3, 2), "BIS"): [1, 0, 0, 30, 0, 0]})
with connection.cursor() as c:
    c.execute("SELECT span, tableoid::regclass::text, n, points FROM game_roundtally "
              "ORDER BY span, start, who")
    print(json.dumps(c.fetchall()))
"""


def _cells(env: dict[str, str], span: str) -> list[list[object]]:
    out = stackprocs.manage(env, "shell", "-c", WRITE_CELLS.replace("SPAN", repr(span)))
    return json.loads(out.strip().splitlines()[-1])


def test_the_tallies_are_partitioned_by_span_and_the_migration_goes_both_ways(
    database_url: str,
) -> None:
    """Migration 0021 (docs/exports.md): the all-time, month, week and day cells each in a
    partition of their own, the rows kept, upserts adding to them; and back."""
    env = stackprocs.stack_env(database_url, None, SPADES_BOTS_IN_PROCESS="1")
    stackprocs.manage(env, "migrate", "game", "0020", "-v0")
    assert _cells(env, "d") == [
        ["a", "game_roundtally", 1, 10], ["d", "game_roundtally", 1, 30],
        ["m", "game_roundtally", 1, 20],
    ]  # fmt: skip
    stackprocs.manage(env, "migrate", "-v0")
    # The same cells again add to the rows the migration copied; a week cell is new.
    assert _cells(env, "w") == [
        ["a", "game_roundtally_a", 2, 20], ["d", "game_roundtally_d", 1, 30],
        ["m", "game_roundtally_m", 2, 40], ["w", "game_roundtally_w", 1, 30],
    ]  # fmt: skip
    stackprocs.manage(env, "migrate", "game", "0020", "-v0")
    assert _cells(env, "w") == [
        ["a", "game_roundtally", 3, 30], ["d", "game_roundtally", 1, 30],
        ["m", "game_roundtally", 3, 60], ["w", "game_roundtally", 2, 60],
    ]  # fmt: skip
    stackprocs.manage(env, "migrate", "-v0")
    assert "tallies" in stackprocs.manage(env, "rebuild_tallies")  # no rounds: none left
    assert _cells(env, "d")[0] == ["a", "game_roundtally_a", 1, 10]
    # The site's connections compile no query (spadesite/config.py: POSTGRES_OPTIONS).
    show_jit = (
        "from django.db import connection\nwith connection.cursor() as c:\n"
        "    c.execute('SHOW jit')\n    print(c.fetchone()[0])"
    )
    assert stackprocs.manage(env, "shell", "-c", show_jit).split()[-1] == "off"
