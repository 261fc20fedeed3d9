"""The tables of the websocket load benchmark (``manage.py bench_server``),
made in the server's environment before any client connects (``lab.bench.loadtest``
runs the clients)."""

from __future__ import annotations

import random
from typing import Any


def prepare_tables(
    count: int,
    seed: int = 1,
    rules: dict[str, Any] | None = None,
    bots: dict[int, str] | None = None,
    bot_delay: float | None = None,
    spread: bool = False,
) -> list[dict[str, Any]]:
    """``count`` started tables of guests (default rules unless ``rules``, a
    ``Rules.to_dict()``), with the bot ``bots[seat]`` at those seats:
    [{"public_id", "pk", "sessions": [4 session keys, None at a bot], "cookie"}].

    ``spread``: each table (humans only) is played on by 0 to 55 random legal
    moves, so that the tables' rounds end at different moments as on a live
    site, instead of all at the same move."""
    from django.conf import settings
    from django.contrib.sessions.backends.db import SessionStore

    from game import identity, seating

    rng = random.Random(seed)
    bots = bots or {}
    tables = []
    for number in range(count):
        table = seating.create_table(rules=rules, stand_in_bots=False, bot_delay=bot_delay)
        keys: list[str | None] = []
        for position in range(4):
            if position in bots:
                seating.add_bot(table, position, bots[position])
                keys.append(None)
                continue
            guest_id = f"bench-{number}-{position}-{rng.getrandbits(48):012x}"
            session = SessionStore()
            session[identity.GUEST_ID_KEY] = guest_id
            session[identity.GUEST_NAME_KEY] = f"Bench {number}.{position}"
            session.create()
            keys.append(session.session_key)
            seating.take_seat(
                table, position, guest_id=guest_id, guest_name=f"Bench {number}.{position}"
            )
        seating.start_table(table)
        if spread and not bots:
            _advance(table.pk, rng.randrange(ROUND_ACTIONS), rng)
        tables.append({"public_id": table.public_id, "pk": table.pk, "sessions": keys})
    return [{**t, "cookie": settings.SESSION_COOKIE_NAME} for t in tables]


ROUND_ACTIONS = 56  # a first round: four bids and 52 cards (no score yet allows a blind nil)


def _advance(table_pk: int, count: int, rng: random.Random) -> None:
    """Make ``count`` random legal moves at a table (set-up, before any socket)."""
    from game import master
    from game.engine import view_for
    from game.models import Table
    from game.moves import matches

    match = matches.load_match(Table.objects.get(pk=table_pk))
    for _ in range(count):
        seat = match.round.to_act
        legal = view_for(match, seat).legal_actions
        if seat is None or not legal:
            return
        action = rng.choice(legal)
        master.submit(table_pk, seat, action, match.version)
        match.apply(action)
