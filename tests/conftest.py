"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def no_match_kept_from_another_test() -> None:
    """A process's kept matches belong to its database: tests reuse primary keys
    (a rolled-back or flushed database), so each test starts with none."""
    from game.moves import matches

    matches.clear_cache()


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
