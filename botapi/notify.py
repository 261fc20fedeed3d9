"""Telling an external bot's sockets what happened away from its tables.

Every socket of bot ``<name>`` joins the group ``bot_<name>``. A seat given to
``ext:<name>`` (the table form, a rematch: any ``Seat`` saved) sends
``bot.seated`` after its commit (and a seat made where an offer was closes
the offer: ``botapi.offers.seat_filled``); a rotated or revoked token sends
``bot.withdrawn``, and the sockets close at once.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_save

from botapi import offers
from game import external_bots
from game.models import Seat
from game.sockets import events


def group_of(name: str) -> str:
    return f"bot_{name}"


def connect() -> None:
    post_save.connect(_seat_saved, sender=Seat, dispatch_uid="botapi.seat_saved")


def _seat_saved(sender: Any, instance: Seat, created: bool, **kwargs: Any) -> None:
    if created:
        offers.seat_filled(instance.table_id, instance.position)
    if instance.kind != Seat.Kind.BOT or not external_bots.is_external(instance.bot_name):
        return
    name = external_bots.account_of(instance.bot_name)
    message = {"type": "bot.seated", "table": instance.table_id}
    transaction.on_commit(lambda: events.send_to_group(group_of(name), message), robust=True)


def token_withdrawn(name: str) -> None:
    message = {"type": "bot.withdrawn"}
    transaction.on_commit(lambda: events.send_to_group(group_of(name), message), robust=True)
