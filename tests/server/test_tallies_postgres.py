"""On PostgreSQL: the tallies stay exact when several tables finish rounds at once through
the event loop's asyncio connections, and their rounds are flushed by several threads at
once (concurrent upserts of the same cells; each round taken by one flush)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.stack import stackprocs
from tests import services

pytestmark = pytest.mark.stack

SCRIPT = Path(__file__).with_name("tallies_pg_script.py")


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
