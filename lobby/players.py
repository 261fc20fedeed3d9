"""Who is asking: a signed-in user or a named guest, and what they may do at a table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse

from game import identity, seating
from game.models import Seat, Table
from game.moves.matches import load_match
from lobby.forms import SEAT_NAMES
from lobby.models import TableListing

INVITES_KEY = identity.INVITES_KEY  # the tables whose invite link this browser opened


@dataclass(frozen=True)
class Player:
    user: Any
    guest_id: str
    name: str

    @property
    def known(self) -> bool:
        return self.user is not None or bool(self.guest_id and self.name)

    def seat_kwargs(self) -> dict[str, Any]:
        """How ``game.seating.take_seat`` names this player."""
        if self.user is not None:
            return {"user": self.user}
        return {"guest_id": self.guest_id, "guest_name": self.name}


def player_of(request: HttpRequest) -> Player:
    if request.user.is_authenticated:
        guest_id, _ = identity.guest_of(request.session)
        return Player(request.user, guest_id, request.user.get_username())
    guest_id, name = identity.guest_of(request.session)
    return Player(None, guest_id if name else "", name)


def bound_refusal(
    request: HttpRequest, public_id: str = "", json: bool = False
) -> HttpResponse | None:
    """A 403 for a session bound to another table than ``public_id`` ('': a new
    table), a study participant's (``game.identity.BOUND_TABLE_KEY``); None if
    it may go on. The refusal changes nothing."""
    if not identity.bound_elsewhere(request.session, public_id):
        return None
    if json:
        return JsonResponse({"error": identity.BOUND_MESSAGE}, status=403)
    own = reverse("lobby:table", args=[identity.bound_table(request.session)])
    context = {"message": identity.BOUND_MESSAGE, "own_table": own}
    return render(request, "lobby/bound.html", context, status=403)


def listing_of(table: Table) -> TableListing:
    listing, _ = TableListing.objects.get_or_create(table=table)
    return listing


def is_host(table: Table, listing: TableListing, p: Player) -> bool:
    if p.user is not None and table.host_id == p.user.pk:
        return True
    return bool(listing.host_guest_id) and listing.host_guest_id == p.guest_id


def invited(request: HttpRequest, table: Table) -> bool:
    return table.pk in request.session.get(INVITES_KEY, [])


def seat_of(table: Table, p: Player) -> int | None:
    return seating.seat_of(table, user=p.user, guest_id=p.guest_id or None)


def may_see(request: HttpRequest, table: Table, listing: TableListing, p: Player) -> bool:
    """A public table is open to all; a private one to its host, invitees and players."""
    if not listing.private:
        return True
    return is_host(table, listing, p) or invited(request, table) or seat_of(table, p) is not None


def my_seats(p: Player) -> Q:
    """The player's seats: the account's and the session's guest's."""
    q = Q(pk__in=[])
    if p.user is not None:
        q |= Q(user=p.user)
    if p.guest_id:
        q |= Q(guest_id=p.guest_id)
    return q


def running_tables_of(p: Player, limit: int = 10) -> list[dict[str, Any]]:
    """The player's matches still being played, most recently moved first, with
    the score (their side first) and whose turn it is: for "Your tables"."""
    if not p.known:
        return []
    seats = (
        Seat.objects.filter(my_seats(p), kind=Seat.Kind.HUMAN, table__status=Table.Status.PLAYING)
        .select_related("table")
        .order_by("-table__turn_started_at")[:limit]
    )
    out = []
    for s in seats:
        table = s.table
        match = load_match(table)
        side = s.position % 2
        to_act = None if match.is_over else match.round.to_act
        by_position = {x.position: x for x in table.seats.all()}
        if to_act == s.position:
            turn = "your turn"
        else:
            turn = f"{by_position[to_act].display_name} to play" if to_act in by_position else ""
        out.append(
            {
                "table": table,
                "seat": SEAT_NAMES[s.position],
                "ours": match.scores[side],
                "theirs": match.scores[1 - side],
                "turn": turn,
                "mine": to_act == s.position,
                "round": match.round.round_number,
            }
        )
    return out


def games_of(p: Player, limit: int = 100) -> list[dict[str, Any]]:
    """The player's tables, newest first, with the outcome and scores of finished ones."""
    if not p.known:
        return []
    seats = (
        Seat.objects.filter(my_seats(p), kind=Seat.Kind.HUMAN)
        .select_related("table", "table__result")
        .order_by("-table__created_at")[:limit]
    )
    games = []
    for s in seats:
        t = s.table
        result = getattr(t, "result", None)
        ours, theirs = None, None
        outcome = t.get_status_display()
        if result is not None:
            scores = (result.score_ns, result.score_ew)
            ours, theirs = scores[s.position % 2], scores[1 - s.position % 2]
            outcome = "Won" if result.winner == s.position % 2 else "Lost"
        games.append(
            {
                "table": t,
                "seat": SEAT_NAMES[s.position],
                "outcome": outcome,
                "ours": ours,
                "theirs": theirs,
                "rounds": result.rounds if result is not None else None,
            }
        )
    return games
