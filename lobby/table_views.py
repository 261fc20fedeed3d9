"""One table's pages: the invite link, the table page, its seating and seat
commands, the rematch.

As in ``lobby.views``: every change goes through ``game.seating``; these
views decide who may ask for it and turn ``ServiceError`` into a message.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from bots.registry import DEFAULT_BOT, bot_groups
from game import external_bots, identity, master, seating
from game.errors import ServiceError
from game.master import Changed
from game.models import Table
from lobby import seat_commands
from lobby.forms import GuestForm
from lobby.models import TableListing
from lobby.players import (
    INVITES_KEY,
    bound_refusal,
    invited,
    is_host,
    listing_of,
    may_see,
    player_of,
    seat_of,
)
from lobby.views import get_table, table_summary, within_limit

TABLE_SOUNDS = ("turn", "card", "trick", "nil-set")  # static/sounds/, scripts/make_sounds.py


# ----- one table -------------------------------------------------------------------



def _bot_menu() -> list[tuple[str, list[str]]]:
    """The seat menu's bots: the registry's groups, then the external bots
    (``ext:*``: offered to any bot accepting open challenges)."""
    outside = external_bots.choices()
    return [*bot_groups(), *([("External (bot protocol)", outside)] if outside else [])]

def join(request: HttpRequest, token: str) -> HttpResponse:
    """The private invite link: it lets this browser see the table and take a held seat."""
    table = Table.objects.filter(invite_token=token).first()
    if table is None:
        raise Http404("this invite link is not valid")
    if (refused := bound_refusal(request, table.public_id)) is not None:
        return refused
    invited = list(request.session.get(INVITES_KEY, []))
    if table.pk not in invited:
        invited = [*invited[-49:], table.pk]
        request.session[INVITES_KEY] = invited
    return redirect("lobby:table", table.public_id)


def table_page(request: HttpRequest, public_id: str) -> HttpResponse:
    table = get_table(public_id)
    if (refused := bound_refusal(request, public_id)) is not None:
        return refused
    listing = listing_of(table)
    p = player_of(request)
    if not may_see(request, table, listing, p):
        return render(request, "lobby/private.html", {"table": table}, status=403)
    seat = seat_of(table, p)
    host = is_host(table, listing, p)
    # Staff watching unseen (the study monitor's link): the socket decides too.
    silent = seat is None and request.user.is_staff and request.GET.get("silent") == "1"
    after_match_url = identity.after_match_url(request.session, table.public_id)
    invite_url = None
    # A table another flow seats (a study's: its players go back there after
    # the match) holds no seat for an invitee: no invite link to pass around.
    if (host or seat is not None) and not after_match_url:
        invite_url = request.build_absolute_uri(reverse("lobby:join", args=[table.invite_token]))
    # A study's participant (the session bound to this table): the study's plain
    # layout, no way out to the lobby, bots in plain words.
    in_study = after_match_url is not None and bool(table.study_condition)
    return render(
        request,
        "lobby/table.html",
        {
            "table": table,
            "player": p,
            "seat": seat,
            "is_host": host,
            "invite_url": invite_url,
            "after_match_url": after_match_url,
            "silent": silent,
            "in_study": in_study,
            "away_note": identity.away_note(request.session, table.public_id),
            "guest_form": GuestForm(),
            "config": {
                "id": table.public_id,
                "seat": seat,
                "name": p.name,
                "isHost": host,
                "inStudy": in_study,
                # After "Stop taking part", the study's own page says what follows.
                "afterLeaving": after_match_url if in_study else None,
                # A study table whose bots pass for players lists no bots to add.
                "botGroups": [] if table.bots_as_players else _bot_menu(),
                "defaultBot": DEFAULT_BOT,
                "seatingUrl": reverse("lobby:seating", args=[table.public_id]),
                "seatUrl": reverse("lobby:seat", args=[table.public_id]),
                "rematchUrl": reverse("lobby:rematch", args=[table.public_id]),
                "known": p.known,
                "silent": silent,
                "sounds": {name: static(f"sounds/{name}.wav") for name in TABLE_SOUNDS},
            },
        },
    )


def _seating(request: HttpRequest, table: Table, listing: TableListing) -> dict[str, Any]:
    p = player_of(request)
    summary = table_summary(table, listing)
    mine = seat_of(table, p)
    host = is_host(table, listing, p)
    return {
        "status": table.status,
        "seats": summary["seats"],
        "my_seat": mine,
        "is_host": host,
        "known": p.known,
        "may_take_reserved": host or invited(request, table),
        # Open seats offered to any bot accepting challenges (game.external_bots.ANY_BOT).
        "offered": external_bots.offered(table.pk) if table.status == Table.Status.OPEN else [],
        "rematch": (
            reverse("lobby:table", args=[listing.rematch.public_id]) if listing.rematch else None
        ),
    }


@require_GET
def seating_json(request: HttpRequest, public_id: str) -> HttpResponse:
    table = get_table(public_id)
    if (refused := bound_refusal(request, public_id, json=True)) is not None:
        return refused
    listing = listing_of(table)
    if not may_see(request, table, listing, player_of(request)):
        return JsonResponse({"error": "this table is private"}, status=403)
    return JsonResponse(_seating(request, table, listing))


@require_POST
def seat_action(request: HttpRequest, public_id: str) -> HttpResponse:
    """Take, change or leave a seat; the host adds or removes bots and starts."""
    table = get_table(public_id)
    if (refused := bound_refusal(request, public_id, json=True)) is not None:
        return refused
    listing = listing_of(table)
    if not may_see(request, table, listing, player_of(request)):
        return JsonResponse({"error": "this table is private"}, status=403)
    if not within_limit(request, "seat"):
        return JsonResponse({"error": "slow down: too many seat changes"}, status=429)
    try:
        seat_commands.run(request, table, listing, request.POST.get("op", ""))
    except seat_commands.LobbyError as e:
        return JsonResponse({"error": str(e)}, status=400)
    except ServiceError as e:
        return JsonResponse({"error": e.message}, status=400)
    table.refresh_from_db()
    listing.refresh_from_db()
    return JsonResponse(_seating(request, table, listing))


@require_POST
def rematch(request: HttpRequest, public_id: str) -> HttpResponse:
    """A new table with the same seats and rules (the same one for everybody who asks)."""
    table = get_table(public_id)
    p = player_of(request)
    if seat_of(table, p) is None or identity.after_match_url(request.session, public_id):
        messages.error(request, "only the players of this table can ask for a rematch")
        return redirect("lobby:table", table.public_id)
    if table.status != Table.Status.FINISHED:
        messages.error(request, "the match is not over yet")
        return redirect("lobby:table", table.public_id)

    def write() -> Changed[Table]:
        listing_of(table)
        listing = TableListing.objects.select_for_update().get(table=table)
        if listing.rematch is not None:
            return Changed(listing.rematch)
        new = seating.create_rematch(table)
        TableListing.objects.create(
            table=new,
            private=listing.private,
            host_guest_id=listing.host_guest_id,
            host_name=listing.host_name,
        )
        listing.rematch = new
        listing.save(update_fields=["rematch"])
        # Told after the commit: a socket that hears of the rematch then finds it.
        return Changed(new, (table.pk,))

    target = master.get().change(write)
    return redirect("lobby:table", target.public_id)
