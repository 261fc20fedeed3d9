"""Fixtures for the live-table tests: bots inline, no pacing, a fresh match cache.

Not a conftest: the conftest files of the folders whose tests play at live
tables (tests/game/, tests/lobby/, tests/spadesite/, tests/stack/, tests/botapi/,
tests/lab/) import them, so that they reach those folders and no others."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from game import master
from game.moves import matches
from game.sockets import limits, watchers
from tests.support.inline import InlineScheduler


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


INLINE = "tests.support.inline.InlineScheduler"


@pytest.fixture
def live(settings: Any) -> Iterator[InlineScheduler]:
    """Bots in-process and inline (deterministic), no pacing delay, in-memory channel layer."""
    settings.SPADES_BOTS_IN_PROCESS = True
    settings.SPADES_SCHEDULER = INLINE
    settings.SPADES_BOT_DELAY = 0
    layer = "game.sockets.memory_layer.TableChannelLayer"
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": layer}}
    matches.clear_cache()
    inline = master.get().scheduler
    assert isinstance(inline, InlineScheduler)
    yield inline
    assert inline.errors == []
    matches.clear_cache()
