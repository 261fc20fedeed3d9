"""Whole matches played elsewhere, stored as ordinary tables.

``round_row`` and ``result_row`` build (unsaved) ``RoundRecordRow`` and
``MatchResult`` rows from ``game.research.round_columns`` (the columns a live table's
move writes too, in ``game.moves.move``), for the rounds read from a JSON Lines
export (``game.research.imports``); ``store_match`` saves a whole finished engine match
played elsewhere (a bot-vs-bot tournament of the lab,
``lab.tournaments.storage``) as an ordinary stored match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from game.engine import Match, action_to_dict, record_of
from game.engine.deal import first_dealer
from game.engine.state import RoundState
from game.models import Action, MatchResult, RoundRecordRow, Seat, Table
from game.research import tallies
from game.research.round_columns import (
    NO_TYPES,
    held_round_types,
    result_values,
    round_types_of,
    round_values,
    seat_bot_names,
    seat_kinds,
)


class StorageError(ValueError):
    """A match that cannot be stored as asked."""


def round_row_from_record(
    record: dict[str, Any],
    *,
    table: Table,
    version: int,
    kinds: str,
    bot_names: Sequence[str | None],
    stand_in_moves: int = 0,
    finished_at: datetime | None = None,
    stand_in_plays: Sequence[int] = (0, 0, 0, 0),
    stand_in_bids: str = "0000",
) -> RoundRecordRow:
    """An unsaved row for a round record (``record_of``) played by ``kinds``/``bot_names``."""
    values = round_values(
        record,
        version=version,
        kinds=kinds,
        bot_names=bot_names,
        stand_in_moves=stand_in_moves,
        stand_in_plays=stand_in_plays,
        stand_in_bids=stand_in_bids,
        finished_at=finished_at or timezone.now(),
    )
    return RoundRecordRow(table=table, **values)


def round_row(
    table: Table,
    r: RoundState,
    version: int,
    seats: Mapping[int, Seat],
    stand_in_moves: int = 0,
    finished_at: datetime | None = None,
) -> RoundRecordRow:
    """An unsaved row for the finished round ``r`` of ``table``."""
    return round_row_from_record(
        record_of(r),
        table=table,
        version=version,
        kinds=seat_kinds(seats),
        bot_names=seat_bot_names(seats),
        stand_in_moves=stand_in_moves,
        finished_at=finished_at,
    )


def result_row(
    table: Table,
    *,
    winner: int,
    scores: Sequence[int],
    bags: Sequence[int],
    rounds: int,
    version: int,
    seats: Mapping[int, Seat],
    finished_at: datetime | None = None,
    round_types: tuple[str, str] = (NO_TYPES, NO_TYPES),
) -> MatchResult:
    """An unsaved match result with its query columns (``round_types``: the types each
    partnership held, ``round_columns.held_round_types``)."""
    values = result_values(
        table.rules,
        winner=winner,
        scores=scores,
        bags=bags,
        rounds=rounds,
        version=version,
        kinds=seat_kinds(seats),
        bot_names=seat_bot_names(seats),
        finished_at=finished_at or timezone.now(),
        round_types=round_types,
    )
    return MatchResult(table=table, **values)


def store_match(
    match: Match,
    bot_names: Sequence[str],
    *,
    finished_at: datetime | None = None,
) -> Table:
    """Save a finished engine match between four bots as an ordinary stored match.

    Writes the table (finished, its seed kept server-side as for any table),
    its four bot seats, the action log (so the table replays like a live
    one), a round record row per round and the match result, in one
    transaction. ``bot_names`` are the bots at N, E, S, W.
    """
    if not match.is_over or match.winner is None:
        raise StorageError("only a finished match can be stored")
    if len(bot_names) != 4 or not all(bot_names):
        raise StorageError("give the four seats' bot names (N, E, S, W)")
    if match.first_dealer != first_dealer(match.seed):
        raise StorageError("the match's first dealer is not its seed's: its log would not replay")
    now = finished_at or timezone.now()
    with transaction.atomic():
        table = Table.objects.create(
            rules=match.rules.to_dict(),
            status=Table.Status.FINISHED,
            seed=str(match.seed),
            version=match.version,
            started_at=now,
            finished_at=now,
            stand_in_bots=False,
        )
        seats = {
            p: Seat(table=table, position=p, kind=Seat.Kind.BOT, bot_name=name)
            for p, name in enumerate(bot_names)
        }
        Seat.objects.bulk_create(seats.values())
        actions: list[Action] = []
        rows: list[RoundRecordRow] = []
        version = 0
        for r in match.rounds:
            for a in r.actions:
                version += 1
                actions.append(
                    Action(
                        table=table,
                        version=version,
                        round_number=r.round_number,
                        seat=a.seat,
                        action=action_to_dict(a),
                    )
                )
            rows.append(round_row(table, r, version, seats, finished_at=now))
        if version != match.version:
            raise StorageError(f"the match has {match.version} actions, its rounds {version}")
        Action.objects.bulk_create(actions, batch_size=2000)
        RoundRecordRow.objects.bulk_create(rows)
        tallies.add_rounds(rows)
        result = result_row(
            table,
            winner=match.winner,
            scores=match.scores,
            bags=match.bags,
            rounds=len(match.rounds),
            version=match.version,
            seats=seats,
            finished_at=now,
            round_types=held_round_types(round_types_of(r) for r in match.rounds if r.result),
        )
        result.save()
        tallies.add_matches([result])
    return table
