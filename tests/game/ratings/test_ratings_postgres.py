"""On PostgreSQL: matches with an entrant in common end side by side through the event
loop's asyncio connections; each is rated once, in turn (game/ratings/match_end.py),
and the rebuild agrees (game/ratings/rebuild.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from lab.stack import stackprocs
from tests.support import SUPPORT, services

pytestmark = pytest.mark.stack

SCRIPT = SUPPORT / "ratings_pg_script.py"


@pytest.fixture
def database_url() -> Iterator[str]:
    with services.scratch_postgres("spades_ratings") as url:
        yield url


def test_concurrent_match_ends_rate_a_shared_guest_once_each(database_url: str) -> None:
    env = stackprocs.stack_env(database_url, None, SPADES_BOTS_IN_PROCESS="1")
    stackprocs.manage(env, "migrate", "-v0")
    out = stackprocs.manage(env, "shell", "-c", SCRIPT.read_text(), timeout=300)
    result = json.loads(out.strip().splitlines()[-1])
    assert result == {"matches": 6, "shared": 6, "ratings": 19, "equal": True}, result
