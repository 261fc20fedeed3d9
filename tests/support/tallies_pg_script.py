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
from django.db.models import F

from game import master, seating
from game.engine import Rules, view_for
from game.models import MatchResult, Rating, RoundRecordRow, Table
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
            guest = f"pg-{number}-{position}"
            seating.take_seat(table, position, guest_id=guest, guest_name=f"P{position}")
            # Rated people (conservative 0, 20, 4, 22 at N, E, S, W), so that the
            # rows carry their tables' rating bands through this store's paths.
            mu, sigma = (0.0, 20.0, 4.0, 22.0)[position] + 6.0, 2.0
            Rating.objects.create(key=f"g:{guest}", kind="guest", guest_id=guest, mu=mu,
                                  sigma=sigma, conservative=mu - 3 * sigma, matches=1)  # fmt: skip
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
    "table_bands": sorted({(t.band_ns, t.band_ew) for t in Table.objects.all()}),
    "rows_off_their_tables_bands": sum(
        model.objects.exclude(band_ns=F("table__band_ns"), band_ew=F("table__band_ew")).count()
        for model in (RoundRecordRow, MatchResult)
    ),
}))  # fmt: skip
