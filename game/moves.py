"""One move of a table, the only code that changes a match.

A move is three steps and one follow-up, the same for every caller:

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
4. After the commit, :func:`after_commit`: remember the committed state in
   this process's cache, announce the new version to the table's sockets,
   and schedule the bot or stand-in that is due (``game.turns``).

Two runners run the same statements (``game.rows``) and the same
``after_commit``: :func:`submit_action` on Django's connection (Celery
workers, HTTP views, SQLite, in-process bots), and :func:`submit_action_async`
on an asyncio connection on the server's event loop (the websockets'
moves on PostgreSQL, ``game.db``).

A move of a table whose rows this process knows is first tried as the quick
move: stepped on those rows, and saved by the compare-and-swap (which changes
nothing unless the table is still at that version with the same seats) and
the INSERT, with no row read; on the asyncio runner the two are one
statement and one round trip (:func:`_quick_move`), on Django's connection
two statements (:func:`quick_move_steps`), in a transaction on the sqlite3
connection itself with SQLite (``game.sqlite_moves``). A round's last card
inserts a pending round with the action; its record row is written after the
move (``game.round_rows``). A match's end, a seat change and a refused action
take the full path (docs/architecture.md, "What the write path guarantees").
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Generator
from datetime import datetime
from typing import Any

import psycopg
from django.db import transaction
from django.utils import timezone

from game import (
    db,
    events,
    frames,
    matches,
    rows,
    sqlite_moves,
    statement,
    tallies,
    tally_flush,
    turns,
)
from game.engine import Action as EngineAction
from game.engine import Match
from game.errors import NotPlaying, StaleVersion, TableNotFound
from game.models import Table
from game.move_step import (
    Loaded,
    Outcome,
    SubmitResult,
    last_card_due,
    parse_submission,
    quick_step,
    step,
)

log = logging.getLogger(__name__)


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


def after_commit(outcome: Outcome) -> None:
    """What follows a committed move, whichever runner made it: remember the
    state, announce the version, schedule the bot or stand-in that is due.
    Each part is attempted even if one before it fails."""
    r, table = outcome.result, outcome.table
    info = frames.table_info(table, outcome.seats)
    matches.remember(table.pk, matches.Committed(table.seed, outcome.match, info))
    matches.remember_rows(table.pk, matches.Rows(table, outcome.seats))
    try:
        events.table_event(table.pk, r.version, r.action, info)
    except Exception:
        log.exception("the group message of table %s failed", table.pk)
    if outcome.round_row is not None or outcome.pending_round is not None:
        try:
            tally_flush.flush_soon(table.pk)
        except Exception:  # the round stays pending: the sweep adds it
            log.exception("adding the round of table %s to the tallies failed", table.pk)
    if r.to_act is None:
        return
    again = r.by_stand_in and r.seat == r.to_act
    now = outcome.match.round
    after_trick = bool(now.tricks) and not now.trick and not now.is_over
    plan = turns.next_turn(
        table, outcome.seats, r.to_act, r.version, stand_in_again=again, after_trick=after_trick
    )
    if plan is not None:
        try:
            turns.schedule(plan)
        except Exception:
            log.exception("scheduling a bot move at table %s failed", table.pk)


def submit_action(
    table_id: int,
    seat: int,
    action: EngineAction | dict[str, Any],
    expected_version: int,
    *,
    by_stand_in: bool = False,
    while_away: bool = False,
    wait_for_lock: bool = True,
) -> SubmitResult:
    """Apply ``action`` for ``seat`` if the table is still at ``expected_version``
    (on Django's connection; :func:`after_commit` runs once the outermost
    transaction commits). Not ``wait_for_lock``: SQLite's quick move raises
    :class:`~game.sqlite_moves.WriteLockBusy` rather than wait for the lock.

    Raises a :class:`~game.errors.ServiceError` (``StaleVersion``,
    ``IllegalMove``, ``BadAction``, ``NotPlaying``, ``TableNotFound``) and
    changes nothing when the action cannot be taken.
    """
    parsed = parse_submission(seat, action, expected_version)
    quick = not (by_stand_in or while_away)  # a stand-in's move changes a seat
    if quick and sqlite_moves.own_sqlite_transaction():
        # SQLite (the embedded server's loop, its bot threads): the quick move
        # on the sqlite3 connection itself; None, with nothing written: the full path.
        steps = quick_move_steps(table_id, seat, parsed, expected_version, timezone.now())
        done = sqlite_moves.run_sqlite_transaction(steps, wait=wait_for_lock)
        if done is not None:
            after_commit(done)
            return done.result
        quick = False
    with transaction.atomic():
        now = timezone.now()
        outcome = None
        if quick:
            outcome = db.run_steps(quick_move_steps(table_id, seat, parsed, expected_version, now))
        if outcome is None:
            outcome = db.run_steps(
                move_steps(table_id, seat, parsed, expected_version, by_stand_in, now, while_away)
            )
        transaction.on_commit(lambda: after_commit(outcome))
    return outcome.result


def _known(table_id: int, expected_version: int) -> tuple[matches.Rows, Match] | None:
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
    found = _known(table_id, expected_version)
    if found is None:
        return None
    known, match = found
    outcome = quick_step(match, known, seat, parsed, False, now)
    if outcome is None:
        return None
    if not (yield rows.quick_swap_query(known.table, expected_version, now)):
        return None
    r = outcome.result
    yield rows.insert_action_query(
        r.table_id, r.version, r.round_number, r.seat, r.action, r.by_stand_in, now
    )
    if outcome.pending_round is not None:
        yield rows.insert_query(outcome.pending_round)  # its row: after_commit has it written
    return outcome


async def submit_action_async(
    table_id: int,
    seat: int,
    action: EngineAction | dict[str, Any],
    expected_version: int,
    *,
    by_stand_in: bool = False,
) -> SubmitResult:
    """:func:`submit_action` on the event loop, over the pool's asyncio connections.

    A move once started runs to its end even if the caller is cancelled (its
    socket closed): a commit must never go unannounced.
    """
    parsed = parse_submission(seat, action, expected_version)
    move = db.hold(
        asyncio.ensure_future(_run_async(table_id, seat, parsed, expected_version, by_stand_in))
    )
    # A refusal nobody waits for any more is not an error to report.
    move.add_done_callback(lambda done: done.cancelled() or done.exception())
    return await asyncio.shield(move)  # type: ignore[no-any-return]


async def _quick_move(
    pool: db.ConnectionPool,
    table_id: int,
    seat: int,
    parsed: EngineAction,
    expected_version: int,
    by_stand_in: bool,
) -> Outcome | None:
    """The quick move as one statement and one round trip (:func:`quick_move_steps`'
    statements together): the compare-and-swap and the INSERT (and a finished
    round's pending round), which change nothing if the table moved on or its
    seats changed since. None: take the full path."""
    found = None if by_stand_in else _known(table_id, expected_version)
    if found is None:
        return None
    known, match = found
    now = timezone.now()
    outcome = quick_step(match, known, seat, parsed, False, now)
    if outcome is None:
        return None
    conn = await pool.acquire()
    try:
        r = outcome.result
        query = rows.quick_move_query(
            known.table, expected_version, r.round_number, r.seat, r.action, r.by_stand_in, now,
            outcome.pending_round,
        )  # fmt: skip
        made = await statement.run_alone(conn, query)
    except psycopg.OperationalError:
        # The full path tries again on a fresh connection; had this committed
        # after all, its version check refuses the move as stale.
        if not (conn.broken or conn.closed):
            raise
        return None
    finally:
        pool.release(conn)
    return outcome if made else None


async def _run_async(
    table_id: int, seat: int, parsed: EngineAction, expected_version: int, by_stand_in: bool
) -> SubmitResult:
    pool = db.pool()
    quick = await _quick_move(pool, table_id, seat, parsed, expected_version, by_stand_in)
    if quick is not None:
        after_commit(quick)
        return quick.result
    for attempt in (1, 2):
        conn = await pool.acquire(fresh=attempt > 1)
        try:
            # One transaction; when it returns, the move is committed.
            now = timezone.now()
            steps = move_steps(table_id, seat, parsed, expected_version, by_stand_in, now)
            outcome = await db.run_steps_async(conn, steps)
            break
        except psycopg.OperationalError:
            # A connection that died while idle (the server restarted, say): once
            # more on a fresh one. Should the first attempt have committed after
            # all, the version check refuses the second as stale.
            if attempt == 2 or not (conn.broken or conn.closed):
                raise
        finally:
            pool.release(conn)
    after_commit(outcome)
    return outcome.result
