"""Run in a manage.py shell on a scratch PostgreSQL database (test_tallies_postgres): tables
played side by side on the event loop's asyncio connections, now and then a move made as a
stand-in's; then the rounds' tallies flushed by four threads at once (each taking what
the others do not hold); prints whether the tallies equal a scan of the stored rows."""

from __future__ import annotations

import asyncio
import json
import random
import threading

from django.db import connection

from game import master, seating
from game.engine import Rules, view_for
from game.models import RoundRecordRow, Table
from game.moves import matches
from game.research import tallies, tally_flush

RULES = Rules(winning_goal=100, losing_goal=-100).to_dict()
tally_flush.DELAY = 3600.0  # no flush of its own: the rounds wait for the threads below


async def play(table_pk: int, rng: random.Random) -> None:
    while True:
        table = await asyncio.to_thread(Table.objects.get, pk=table_pk)
        if table.status != Table.Status.PLAYING:
            return
        match = await asyncio.to_thread(matches.load_match, table)
        seat = match.round.to_act
        action = rng.choice(view_for(match, seat).legal_actions)
        stand_in = rng.random() < 0.05
        await master.get().submit_on_loop(
            table.pk, seat, action, table.version, by_stand_in=stand_in
        )


async def main() -> None:
    rng = random.Random(11)
    pks = []
    for number in range(6):
        table = seating.create_table(rules=RULES, stand_in_bots=False)
        for position in range(4):
            seating.take_seat(table, position, guest_id=f"pg-{number}-{position}",
                              guest_name=f"P{position}")  # fmt: skip
        seating.start_table(table)
        pks.append(table.pk)
    await asyncio.gather(*(play(pk, random.Random(rng.random())) for pk in pks))


asyncio.run(main())
pending = tally_flush.pending()
added: list[int] = []


def flush() -> None:
    try:
        added.append(tally_flush.flush_pending(limit=5))
    finally:
        connection.close()


threads = [threading.Thread(target=flush) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({
    "pending": pending,
    "added": sum(added),
    "left": tally_flush.pending(),
    "equal": tallies.stored() == tallies.scan(),
    "cells": len(tallies.stored()),
    "rounds": RoundRecordRow.objects.count(),
    "stand_in_rounds": RoundRecordRow.objects.filter(stand_in_round=True).count(),
}))  # fmt: skip
