"""One move of a table: the only code that changes a match.

A move is three steps, the same for every store (``game.moves.stores``):

1. :func:`lock_steps` reads what the move needs (the table row, its seats, the
   match: cached, or the log's tail replayed), taking the table's lock by a
   compare-and-swap on its version (up, and the turn clock restarted, only if
   the table is still playing at the version the player acted on).
2. :func:`step` does no I/O: the engine checks and applies the action, and an
   :class:`Outcome` says all the move saves and announces (the action, a
   finished round's record row, a finished match's result, a seat's change).
3. :func:`save_steps` writes it. Steps 1-3 run as one transaction
   (:func:`move_steps`); a :class:`~game.errors.ServiceError` rolls it back.

A move of a table whose rows this process's moves left (:func:`known`) may first
be tried as the quick move (the master decides, ``game.master``): stepped on
those rows (:func:`quick_step`), saved by the compare-and-swap (a no-op unless
the table is at that version with the same seats) and the INSERT, no row read
(:func:`quick_save_steps`). A round's last card inserts a pending round (its row
written later: ``game.research.round_rows``). A match's end, a seat change and a
refused action take the full path.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from copy import copy
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from game.engine import Action as EngineAction
from game.engine import ActionError, IllegalAction, Match, action_from_dict, action_to_dict
from game.engine.record import record_of
from game.engine.state import Phase, RoundState
from game.errors import (
    BadAction,
    IllegalMove,
    NotPlaying,
    ServiceError,
    StaleVersion,
    TableNotFound,
)
from game.models import MatchResult, PendingRound, RoundRecordRow, Seat, Table
from game.moves import matches, rows
from game.ratings import match_end as ratings
from game.ratings.bands import table_bands
from game.research import tallies
from game.research.round_columns import (
    StandIn,
    held_round_types,
    last_round_stand_ins,
    match_stand_in_rounds,
    result_values,
    round_types_of,
    round_values,
    seat_bot_names,
    seat_kinds,
)
from game.sql.statements import Query, Step, insert_query

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
    # A round ended by the quick move: its record row is written after the move
    # (game.research.round_rows), and the move stores only this.
    pending_round: PendingRound | None = None


PLAYED_FOR_CARDS = 13  # the stand-in's last cards shown to the player who was away


def _kept(done: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What was played for an away player, as they will read it: every bid
    and exchange (what they will be held to), and the last few cards."""
    plays = [i for i, a in enumerate(done) if a.get("type") == "play"]
    dropped = set(plays[:-PLAYED_FOR_CARDS])
    return [a for i, a in enumerate(done) if i not in dropped][-40:]


def _away_change(
    seat: Seat | None, action: dict[str, Any], by_stand_in: bool, now: datetime
) -> Seat | None:
    """The human seat as this move leaves it, if its away state changes: a stand-in's
    move marks it away (lists the action; a seat not yet away: its timer ran out,
    counted), the player's own move brings it back and ends the run of timers."""
    if seat is None or seat.kind != Seat.Kind.HUMAN:
        return None
    if by_stand_in:
        changed = copy(seat)
        if not seat.away:  # not yet away: the player's own timer ran out
            changed.missed_in_a_row = missed = seat.missed_in_a_row + 1
            changed.most_missed_in_a_row = max(seat.most_missed_in_a_row, missed)
            changed.away_since = now
        changed.away, changed.played_for = True, _kept([*seat.played_for, action])
        return changed
    if not seat.away and not seat.played_for and not seat.missed_in_a_row:
        return None  # the usual case: nothing to write
    changed = copy(seat)
    changed.away, changed.played_for, changed.missed_in_a_row, changed.away_since = (
        False, [], 0, None)  # fmt: skip
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


def finished_round_row(
    table: Table, r: RoundState, stand_ins: Iterable[StandIn], last: StandIn | None,
    version: int, kinds: str, bot_names: list[str | None], finished_at: datetime,
) -> RoundRecordRow:  # fmt: skip
    """The record row (not tallied yet) of the finished round ``r``, with its
    stand-in moves from the match's ``stand_ins`` (the log's) and ``last``,
    its last card if a stand-in's not in the log yet; the table's study and
    rating bands too (those at the match's start: ratings change at its end)."""
    count, plays, bids = last_round_stand_ins(stand_ins, r.round_number, last)
    values = round_values(
        record_of(r), version=version, kinds=kinds, bot_names=bot_names, finished_at=finished_at,
        stand_in_moves=count, stand_in_plays=plays, stand_in_bids=bids,
    )  # fmt: skip
    study = {"study_condition": table.study_condition, "pilot": table.pilot}
    return RoundRecordRow(table_id=table.pk, tallied=False, **study, **table_bands(table), **values)


def last_card_due(r: RoundState) -> bool:
    return r.phase is Phase.PLAYING and len(r.tricks) == TRICKS_PER_ROUND - 1 and len(r.trick) == 3


def step(
    loaded: Loaded,
    seat: int,
    action: EngineAction,
    by_stand_in: bool,
    now: datetime,
    while_away: bool = False,
    record_round: bool = True,
) -> Outcome:
    """Step 2, no I/O: apply ``action`` (or raise :class:`IllegalMove`) and say what to save.

    ``while_away``: a stand-in's move for a player marked away, refused as
    stale if they said they were back before it took the table's lock.
    Not ``record_round``: a round's end is saved as a :class:`PendingRound`,
    its row written later (the quick move, which reads no stand-in moves).
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
    round_row = pending_round = result_row = None
    if round_over:  # who sat where, stored with a finished round and match
        kinds, bot_names = seat_kinds(seats), seat_bot_names(seats)
        if not record_round:
            pending_round = PendingRound(
                table_id=table.pk, round_number=current.round_number, version=match.version,
                finished_at=now, seat_kinds=kinds, bot_names=bot_names,
            )  # fmt: skip
        else:
            last = (current.round_number, seat, "play") if by_stand_in else None
            round_row = finished_round_row(
                table, current, loaded.stand_ins, last, match.version, kinds, bot_names, now
            )
    if match.is_over:
        assert match.winner is not None
        stand_in_rounds = match_stand_in_rounds(
            loaded.stand_ins, current.round_number, bool(round_row and round_row.stand_in_round)
        )
        values = result_values(
            table.rules, winner=match.winner, scores=match.scores, bags=match.bags,
            rounds=len(match.rounds), version=match.version, kinds=kinds, bot_names=bot_names,
            finished_at=now, stand_in_rounds=stand_in_rounds,
            round_types=held_round_types(round_types_of(r) for r in match.rounds if r.result),
        )  # fmt: skip
        result_row = MatchResult(table_id=table.pk, **values, **table_bands(table))
        result_row.study_condition, result_row.pilot = table.study_condition, table.pilot
        table.status, table.finished_at = Table.Status.FINISHED, now
    action_dict = action_to_dict(action)
    seat_change = _away_change(seats.get(seat), action_dict, by_stand_in, now)
    if seat_change is not None:
        seats = {**seats, seat: seat_change}
        table.seats_version += 1  # as save_steps writes it
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
    return Outcome(result, table, seats, match, round_row, result_row, seat_change, pending_round)


def row_copy(row: Table) -> Table:
    """``copy(row)`` without the pickling protocol Django's models copy through
    (``__reduce__`` looks the model class up again): half the time, on
    every quick move. The same result: the fields, a state object of its own
    and its own cache of related objects."""
    clone = Table.__new__(Table)
    clone.__dict__.update(row.__dict__)
    state = clone._state = copy(row._state)
    state.fields_cache = row._state.fields_cache.copy()
    return clone


def quick_step(
    match: Match,
    known: matches.Rows,
    seat: int,
    action: EngineAction,
    by_stand_in: bool,
    now: datetime,
) -> Outcome | None:
    """Step 2 for the quick move (``rows.quick_move_query``): on ``match``, a
    committed state, and the table and seats this process ``known``s. A
    round's end is saved as a pending round (its row written after the move).
    None when the move takes the full path: a match's end (its result and
    the table's status), a seat that goes away or comes back, or an action
    refused here (the full path says why: stale, or illegal)."""
    table = row_copy(known.table)
    table.version, table.turn_started_at = match.version + 1, now
    loaded = Loaded(table, known.seats, match.copy())
    try:
        outcome = step(loaded, seat, action, by_stand_in, now, record_round=False)
    except ServiceError:
        return None
    if outcome.result_row or outcome.seat_change:
        return None
    return outcome


# ----- the move's statements ----------------------------------------------------------


def lock_steps(table_id: int, expected_version: int, now: datetime) -> Generator[Step, Any, Loaded]:
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
    match = (yield from matches.match_steps(table, expected_version)).copy()
    stand_ins = ()
    if last_card_due(match.round):
        stand_ins = tuple((yield rows.stand_in_actions_query(table.pk)))
    return Loaded(table, seats, match, stand_ins)


def save_steps(
    outcome: Outcome, now: datetime, think: rows.Think | None = None
) -> Generator[Query, Any, None]:
    """Step 3: append the action to the log; store a finished round and match."""
    r = outcome.result
    yield rows.insert_action_query(
        r.table_id, r.version, r.round_number, r.seat, r.action, r.by_stand_in, now, think
    )
    if outcome.seat_change is not None:
        yield rows.seat_away_query(outcome.seat_change)
        yield rows.seats_changed_query(r.table_id)
    if outcome.round_row is not None:
        yield insert_query(outcome.round_row)  # not tallied yet: after_commit has it added
    if outcome.result_row is not None:
        yield insert_query(outcome.result_row)
        yield tallies.match_query(outcome.result_row)
        yield from ratings.match_steps(outcome.table, outcome.seats, outcome.result_row)
        yield rows.finish_table_query(r.table_id, now)


def move_steps(
    table_id: int,
    seat: int,
    action: EngineAction,
    expected_version: int,
    by_stand_in: bool,
    now: datetime,
    while_away: bool = False,
    think: rows.Think | None = None,
) -> Generator[Step, Any, Outcome]:
    """Steps 1-3 as statements, to run in one transaction."""
    loaded = yield from lock_steps(table_id, expected_version, now)
    outcome = step(loaded, seat, action, by_stand_in, now, while_away)
    yield from save_steps(outcome, now, think)
    return outcome


def known(table_id: int, expected_version: int) -> tuple[matches.Rows, Match] | None:
    """The table's rows as this process knows them (a move of it made here) and
    its match at ``expected_version`` (its own move, or another process's from
    the group message); None: take the full path."""
    known = matches.remembered_rows(table_id)
    if known is None:
        return None
    entry = matches.cached(table_id, expected_version)
    return None if entry is None else (known, entry.match)


@dataclass(frozen=True)
class Quick:
    """A quick move stepped (:func:`quick_step`), to be saved: its outcome, the
    known table row it was stepped on, the version acted on, when, and the
    player's decision time."""

    outcome: Outcome
    table: Table
    version: int
    now: datetime
    think: rows.Think | None = None


def quick_save_steps(quick: Quick) -> Generator[Step, Any, Outcome | None]:
    """The quick move's save as statements: the compare-and-swap on the known
    rows' seats, then the INSERT (a round's last card: its pending round too);
    the table and seats are not read. None, having written nothing, when the
    table moved on or its seats changed (the master then takes the full path).
    PostgreSQL's asyncio store sends the same as one statement
    (``rows.quick_move_query``)."""
    if not (yield rows.quick_swap_query(quick.table, quick.version, quick.now)):
        return None
    r = quick.outcome.result
    yield rows.insert_action_query(
        r.table_id, r.version, r.round_number, r.seat, r.action, r.by_stand_in, quick.now,
        quick.think,
    )  # fmt: skip
    if quick.outcome.pending_round is not None:
        yield insert_query(quick.outcome.pending_round)  # its row: written after the move
    return quick.outcome
