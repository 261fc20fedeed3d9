"""Run in a manage.py shell on a scratch PostgreSQL database (test_ratings_postgres):
tables with one guest in common end their matches side by side on the event loop's
asyncio connections (the shared rating row locked by each end in turn); prints the
ratings and whether ``rebuild_ratings`` gives them again."""

from __future__ import annotations

import asyncio
import json
import random

from game import master, seating
from game.engine import Rules, view_for
from game.models import MatchResult, Table
from game.moves import matches
from game.ratings.models import Rating, RatingChange
from game.ratings.rebuild import rebuild

RULES = Rules(winning_goal=1, losing_goal=0).to_dict()


async def play(table_pk: int, rng: random.Random) -> None:
    while True:
        table = await asyncio.to_thread(Table.objects.get, pk=table_pk)
        if table.status != Table.Status.PLAYING:
            return
        match = await asyncio.to_thread(matches.load_match, table)
        seat = match.round.to_act
        action = rng.choice(view_for(match, seat).legal_actions)
        await master.get().submit_on_loop(table.pk, seat, action, table.version)


async def main() -> None:
    rng = random.Random(45)
    pks = []
    for number in range(6):
        table = seating.create_table(rules=RULES, stand_in_bots=False)
        for position in range(4):
            guest = "shared" if position == 0 else f"pg-{number}-{position}"
            seating.take_seat(table, position, guest_id=guest, guest_name=f"P{position}")
        seating.start_table(table)
        pks.append(table.pk)
    await asyncio.gather(*(play(pk, random.Random(rng.random())) for pk in pks))


def snapshot() -> list[tuple[object, ...]]:
    return sorted(Rating.objects.values_list("key", "mu", "sigma", "matches", "wins"))


asyncio.run(main())
live = snapshot()
changes = sorted(RatingChange.objects.values_list("rating__key", "table_id", "mu_before", "mu"))
rebuild()
print(json.dumps({
    "matches": MatchResult.objects.count(),
    "shared": Rating.objects.get(key="g:shared").matches,
    "ratings": Rating.objects.count(),
    "equal": snapshot() == live and changes == sorted(
        RatingChange.objects.values_list("rating__key", "table_id", "mu_before", "mu")),
}))  # fmt: skip
