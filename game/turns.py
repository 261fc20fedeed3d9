"""Who moves next when it is not a human at the keyboard, and when.

After every commit (:func:`after_move`, from ``game.master``) and when a
match starts or a seat changes hands (``game.seating``), :func:`next_turn`
decides whether a bot, or a stand-in for a human whose turn timer runs out,
is due, and after how long: a :class:`TurnPlan`. The master's scheduler
(``game.scheduling``) has it made. No I/O here.

A planned move is idempotent: it names the version it is for, and the
write path refuses it as stale once the table has moved on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings

from game.models import Seat, Table

if TYPE_CHECKING:
    from game.move_step import Outcome

DEFAULT_BOT_DELAY_SECONDS = 0.6
# A bot that leads the next trick waits this many times its delay more, so the
# players see the finished trick gathered to its winner first (table.js).
TRICK_PAUSE = 1.5


@dataclass(frozen=True)
class TurnPlan:
    """Have ``seat`` move at ``version`` after ``delay`` seconds (a stand-in if
    ``stand_in``; ``away``: for a player marked away, who may come back first)."""

    table_id: int
    seat: int
    version: int
    delay: float
    stand_in: bool
    away: bool = False


def bot_delay_for(table: Table) -> float:
    """Seconds a bot waits before it moves at ``table`` (pacing for the humans)."""
    if table.bot_delay is not None:
        return max(0.0, table.bot_delay)
    return max(0.0, float(getattr(settings, "SPADES_BOT_DELAY", DEFAULT_BOT_DELAY_SECONDS)))


def next_turn(
    table: Table,
    seats: Mapping[int, Seat],
    to_act: int | None,
    version: int,
    *,
    stand_in_again: bool = False,
    after_trick: bool = False,
) -> TurnPlan | None:
    """The move to schedule for ``to_act`` at ``version``, if a bot or stand-in is due.

    ``stand_in_again``: the last move was a stand-in's for this same seat (it
    looked at its cards, say, and now bids), so it goes on at once. A player
    marked away (their timer ran out before) does not cost the table a whole
    timer again: their stand-in moves at a bot's pace until they come back.
    ``after_trick``: the move before finished a trick, which the bot then leads.
    """
    seat = seats.get(to_act) if to_act is not None else None
    if seat is None or to_act is None:
        return None
    pace = bot_delay_for(table) * (1 + TRICK_PAUSE if after_trick else 1)
    if seat.kind == Seat.Kind.BOT:
        return TurnPlan(table.pk, to_act, version, pace, False)
    if not table.stand_in_bots:
        return None
    if seat.away:
        return TurnPlan(table.pk, to_act, version, pace, True, away=True)
    delay = 0.0 if stand_in_again else float(table.turn_seconds)
    return TurnPlan(table.pk, to_act, version, delay, True)


def after_move(outcome: Outcome) -> TurnPlan | None:
    """The move to schedule after a committed move, if a bot or stand-in is due."""
    r = outcome.result
    if r.to_act is None:
        return None
    now = outcome.match.round
    return next_turn(
        outcome.table,
        outcome.seats,
        r.to_act,
        r.version,
        stand_in_again=r.by_stand_in and r.seat == r.to_act,
        after_trick=bool(now.tricks) and not now.trick and not now.is_over,
    )
