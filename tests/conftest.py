"""Fixtures shared by every test folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import services


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
