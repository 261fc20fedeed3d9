"""Open challenges and the cap of tables per bot.

A host may seat "any bot accepting challenges" (``game.external_bots.ANY_BOT``)
instead of a named bot: the seat stays empty and a :class:`SeatOffer` is made
(:func:`offer`, the hook ``game.seating`` calls). After the commit every ready
bot socket hears of it (the group :data:`CHALLENGES`) and sends its bot an
``offer`` frame if the bot accepts open challenges (the owner's setting), has
not declined it and has room for one more table (:func:`frame_for`). A bot
answers ``accept`` (the first takes the seat through ``game.seating.add_bot``,
then gets ``seated`` as for any seat) or ``decline`` (it is not offered that
seat again). An offer taken, a seat filled or a table started meanwhile is
refused as ``offer_gone``; nothing changes. Once its seat is filled (by a
bot's ``accept``, or by a person or bot the host seats) every ready bot that
was offered it is told ``offer_closed`` (:func:`closed_frame`).

Every bot sits at no more than its ``max_tables`` open or playing tables
(:func:`room`, the hook ``add_bot`` checks inside its transaction): over it,
seating it is refused as ``too_many_tables`` and it is offered no seats.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db import transaction

from botapi.models import BotAccount, SeatOffer
from game import external_bots, seating
from game.errors import SeatError, ServiceError, TooManyTables
from game.models import Seat, Table
from game.sockets import events

CHALLENGES = "bot_challenges"  # the group of every ready bot socket
LIVE = (Table.Status.OPEN, Table.Status.PLAYING)


class OfferGone(ServiceError):
    """The offer was taken, withdrawn or declined, or its seat is no longer free."""

    code = "offer_gone"


def live_tables(name: str, but: int | None = None) -> int:
    """How many open or playing tables seat the bot ``name`` (``but`` aside)."""
    rows = Seat.objects.filter(kind=Seat.Kind.BOT, bot_name=external_bots.seat_name(name),
                               table__status__in=LIVE)  # fmt: skip
    if but is not None:
        rows = rows.exclude(table_id=but)
    return rows.values("table_id").distinct().count()


def room(name: str, table_pk: int) -> int | None:
    """None if bot ``name`` may sit at ``table_pk`` besides its other live
    tables, else its cap. The account's row is locked (PostgreSQL) so that two
    seatings of one bot at once cannot both pass the count."""
    cap = (BotAccount.objects.select_for_update().filter(name=name)
           .values_list("max_tables", flat=True).first())  # fmt: skip
    if cap is None or live_tables(name, but=table_pk) < cap:
        return None
    return cap


def offer(table_pk: int, position: int) -> None:
    """Offer the seat (in the caller's transaction); told to the bots after the commit."""
    made, _ = SeatOffer.objects.update_or_create(
        table_id=table_pk, position=position, defaults={"taken_by": None, "declined": []}
    )
    message = {"type": "bot.offer", "offer": made.pk}
    transaction.on_commit(lambda: events.send_to_group(CHALLENGES, message), robust=True)


def seat_filled(table_pk: int, position: int) -> None:
    """A seat was made at ``(table_pk, position)`` (in the caller's transaction):
    after the commit, the bots hear that an offer of it is closed."""
    found = SeatOffer.objects.filter(table_id=table_pk, position=position, taken_by=None)
    for pk in found.values_list("pk", flat=True):
        message = {"type": "bot.offer_closed", "offer": pk}
        transaction.on_commit(partial(events.send_to_group, CHALLENGES, message), robust=True)


def closed_frame(offer_pk: int, name: str) -> dict[str, Any] | None:
    """The ``offer_closed`` frame for bot ``name``: only for a bot the offer was
    for (it accepts challenges and had not declined it), never for the taker."""
    found = SeatOffer.objects.filter(pk=offer_pk).first()
    account = BotAccount.objects.filter(name=name, accepts_challenges=True).first()
    if found is None or account is None or name in found.declined:
        return None
    if found.taken_by_id == account.pk:
        return None
    return {"type": "offer_closed", "offer": offer_pk}


def offered(table_pk: int) -> list[int]:
    """The positions of ``table_pk`` offered and still empty (the table page shows them)."""
    taken = set(Seat.objects.filter(table_id=table_pk).values_list("position", flat=True))
    found = SeatOffer.objects.filter(table_id=table_pk, taken_by=None)
    return sorted(p for p in found.values_list("position", flat=True) if p not in taken)


def _open(offer: SeatOffer | None, name: str) -> bool:
    """Is ``offer`` still open to the bot ``name``?"""
    return (
        offer is not None
        and offer.taken_by_id is None
        and name not in offer.declined
        and offer.table.status == Table.Status.OPEN
        and not offer.table.seats.filter(position=offer.position).exists()
    )


def _frame(offer: SeatOffer) -> dict[str, Any]:
    table = offer.table
    players = [s.to_public_dict(table.bots_as_players) for s in table.seats.select_related("user")]
    return {
        "type": "offer",
        "offer": offer.pk,
        "table": table.public_id,
        "seat": offer.position,
        "rules": table.rules,
        "turn_seconds": table.turn_seconds,
        "rated": table.rated,
        "players": [{k: p[k] for k in ("position", "kind", "name", "bot_name")} for p in players],
    }


def _may_hear(name: str) -> bool:
    account = BotAccount.objects.filter(name=name).exclude(token_hash="").first()
    return account is not None and account.accepts_challenges and (
        live_tables(name) < account.max_tables
    )


def frame_for(offer_pk: int, name: str) -> dict[str, Any] | None:
    """The ``offer`` frame for bot ``name``, or None if it is not for it."""
    found = SeatOffer.objects.select_related("table").filter(pk=offer_pk).first()
    if not _open(found, name) or not _may_hear(name):
        return None
    assert found is not None
    return _frame(found)


def open_frames(name: str) -> list[dict[str, Any]]:
    """The ``offer`` frames of every offer open to bot ``name`` (on its ready)."""
    if not _may_hear(name):
        return []
    found = SeatOffer.objects.select_related("table").filter(
        taken_by=None, table__status=Table.Status.OPEN
    )
    return [_frame(o) for o in found if _open(o, name)]


def accept(offer_pk: int, name: str) -> None:
    """Seat bot ``name`` at the offer's seat (``OfferGone``, ``TooManyTables``:
    refused, nothing changed)."""
    with transaction.atomic():
        found = SeatOffer.objects.select_for_update().select_related("table")
        offer = found.filter(pk=offer_pk).first()
        account = BotAccount.objects.filter(name=name, accepts_challenges=True).first()
        if account is None or not _open(offer, name):
            raise OfferGone("that offer is gone: taken, declined, or its seat is not free")
        assert offer is not None
        try:
            seating.add_bot(offer.table_id, offer.position, external_bots.seat_name(name))
        except TooManyTables:
            raise
        except SeatError as e:
            raise OfferGone(f"that offer is gone: {e.message}") from None
        offer.taken_by = account
        offer.save(update_fields=["taken_by"])


def decline(offer_pk: int, name: str) -> None:
    """Bot ``name`` is not offered that seat again (``OfferGone`` if it is not open to it)."""
    with transaction.atomic():
        offer = SeatOffer.objects.select_for_update().select_related("table").filter(
            pk=offer_pk
        ).first()
        if not _open(offer, name):
            raise OfferGone("that offer is gone: taken, declined, or its seat is not free")
        assert offer is not None
        offer.declined = [*offer.declined, name]
        offer.save(update_fields=["declined"])
