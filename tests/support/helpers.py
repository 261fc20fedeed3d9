"""Helpers for the live-table tests: tables with guests and bots, random legal play."""

from __future__ import annotations

import json
import random
from typing import Any

from game import master, seating
from game.engine import Match, Rules, view_for
from game.models import Table
from game.moves import matches
from game.sockets import frames

# One round, rarely two: the first partnership to score wins.
SHORT_RULES = Rules(winning_goal=1, losing_goal=0)
# A few rounds.
QUICK_RULES = Rules(winning_goal=100, losing_goal=-100)


def make_table(
    kinds: str = "HHHH",
    rules: Rules = SHORT_RULES,
    *,
    start: bool = True,
    stand_in_bots: bool = False,
    bot: str = "Random+Random",
) -> Table:
    """A table with humans (guests g0..g3) at 'H' and bots at 'B', N E S W."""
    table = seating.create_table(rules=rules, stand_in_bots=stand_in_bots)
    for position, kind in enumerate(kinds):
        if kind == "B":
            seating.add_bot(table, position, bot)
        else:
            seating.take_seat(
                table, position, guest_id=f"g{position}", guest_name=f"Guest {position}"
            )
    if start:
        seating.start_table(table)
    table.refresh_from_db()
    return table


def human_move(table: Table, rng: random.Random) -> tuple[int, Any]:
    """(seat, action) for the seat to act: a random legal action of its view."""
    match = matches.load_match(table)
    seat = match.round.to_act
    return seat, rng.choice(view_for(match, seat).legal_actions)


def play_humans(table: Table, rng: random.Random, until_version: int | None = None) -> Table:
    """Play random legal moves through the service until the match (or version) ends."""
    table.refresh_from_db()
    while table.status == Table.Status.PLAYING and (
        until_version is None or table.version < until_version
    ):
        seat, action = human_move(table, rng)
        master.submit(table.pk, seat, action, table.version)
        table.refresh_from_db()
    return table


def table_view(table: Table | int, seat: int | None) -> dict[str, Any]:
    """The ``view`` of a seat's state frame (``frames.state_frame``), as a dict."""
    pk = table.pk if isinstance(table, Table) else table
    view: dict[str, Any] = json.loads(frames.state_frame(pk, seat)[1])["view"]
    return view


def random_match(seed: str) -> Match:
    """A match played to its end by random legal actions, from ``seed``."""
    rng = random.Random(seed)
    match = Match(Rules(winning_goal=150, losing_goal=-100), seed)
    while not match.is_over:
        seat = match.round.to_act
        match.apply(rng.choice(view_for(match, seat).legal_actions))
    return match
