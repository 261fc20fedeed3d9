"""One move of a table as statements: the only code that changes a match.

A move is three steps, the same for every store (``game.stores``):

1. :func:`load_steps` reads what the move needs, taking the table's lock by
   a compare-and-swap on its version (the version goes up and the turn clock
   restarts only if the table is still playing at the version the player
   acted on); the table row, its seats, the match (cached, or the log's
   tail replayed).
2. ``game.move_step.step`` does no I/O: the engine checks and applies the
   action, and it returns an ``Outcome`` with everything to save and announce
   (the action, a finished round's record row, a finished match's result).
3. :func:`save_steps` writes it. Steps 1-3 run as one transaction
   (:func:`move_steps`); a :class:`~game.errors.ServiceError` rolls it back.

After the commit the store hands the outcome to the master
(``game.master.TableMaster.after_commit``).

A move of a table whose rows this process knows (:func:`known`) is first
tried as the quick move (:func:`quick_move_steps`): stepped on those rows,
and saved by the compare-and-swap (which changes nothing unless the table is
still at that version with the same seats) and the INSERT, with no row read.
A round's last card inserts a pending round with the action; its record row
is written after the move (``game.round_rows``). A match's end, a seat change
and a refused action take the full path (docs/architecture.md, "What the
write path guarantees").

The statements are generators of ``game.rows`` queries; a store runs them
(``game.db.run_steps``, ``run_steps_async``, ``game.sqlite_moves``).
"""

from __future__ import annotations

from collections.abc import Generator
from datetime import datetime
from typing import Any

from game import matches, rows, tallies
from game.engine import Action as EngineAction
from game.engine import Match
from game.errors import NotPlaying, StaleVersion, TableNotFound
from game.models import Table
from game.move_step import Loaded, Outcome, last_card_due, quick_step, step


def load_steps(
    table_id: int, expected_version: int, now: datetime
) -> Generator[rows.Step, Any, Loaded]:
    """Step 1: lock the table at ``expected_version`` and read what the move needs."""
    # One batch: the seats are read whether or not the version swapped, and
    # the asyncio runner sends the three statements in one round trip.
    swapped, table, seats = yield (
        rows.bump_version_query(table_id, expected_version, now),
        rows.fetch_table_query(table_id),
        rows.fetch_seats_query(table_id),
    )
    if table is None:
        raise TableNotFound("there is no such table")
    if not swapped:
        if table.status == Table.Status.FINISHED:
            raise NotPlaying("the match is over")
        if table.status == Table.Status.ABANDONED:
            raise NotPlaying("the table was closed: nobody was here for a long while")
        if table.status != Table.Status.PLAYING:
            raise NotPlaying("the match has not started")
        raise StaleVersion(expected_version, table.version)
    match = (yield from matches.load_steps(table, expected_version)).copy()
    stand_ins = ()
    if last_card_due(match.round):
        stand_ins = tuple((yield rows.stand_in_actions_query(table.pk)))
    return Loaded(table, seats, match, stand_ins)


def save_steps(outcome: Outcome, now: datetime) -> Generator[rows.Query, Any, None]:
    """Step 3: append the action to the log; store a finished round and match."""
    r = outcome.result
    yield rows.insert_action_query(
        r.table_id, r.version, r.round_number, r.seat, r.action, r.by_stand_in, now
    )
    if outcome.seat_change is not None:
        yield rows.seat_away_query(outcome.seat_change)
        yield rows.seats_changed_query(r.table_id)
    if outcome.round_row is not None:
        yield rows.insert_query(outcome.round_row)  # not tallied yet: after_commit has it added
    if outcome.result_row is not None:
        yield rows.insert_query(outcome.result_row)
        yield tallies.match_query(outcome.result_row)
        yield rows.finish_table_query(r.table_id, now)


def move_steps(
    table_id: int,
    seat: int,
    action: EngineAction,
    expected_version: int,
    by_stand_in: bool,
    now: datetime,
    while_away: bool = False,
) -> Generator[rows.Step, Any, Outcome]:
    """Steps 1-3 as statements, to run in one transaction."""
    loaded = yield from load_steps(table_id, expected_version, now)
    outcome = step(loaded, seat, action, by_stand_in, now, while_away)
    yield from save_steps(outcome, now)
    return outcome


def known(table_id: int, expected_version: int) -> tuple[matches.Rows, Match] | None:
    """The table's rows as this process knows them (a move of it made here) and
    its match at ``expected_version`` (its own move, or another process's from
    the group message); None: take the full path."""
    known = matches.remembered_rows(table_id)
    if known is None:
        return None
    entry = matches.cached(table_id, expected_version, known.table.seed)
    return None if entry is None else (known, entry.match)


def quick_move_steps(
    table_id: int, seat: int, parsed: EngineAction, expected_version: int, now: datetime
) -> Generator[rows.Step, Any, Outcome | None]:
    """The quick move on Django's connection: the compare-and-swap on the known
    rows' seats, then the INSERT (a round's last card: its pending round too);
    the table and seats are not read. None, having written nothing, when the
    move takes the full path."""
    found = known(table_id, expected_version)
    if found is None:
        return None
    rows_known, match = found
    outcome = quick_step(match, rows_known, seat, parsed, False, now)
    if outcome is None:
        return None
    if not (yield rows.quick_swap_query(rows_known.table, expected_version, now)):
        return None
    r = outcome.result
    yield rows.insert_action_query(
        r.table_id, r.version, r.round_number, r.seat, r.action, r.by_stand_in, now
    )
    if outcome.pending_round is not None:
        yield rows.insert_query(outcome.pending_round)  # its row: written after the move
    return outcome
