"""Run in a manage.py shell on a scratch PostgreSQL database (test_quick_moves): one
table of four guests played on the event loop's asyncio connections; counts how
many moves were one statement (the quick move) and how many took the full path,
and checks what the quick move must never do: act on an old version, an illegal
action, or seats changed by another process."""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

from game import master, seating
from game.engine import Play, Rules, replay, view_for
from game.engine.state import Phase
from game.errors import IllegalMove, StaleVersion
from game.models import Action, PendingRound, RoundRecordRow, Seat, Table
from game.moves import matches
from game.moves.stores import asyncio_steps, postgres
from game.research import round_rows
from game.sockets import frames

RULES = Rules(winning_goal=10_000, losing_goal=-10_000).to_dict()
counts = {"quick": 0, "refused": 0, "full": 0}

run_alone, run_steps_async = postgres.run_alone, asyncio_steps.run_steps_async


async def counted_alone(conn: Any, query: Any) -> Any:
    made = await run_alone(conn, query)
    counts["quick" if made else "refused"] += 1
    return made


async def counted_steps(conn: Any, steps: Any) -> Any:
    counts["full"] += 1
    return await run_steps_async(conn, steps)


postgres.run_alone, asyncio_steps.run_steps_async = counted_alone, counted_steps


def reset() -> None:
    counts.update(quick=0, refused=0, full=0)


def state(pk: int) -> tuple[int, int]:
    table = Table.objects.get(pk=pk)
    return table.version, Action.objects.filter(table=table).count()


def to_act(pk: int) -> tuple[Table, int, Any]:
    table = Table.objects.get(pk=pk)
    match = matches.load_match(table)
    return table, match.round.to_act, match


async def move(pk: int, rng: random.Random) -> Any:
    table, seat, match = await asyncio.to_thread(to_act, pk)
    action = rng.choice(view_for(match, seat).legal_actions)
    return await master.get().submit_on_loop(pk, seat, action, table.version)


async def human_to_act(pk: int, bot: int, rng: random.Random) -> tuple[Table, int, Any]:
    """:func:`to_act` once a human is to act outside the round's last tricks
    (the stand-in bot at ``bot`` moves on the runner's thread; the humans play
    on through a round's end)."""
    deadline = time.monotonic() + 30
    while True:
        table, seat, match = await asyncio.to_thread(to_act, pk)
        if seat == bot:
            assert time.monotonic() < deadline, "the bot did not move"
            await asyncio.sleep(0.05)
        elif len(match.round.tricks) >= 11:
            await move(pk, rng)
        else:
            return table, seat, match


def checked_against_the_database(pk: int) -> tuple[bool, bool]:
    """The remembered state of the table's version against the log replayed and
    the rows read: (the views agree, the table's info agrees)."""
    table = Table.objects.get(pk=pk)
    entry = matches.cached(pk, table.version)
    assert entry is not None and entry.info is not None
    matches.clear_cache()
    replayed = matches.load_match(table)
    views = all(view_for(replayed, s) == view_for(entry.match, s) for s in range(4))
    seats = {s.position: s for s in Seat.objects.filter(table=table).select_related("user")}
    return views, frames.table_info(table, seats) == entry.info


async def main() -> dict[str, Any]:
    rng = random.Random(5)
    out: dict[str, Any] = {}
    table = await asyncio.to_thread(seating.create_table, rules=RULES, stand_in_bots=True)
    for position in range(4):
        await asyncio.to_thread(seating.take_seat, table, position, guest_id=f"q{position}",
                                guest_name=f"Q{position}")  # fmt: skip
    await asyncio.to_thread(seating.start_table, table)
    pk = table.pk

    # 1. A whole round: only the first move in full (the last card is quick too).
    while not (await move(pk, rng)).round_over:
        pass
    out["first_round"] = {"quick": counts["quick"], "full": counts["full"]}
    out["first_round_actions"] = await asyncio.to_thread(
        lambda: Action.objects.filter(table_id=pk, round_number=1).count()
    )

    def first_round_row() -> dict[str, Any]:
        last = Action.objects.filter(table_id=pk, round_number=1).order_by("-version").first()
        # The last card's statement inserted a pending round; its row is written
        # after the move (by the flush a second later, or here).
        pending = PendingRound.objects.filter(table_id=pk)
        pending = list(pending.values_list("round_number", "version"))
        round_rows.record_pending()
        row = RoundRecordRow.objects.get(table_id=pk, round_number=1)
        return {
            "pending_or_written": pending in ([(1, last.version)], []),
            "version_is_last_card": row.version == last.version,
            "replays": replay(row.record).phase is Phase.DONE,
            "stand_in_moves": row.stand_in_moves,
            "seat_kinds": row.seat_kinds,
            "rules": row.rules == RULES,
        }

    out["first_round_row"] = await asyncio.to_thread(first_round_row)

    # 2. An old version and an illegal card: refused, nothing changed.
    while True:  # into the cards of round 2
        table, seat, match = await asyncio.to_thread(to_act, pk)
        if isinstance(view_for(match, seat).legal_actions[0], Play):
            break
        await move(pk, rng)
    before = await asyncio.to_thread(state, pk)
    legal = view_for(match, seat).legal_actions
    try:
        await master.get().submit_on_loop(pk, seat, legal[0], table.version - 1)
        out["stale"] = "accepted"
    except StaleVersion:
        same = await asyncio.to_thread(state, pk) == before
        out["stale"] = "refused, nothing changed" if same else "refused, changed"
    foreign = next(c for c in range(52) if not match.round.hands[seat] >> c & 1)
    try:
        await master.get().submit_on_loop(pk, seat, Play(seat, foreign), table.version)
        out["illegal"] = "accepted"
    except IllegalMove:
        same = await asyncio.to_thread(state, pk) == before
        out["illegal"] = "refused, nothing changed" if same else "refused, changed"

    # 3. Another process hands a seat to a bot: the next move's one statement
    #    changes nothing, the full path makes it with the new seats; then quick again.
    while True:
        table, seat, match = await asyncio.to_thread(to_act, pk)
        if len(match.round.trick) <= 1:
            break
        await move(pk, rng)
    leaver = (seat + 2) % 4
    await asyncio.to_thread(seating.hand_over, pk, leaver)
    reset()
    await move(pk, rng)
    known = matches.remembered_rows(pk)
    bot_seen = known is not None and known.seats[leaver].kind == Seat.Kind.BOT
    refused = counts["refused"]
    reset()
    await move(pk, rng)
    out["after_hand_over"] = {
        "quick_refused": refused,
        "bot_seen": bot_seen,
        "then_quick": counts == {"quick": 1, "refused": 0, "full": 0},
    }
    # 4. Rows kept from an earlier version serve while the seats are the same: the
    #    move before was made elsewhere (here on Django's connection; its state
    #    reaches this process as another process's group message would).
    out["rows_of_an_earlier_version"] = {}
    for case, by_stand_in in (("same_seats", False), ("a_seat_changed", True)):
        table, seat, match = await human_to_act(pk, leaver, rng)
        earlier = matches.remembered_rows(pk)
        action = rng.choice(view_for(match, seat).legal_actions)
        await asyncio.to_thread(master.submit, pk, seat, action, table.version,
                                by_stand_in=by_stand_in)  # fmt: skip
        await human_to_act(pk, leaver, rng)
        assert earlier is not None
        matches.remember_rows(pk, earlier)  # the moves since were made elsewhere
        reset()
        await move(pk, rng)
        out["rows_of_an_earlier_version"][case] = (
            "quick" if counts == {"quick": 1, "refused": 0, "full": 0}
            else "full" if counts == {"quick": 0, "refused": 1, "full": 1}
            else repr(counts)
        )  # fmt: skip
    views, info = await asyncio.to_thread(checked_against_the_database, pk)
    out["log_replays"], out["frames_equal"] = views, info
    return out


print(json.dumps(asyncio.run(main())))
