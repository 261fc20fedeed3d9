"""One move of a table, the only code that changes a match.

A move is three steps and one follow-up, the same for every caller:

1. :func:`load_steps` reads what the move needs, taking the table's lock by
   a compare-and-swap on its version (the version goes up and the turn clock
   restarts only if the table is still playing at the version the player
   acted on); the table row, its seats, the match (cached, or the log's
   tail replayed).
2. :func:`step` does no I/O: the engine checks and applies the action, and it
   returns an :class:`Outcome` with everything to save and announce (the
   action, a finished round's record row, a finished match's result).
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
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Generator
from copy import copy
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from django.db import transaction
from django.utils import timezone

from game import db, events, frames, matches, rows, tallies, turns
from game.engine import Action as EngineAction
from game.engine import ActionError, IllegalAction, Match, action_from_dict, action_to_dict
from game.engine.record import record_of
from game.engine.state import Phase, RoundState
from game.errors import BadAction, IllegalMove, NotPlaying, StaleVersion, TableNotFound
from game.models import MatchResult, RoundRecordRow, Seat, Table
from game.round_columns import (
    held_round_types,
    last_round_stand_ins,
    match_stand_in_rounds,
    result_values,
    round_types_of,
    round_values,
    seat_bot_names,
    seat_kinds,
)

log = logging.getLogger(__name__)

TRICKS_PER_ROUND = 13


@dataclass(frozen=True)
class SubmitResult:
    """What a committed move did (for the caller, logs and tests)."""

    table_id: int
    version: int  # the table's version after the action
    seat: int
    action: dict[str, Any]
    round_number: int  # the round the action belonged to
    round_over: bool
    match_over: bool
    to_act: int | None  # who acts next (None when the match is over)
    by_stand_in: bool


@dataclass(frozen=True)
class Loaded:
    """What a move needs, read in its transaction with the table's lock held."""

    table: Table  # version and turn clock already moved on
    seats: dict[int, Seat]
    match: Match  # at the version acted on: the move's own copy
    # (round number, seat, action type) of the match's stand-in moves so far, read only
    # when a round's last card is due
    stand_ins: tuple[tuple[int, int, str], ...] = ()


@dataclass(frozen=True)
class Outcome:
    """Everything a move saves and announces."""

    result: SubmitResult
    table: Table  # as the move leaves it
    seats: dict[int, Seat]
    match: Match  # after the move
    round_row: RoundRecordRow | None  # a finished round's record
    result_row: MatchResult | None  # a finished match's result
    seat_change: Seat | None = None  # the mover went away, or came back by acting


PLAYED_FOR_CARDS = 13  # the stand-in's last cards shown to the player who was away


def _kept(done: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What was played for an away player, as they will read it: every bid
    and exchange (what they will be held to), and the last few cards."""
    plays = [i for i, a in enumerate(done) if a.get("type") == "play"]
    dropped = set(plays[:-PLAYED_FOR_CARDS])
    return [a for i, a in enumerate(done) if i not in dropped][-40:]


def _away_change(seat: Seat | None, action: dict[str, Any], by_stand_in: bool) -> Seat | None:
    """The human seat as this move leaves it, if its away state changes: a
    stand-in's move marks it away (and lists the action), the player's own
    move brings it back."""
    if seat is None or seat.kind != Seat.Kind.HUMAN:
        return None
    if by_stand_in:
        changed = copy(seat)
        changed.away = True
        changed.played_for = _kept([*seat.played_for, action])
        return changed
    if not seat.away and not seat.played_for:
        return None  # the usual case: nothing to write
    changed = copy(seat)
    changed.away, changed.played_for = False, []
    return changed


def parse_submission(
    seat: int, action: EngineAction | dict[str, Any], expected_version: int
) -> EngineAction:
    """The engine action of a submission, or :class:`BadAction`."""
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat <= 3:
        raise BadAction("a seat is 0..3")
    if isinstance(expected_version, bool) or not isinstance(expected_version, int):
        raise BadAction("'version' must be a whole number")
    if isinstance(action, dict):
        try:
            return action_from_dict(action, seat=seat)
        except ActionError as e:
            raise BadAction(str(e)) from None
    if getattr(action, "seat", None) != seat:
        raise BadAction("you can only act for your own seat")
    return action


def _last_card_due(r: RoundState) -> bool:
    return r.phase is Phase.PLAYING and len(r.tricks) == TRICKS_PER_ROUND - 1 and len(r.trick) == 3


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
    if _last_card_due(match.round):
        stand_ins = tuple((yield rows.stand_in_actions_query(table.pk)))
    return Loaded(table, seats, match, stand_ins)


def step(
    loaded: Loaded,
    seat: int,
    action: EngineAction,
    by_stand_in: bool,
    now: datetime,
    while_away: bool = False,
) -> Outcome:
    """Step 2, no I/O: apply ``action`` (or raise :class:`IllegalMove`) and say what to save.

    ``while_away``: a stand-in's move for a player marked away, refused as
    stale if they said they were back before it took the table's lock.
    """
    table, seats, match = loaded.table, loaded.seats, loaded.match
    if while_away and not getattr(seats.get(seat), "away", False):
        raise StaleVersion(table.version - 1, table.version - 1)
    current = match.round
    try:
        match.apply(action)
    except IllegalAction as e:
        raise IllegalMove(str(e)) from None  # rolls the version back
    assert match.version == table.version
    round_over = current.phase is Phase.DONE
    kinds, bot_names = seat_kinds(seats), seat_bot_names(seats)
    round_row = None
    if round_over:
        last = (current.round_number, seat, "play") if by_stand_in else None
        count, plays, bids = last_round_stand_ins(loaded.stand_ins, current.round_number, last)
        values = round_values(
            record_of(current),
            version=match.version,
            kinds=kinds,
            bot_names=bot_names,
            finished_at=now,
            stand_in_moves=count,
            stand_in_plays=plays,
            stand_in_bids=bids,
        )
        round_row = RoundRecordRow(table_id=table.pk, **values)
    result_row = None
    if match.is_over:
        assert match.winner is not None
        values = result_values(
            table.rules,
            winner=match.winner,
            scores=match.scores,
            bags=match.bags,
            rounds=len(match.rounds),
            version=match.version,
            kinds=kinds,
            bot_names=bot_names,
            finished_at=now,
            stand_in_rounds=match_stand_in_rounds(
                loaded.stand_ins, current.round_number, bool(round_row and round_row.stand_in_round)
            ),
            round_types=held_round_types(round_types_of(r) for r in match.rounds if r.result),
        )
        result_row = MatchResult(table_id=table.pk, **values)
        table.status, table.finished_at = Table.Status.FINISHED, now
    action_dict = action_to_dict(action)
    seat_change = _away_change(seats.get(seat), action_dict, by_stand_in)
    if seat_change is not None:
        seats = {**seats, seat: seat_change}
    result = SubmitResult(
        table_id=table.pk,
        version=match.version,
        seat=seat,
        action=action_dict,
        round_number=current.round_number,
        round_over=round_over,
        match_over=match.is_over,
        to_act=None if match.is_over else match.round.to_act,
        by_stand_in=by_stand_in,
    )
    return Outcome(result, table, seats, match, round_row, result_row, seat_change)


def save_steps(outcome: Outcome, now: datetime) -> Generator[rows.Query, Any, None]:
    """Step 3: append the action to the log; store a finished round and match."""
    r = outcome.result
    yield rows.insert_action_query(
        r.table_id, r.version, r.round_number, r.seat, r.action, r.by_stand_in, now
    )
    if outcome.seat_change is not None:
        yield rows.seat_away_query(outcome.seat_change)
    if outcome.round_row is not None:
        yield rows.insert_query(outcome.round_row)
        yield tallies.round_query(outcome.round_row)  # the dashboard's counts, kept exact
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
    try:
        events.table_event(table.pk, r.version, r.action, info)
    except Exception:
        log.exception("the group message of table %s failed", table.pk)
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
) -> SubmitResult:
    """Apply ``action`` for ``seat`` if the table is still at ``expected_version``
    (on Django's connection; :func:`after_commit` runs once the outermost
    transaction commits).

    Raises a :class:`~game.errors.ServiceError` (``StaleVersion``,
    ``IllegalMove``, ``BadAction``, ``NotPlaying``, ``TableNotFound``) and
    changes nothing when the action cannot be taken.
    """
    parsed = parse_submission(seat, action, expected_version)
    with transaction.atomic():
        steps = move_steps(
            table_id, seat, parsed, expected_version, by_stand_in, timezone.now(), while_away
        )
        outcome = db.run_steps(steps)
        transaction.on_commit(lambda: after_commit(outcome))
    return outcome.result


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


async def _run_async(
    table_id: int, seat: int, parsed: EngineAction, expected_version: int, by_stand_in: bool
) -> SubmitResult:
    pool = db.pool()
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
