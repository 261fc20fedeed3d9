"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import services


@pytest.fixture(autouse=True)
def no_match_kept_from_another_test() -> None:
    """A process's kept matches belong to its database: tests reuse primary keys
    (a rolled-back or flushed database), so each test starts with none."""
    from game.moves import matches

    matches.clear_cache()


@pytest.fixture(scope="session")
def repo_root(pytestconfig: pytest.Config) -> Path:
    return Path(pytestconfig.rootpath)


@pytest.fixture
def redis_url() -> str:
    """URL of a reachable Redis (skips, or fails under CI, when there is none)."""
    return services.redis_url()


@pytest.fixture
def postgres_url() -> str:
    """URL of a reachable PostgreSQL (skips, or fails under CI, when there is none)."""
    return services.postgres_url()


@pytest.fixture(autouse=True)
def a_server_long_up() -> Iterator[None]:
    """Tests move turn clocks into the past: the server process has been up
    longer than that (a test of a restart sets its own start). Not through
    ``monkeypatch``, which tests undo for their own patches."""
    from datetime import timedelta

    from django.utils import timezone

    from game.driver import sweeper

    started, sweeper.STARTED_AT = sweeper.STARTED_AT, timezone.now() - timedelta(days=1)
    yield
    sweeper.STARTED_AT = started
