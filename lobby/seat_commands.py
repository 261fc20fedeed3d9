"""The seat commands of a table page, one function each (``seat_action`` runs them).

A command checks who may ask for it and turns it into calls of
``game.seating``; every change goes through the table master (its announcer
tells the table's sockets after the commit). A refusal is a
:class:`LobbyError` (or the service's own ``ServiceError``) and changes
nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.http import HttpRequest

from bots.registry import DEFAULT_BOT
from game import master, seating
from game.master import Changed
from game.models import Seat, Table
from lobby.models import TableListing
from lobby.players import Player, invited, is_host, player_of, seat_of


class LobbyError(Exception):
    pass


@dataclass(frozen=True)
class Asked:
    """A seat command as asked: by whom, at which table."""

    request: HttpRequest
    table: Table
    listing: TableListing
    player: Player
    host: bool
    mine: int | None  # the asker's seat

    def position(self) -> int:
        """The seat the command names (0..3, ASCII digits only)."""
        text = self.request.POST.get("position", "")
        if not (text.isascii() and text.isdigit()):
            raise LobbyError("choose a seat")
        position = int(text)
        if not 0 <= position <= 3:
            raise LobbyError("a seat is North, East, South or West")
        return position

    def require_host(self) -> None:
        if not self.host:
            raise LobbyError("only the host can change the seats")

    def unreserve(self, position: int) -> None:
        if position in self.listing.reserved:
            self.listing.reserved = [x for x in self.listing.reserved if x != position]
            self.listing.save(update_fields=["reserved"])


def sit(a: Asked) -> None:
    """Take a seat (moving from the one held, if any)."""
    if not a.player.known:
        raise LobbyError("choose a name first (or log in) to sit at a table")
    position = a.position()
    if position in a.listing.reserved and not (a.host or invited(a.request, a.table)):
        raise LobbyError("that seat is held for someone with the invite link")
    with transaction.atomic():
        if a.mine is not None:
            seating.leave_seat(a.table, a.mine)
        seating.take_seat(a.table, position, **a.player.seat_kwargs())
        a.unreserve(position)


def leave(a: Asked) -> None:
    """Before the match: the seat is free again. During it: a bot takes it over."""
    if a.mine is None:
        raise LobbyError("you have no seat at this table")
    if a.table.status == Table.Status.PLAYING:
        seating.hand_over(a.table, a.mine)
    else:
        seating.leave_seat(a.table, a.mine)


def start(a: Asked) -> None:
    if not a.host:
        raise LobbyError("only the host can start the match")
    seating.start_table(a.table)


def put_bot(a: Asked) -> None:
    """The host seats a bot, replacing a bot already there."""
    a.require_host()
    position = a.position()
    name = a.request.POST.get("bot") or DEFAULT_BOT
    occupant = a.table.seats.filter(position=position).first()
    with transaction.atomic():
        if occupant is not None:
            if occupant.kind != Seat.Kind.BOT:
                raise LobbyError("that seat is taken by a player")
            seating.leave_seat(a.table, position)
        seating.add_bot(a.table, position, name)
        a.unreserve(position)


def remove_bot(a: Asked) -> None:
    a.require_host()
    position = a.position()
    occupant = a.table.seats.filter(position=position).first()
    if occupant is None or occupant.kind != Seat.Kind.BOT:
        raise LobbyError("there is no bot in that seat")
    seating.leave_seat(a.table, position)


def _hold(a: Asked, held: bool) -> None:
    a.require_host()
    position = a.position()
    if a.table.status != Table.Status.OPEN:
        raise LobbyError("seats can only change before the match starts")
    if a.table.seats.filter(position=position).exists():
        raise LobbyError("that seat is taken")
    reserved = [x for x in a.listing.reserved if x != position]
    if held:
        reserved.append(position)

    def write() -> Changed[None]:
        a.listing.reserved = sorted(reserved)
        a.listing.save(update_fields=["reserved"])
        return Changed(None, (a.table.pk,))

    master.get().change(write)


def reserve(a: Asked) -> None:
    """Hold an empty seat for someone with the invite link."""
    _hold(a, True)


def open_seat(a: Asked) -> None:
    """Open a held seat to anyone."""
    _hold(a, False)


COMMANDS: dict[str, Callable[[Asked], None]] = {
    "sit": sit,
    "leave": leave,
    "start": start,
    "bot": put_bot,
    "remove": remove_bot,
    "reserve": reserve,
    "open": open_seat,
}


def run(request: HttpRequest, table: Table, listing: TableListing, op: str) -> None:
    """Run the seat command ``op`` for the asker (``LobbyError`` if it is refused)."""
    command = COMMANDS.get(op)
    if command is None:
        raise LobbyError("unknown seat action")
    p = player_of(request)
    command(Asked(request, table, listing, p, is_host(table, listing, p), seat_of(table, p)))
