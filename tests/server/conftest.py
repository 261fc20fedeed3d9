"""Fixtures for the live-table tests: bots inline, no pacing, a fresh match cache."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from game import limits, matches, runner, watchers


@pytest.fixture(autouse=True)
def fresh_rate_limits() -> Iterator[None]:
    """Each test starts with no request counted against the rate limits, and
    nobody watching."""
    limits.reset()
    watchers.reset()
    yield
    limits.reset()
    watchers.reset()


@pytest.fixture
def machine_speed(settings: Any) -> None:
    """No rate limits: for tests whose clients act as fast as a machine can."""
    settings.SPADES_RATE_LIMITS = False


@pytest.fixture
def live(settings: Any) -> Iterator[runner.InlineRunner]:
    """Bots in-process and inline (deterministic), no pacing delay, in-memory channel layer."""
    settings.SPADES_BOTS_IN_PROCESS = True
    settings.SPADES_BOTS_INLINE = True
    settings.SPADES_BOT_DELAY = 0
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "game.events.TableChannelLayer"}}
    matches.clear_cache()
    runner.reset_runners()
    inline = runner.get_runner()
    assert isinstance(inline, runner.InlineRunner)
    yield inline
    assert inline.errors == []
    runner.reset_runners()
    matches.clear_cache()
