"""Step 2 of a move (``game.moves``), with no I/O: the engine checks and applies
the action, and an :class:`Outcome` says everything the move saves and announces.

:func:`step` runs on what the full path read in the move's transaction;
:func:`quick_step` on the table and seats that this process's last move of
the table left, for the quick move (one statement, ``rows.quick_move_query``),
and declines whatever the full path must decide.
"""

from __future__ import annotations

from collections.abc import Iterable
from copy import copy
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from game import matches
from game.engine import Action as EngineAction
from game.engine import ActionError, IllegalAction, Match, action_from_dict, action_to_dict
from game.engine.record import record_of
from game.engine.state import Phase, RoundState
from game.errors import BadAction, IllegalMove, ServiceError, StaleVersion
from game.models import MatchResult, PendingRound, RoundRecordRow, Seat, Table
from game.round_columns import (
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
    # (game.round_rows), and the move stores only this.
    pending_round: PendingRound | None = None


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


def finished_round_row(
    table_pk: int,
    r: RoundState,
    stand_ins: Iterable[StandIn],
    last: StandIn | None,
    version: int,
    kinds: str,
    bot_names: list[str | None],
    finished_at: datetime,
) -> RoundRecordRow:
    """The record row (not tallied yet) of the finished round ``r``, with its
    stand-in moves from the match's ``stand_ins`` (the log's) and ``last``,
    its last card if a stand-in's not in the log yet."""
    count, plays, bids = last_round_stand_ins(stand_ins, r.round_number, last)
    values = round_values(
        record_of(r),
        version=version,
        kinds=kinds,
        bot_names=bot_names,
        finished_at=finished_at,
        stand_in_moves=count,
        stand_in_plays=plays,
        stand_in_bids=bids,
    )
    return RoundRecordRow(table_id=table_pk, tallied=False, **values)


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
    kinds, bot_names = seat_kinds(seats), seat_bot_names(seats)
    round_row = pending_round = None
    if round_over and not record_round:
        pending_round = PendingRound(
            table_id=table.pk,
            round_number=current.round_number,
            version=match.version,
            finished_at=now,
            seat_kinds=kinds,
            bot_names=bot_names,
        )
    elif round_over:
        last = (current.round_number, seat, "play") if by_stand_in else None
        round_row = finished_round_row(
            table.pk, current, loaded.stand_ins, last, match.version, kinds, bot_names, now
        )
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
