"""Bot moves as a Celery task, and how the service schedules them.

``act(table_id, seat, version)`` is idempotent: it moves only if the table
is still at ``version`` and ``seat`` is a bot (or a human whose turn timer
ran out, for a stand-in), and it submits with ``expected_version=version``,
so a task that runs twice, or late, is dropped as stale.

With ``SPADES_BOTS_IN_PROCESS`` (the embedded default) the same function
runs in ``bots.runner``'s thread pool instead of a Celery worker.
"""

from __future__ import annotations

import logging
import random

from celery import shared_task
from django.conf import settings

from bots.registry import DEFAULT_BOT, make_bot
from bots.runner import get_runner

log = logging.getLogger(__name__)

# What play_turn reports (the task's return value, for logs and tests).
MOVED = "moved"
STALE = "stale"
NOT_DUE = "not_due"


def bot_rng(seed: str, version: int, seat: int) -> random.Random:
    """The bot's random source for one move: reproducible from the table's seed."""
    return random.Random(f"{seed}/bot/{version}/{seat}")


def play_turn(table_id: int, seat: int, version: int, stand_in: bool = False) -> str:
    """Compute and submit the move of a bot (or a stand-in) at ``version``."""
    from game import service
    from game.engine import view_for
    from game.models import Seat, Table

    table = Table.objects.filter(pk=table_id).first()
    if table is None or table.status != Table.Status.PLAYING or table.version != version:
        return STALE
    seat_row = Seat.objects.filter(table=table, position=seat).first()
    if seat_row is None:
        return NOT_DUE
    if stand_in:
        if seat_row.kind != Seat.Kind.HUMAN or not table.stand_in_bots:
            return NOT_DUE
        bot_name = getattr(settings, "SPADES_STAND_IN_BOT", DEFAULT_BOT)
    else:
        if seat_row.kind != Seat.Kind.BOT:
            return NOT_DUE
        bot_name = seat_row.bot_name or DEFAULT_BOT
    match = service.load_match(table, version)
    if match.is_over or match.round.to_act != seat:
        return NOT_DUE
    view = view_for(match, seat)
    rng = bot_rng(table.seed, version, seat)
    action = make_bot(bot_name).act(view, rng)
    try:
        service.submit_action(table_id, seat, action, version, by_stand_in=stand_in)
    except (service.StaleVersion, service.NotPlaying, service.TableNotFound):
        return STALE
    except service.IllegalMove as e:
        # A bot bug must not stall the table: log it and play a legal move instead.
        log.error("bot %s made an illegal move %r at table %s: %s", bot_name, action, table_id, e)
        fallback = rng.choice(view.legal_actions)
        try:
            service.submit_action(table_id, seat, fallback, version, by_stand_in=stand_in)
        except (service.StaleVersion, service.NotPlaying):
            return STALE
    return MOVED


@shared_task(name="bots.tasks.act", acks_late=True, ignore_result=True)
def act(table_id: int, seat: int, version: int, stand_in: bool = False) -> str:
    return play_turn(table_id, seat, version, stand_in)


def schedule_act(
    table_id: int, seat: int, version: int, *, delay: float = 0.0, stand_in: bool = False
) -> None:
    """Have ``seat`` move at ``version`` after ``delay`` seconds, in-process or via Celery."""
    if getattr(settings, "SPADES_BOTS_IN_PROCESS", True):
        get_runner().submit(
            play_turn, table_id, seat, version, stand_in, delay=delay, timer=stand_in
        )
    else:
        act.apply_async(
            args=[table_id, seat, version],
            kwargs={"stand_in": stand_in},
            queue="bots",
            countdown=delay if delay > 0 else None,
        )
