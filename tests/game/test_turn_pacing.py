"""A bot that leads right after a finished trick waits longer, so the players
see the trick gathered to its winner (game.master.TRICK_PAUSE, table.js)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from game import master
from game.models import Seat, Table
from tests.support.helpers import human_move, make_table

pytestmark = pytest.mark.django_db


def test_the_pause_after_a_trick_scales_the_bot_delay(settings: Any) -> None:
    settings.SPADES_BOT_DELAY = 0.6
    table = make_table("HBBB", bot="BIS+SRP", start=False)
    seats = {s.position: s for s in Seat.objects.filter(table=table)}
    plain = master.next_turn(table, seats, 1, 5)
    paused = master.next_turn(table, seats, 1, 5, after_trick=True)
    assert plain is not None and paused is not None
    assert plain.delay == pytest.approx(0.6)
    assert paused.delay == pytest.approx(0.6 * (1 + master.TRICK_PAUSE))
    assert master.next_turn(table, seats, 0, 5, after_trick=True) is None  # a human's own turn
    settings.SPADES_BOT_DELAY = 0  # benchmarks and tests: no pacing at all
    assert master.next_turn(table, seats, 1, 5, after_trick=True).delay == 0  # type: ignore[union-attr]


@pytest.mark.django_db(transaction=True)  # after_commit runs on commit
def test_after_commit_says_when_a_move_finished_a_trick(monkeypatch: pytest.MonkeyPatch) -> None:
    table = make_table("HHHH")
    seen: list[tuple[str, bool]] = []
    real = master.next_turn

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append((last[0], kwargs.get("after_trick", False)))
        return real(*args, **kwargs)

    monkeypatch.setattr(master, "next_turn", spy)
    rng = random.Random(3)
    last = [""]
    while len([kind for kind, _ in seen if kind == "play"]) < 8 and len(seen) < 40:
        table.refresh_from_db()
        seat, action = human_move(table, rng)
        last[0] = type(action).__name__.lower()
        master.submit(table.pk, seat, action, table.version)
    plays = [after for kind, after in seen if kind == "play"]
    assert plays == [False, False, False, True] * 2
    assert not any(after for kind, after in seen if kind != "play")
    assert Table.objects.get(pk=table.pk).status == Table.Status.PLAYING
