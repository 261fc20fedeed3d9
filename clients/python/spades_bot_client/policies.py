"""Policies: a function from a decision to one of its legal actions."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spades_bot_client.session import Decision

Policy = Callable[["Decision"], dict[str, Any]]


def random_policy(rng: random.Random | None = None) -> Policy:
    """A random legal action at every decision (seeded by ``rng``)."""
    chooser = rng if rng is not None else random.Random()

    def choose(decision: Decision) -> dict[str, Any]:
        return chooser.choice(decision.legal_actions)

    return choose
