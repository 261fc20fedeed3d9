"""The two halves of a seat's view: what differs by seat, and what all see alike."""

from __future__ import annotations

import random

from game.engine import Match, Rules, private_part, view_for


def test_private_and_public_parts_make_the_whole_view_and_the_public_part_is_shared() -> None:
    rng = random.Random(7)
    match = Match(Rules(blind_nil_pass=2), "parts")
    for _ in range(200):
        if match.is_over:
            break
        views = [view_for(match, seat) for seat in (None, 0, 1, 2, 3)]
        for view in views:
            private, public = view.private_dict(), view.public_dict()
            assert not set(private) & set(public)
            assert {**private, **public} == view.to_dict()
        assert all(v.public_dict() == views[0].public_dict() for v in views)
        seat = match.round.to_act
        match.apply(rng.choice(view_for(match, seat).legal_actions))


def test_the_public_part_holds_no_hand() -> None:
    match = Match(Rules(), "no-hands")
    seat = match.round.to_act
    view = view_for(match, seat)
    assert len(view.private_dict()["hand"]) == 13
    assert view_for(match, None).private_dict()["hand"] is None
    assert "hand" not in view.public_dict() and "legal_actions" not in view.public_dict()


def test_the_private_part_alone_is_the_views_private_part() -> None:
    # game.sockets.frames sends it per socket without building the rest of the view;
    # whole matches, so that blind nil exchanges (passed, received) come up.
    exchanges = 0
    for seed in range(12):
        rng = random.Random(seed)
        match = Match(Rules(blind_nil_pass=2), f"private-{seed}")
        while not match.is_over and match.version < 2000:
            for seat in (None, 0, 1, 2, 3):
                assert private_part(match, seat) == view_for(match, seat).private_dict()
            exchanges += any(private_part(match, seat)["received"] for seat in range(4))
            seat = match.round.to_act
            match.apply(rng.choice(view_for(match, seat).legal_actions))
    assert exchanges > 0
