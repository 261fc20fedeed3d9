"""``SeatView.from_dict`` undoes ``to_dict`` through JSON: a bot written against
``SeatView`` sees through the bot protocol exactly what ``view_for`` gives it."""

from __future__ import annotations

import json
import random

import pytest

from game.engine import Match, Rules, view_for
from game.engine.view import SeatView


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(winning_goal=200, losing_goal=-200, blind_nil_pass=2, blind_nil_min_deficit=0)],
)
def test_every_seats_view_comes_back_whole_from_its_json(rules: Rules) -> None:
    checked = 0
    for game in range(12):
        match, rng = Match(rules, f"view-dict/{game}"), random.Random(game)
        while not match.is_over and len(match.rounds) < 5:
            for seat in range(4):
                view = view_for(match, seat)
                frame = {**view.to_dict(), "version": match.version, "table": {"id": "x"}}
                assert SeatView.from_dict(json.loads(json.dumps(frame))) == view
                checked += 1
            seat = match.round.to_act
            match.apply(rng.choice(view_for(match, seat).legal_actions))
    assert checked > 2000


def test_a_view_that_is_not_one_is_refused() -> None:
    data = view_for(Match(Rules(), "refused"), 0).to_dict()
    with pytest.raises((KeyError, ValueError)):
        SeatView.from_dict({**data, "phase": "dancing"})
    with pytest.raises(KeyError):
        SeatView.from_dict({k: v for k, v in data.items() if k != "hand"})
