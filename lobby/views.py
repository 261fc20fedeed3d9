"""Lobby pages: players, the list of open tables, new tables (one table's
page and its commands: ``lobby.table_views``).

Every change to a table goes through ``game.seating``; these views (and the
seat commands, ``lobby.seat_commands``) only decide who may ask for it (the
host, a seated player, an invitee: ``lobby.players``) and turn
``ServiceError`` into a message the player reads.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from bots.registry import DEFAULT_BOT
from game import abandoned, identity, seating
from game.engine.rules import Rules
from game.errors import ServiceError, TableNotFound
from game.models import Table
from game.ratings.rebuild import claim_guest
from game.sockets import limits
from lobby import levels
from lobby.forms import (
    SEAT_INVITE,
    SEAT_ME,
    SEAT_OPEN,
    GuestForm,
    SignUpForm,
    TableForm,
)
from lobby.models import TableListing
from lobby.players import (
    Player,
    bound_refusal,
    player_of,
    running_tables_of,
)

PLAY_NOW_SEAT = 2  # South: the bottom of the screen


def get_table(public_id: str) -> Table:
    try:
        return seating.get_table(public_id)
    except TableNotFound:
        raise Http404("there is no such table") from None


def _safe_next(request: HttpRequest, default: str = "/") -> str:
    target = request.POST.get("next") or request.GET.get("next") or default
    if url_has_allowed_host_and_scheme(target, {request.get_host()}, request.is_secure()):
        return target
    return default


# ----- players ---------------------------------------------------------------------


@require_POST
def guest(request: HttpRequest) -> HttpResponse:
    """Play as a guest: remember a display name in the session."""
    form = GuestForm(request.POST)
    if form.is_valid():
        identity.ensure_guest(request.session, form.cleaned_data["name"])
        messages.success(request, f"Welcome, {form.cleaned_data['name']}!")
    else:
        messages.error(request, "; ".join(form.errors.get("name", ["That name will not do."])))
    return redirect(_safe_next(request))


def signup(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = SignUpForm(request.POST)
        if form.is_valid():
            user = form.save()
            guest_id, _ = identity.guest_of(request.session)
            claim_guest(guest_id, user)  # the guest's rating is the account's now
            login(request, user)
            messages.success(request, f"Welcome, {user.get_username()}! Your account is ready.")
            return redirect("lobby:home")
    else:
        form = SignUpForm()
    return render(request, "registration/signup.html", {"form": form})


# ----- the lobby -------------------------------------------------------------------


def table_summary(t: Table, listing: TableListing | None) -> dict[str, Any]:
    reserved = set(listing.reserved if listing else [])
    by_position = {s.position: s for s in t.seats.all()}
    seats = []
    for position in range(4):
        s = by_position.get(position)
        if s is not None:
            shown = s.to_public_dict(t.bots_as_players)
            seats.append({"position": position, "state": shown["kind"], "name": shown["name"],
                          "bot": shown["bot_name"]})  # fmt: skip
        else:
            seats.append(
                {
                    "position": position,
                    "state": "reserved" if position in reserved else "open",
                    "name": None,
                }
            )
    rules = t.rules
    host = (t.host.get_username() if t.host_id and t.host else "") or (
        listing.host_name if listing else ""
    )
    return {
        "id": t.public_id,
        "url": reverse("lobby:table", args=[t.public_id]),
        "host": host or "someone",
        "seats": seats,
        "free": sum(1 for s in seats if s["state"] == "open"),
        "goal": rules.get("winning_goal"),
        "losing_goal": rules.get("losing_goal"),
        "nil": rules.get("nil"),
        "blind_nil": rules.get("blind_nil"),
        "turn_seconds": t.turn_seconds,
    }


def open_tables() -> list[dict[str, Any]]:
    abandoned.sweep_now_and_then()
    tables = seating.list_open_tables()
    listings = {
        x.table_id: x for x in TableListing.objects.filter(table__in=[t.pk for t in tables])
    }
    return [
        table_summary(t, listings.get(t.pk))
        for t in tables
        if not (listings.get(t.pk) and listings[t.pk].private)
    ]


def home(request: HttpRequest, status: int = 200) -> HttpResponse:
    """The lobby: who you are, Play now, a new table, and the open tables (live)."""
    return render(
        request,
        "lobby/home.html",
        {
            "player": (p := player_of(request)),
            "running": running_tables_of(p),
            "guest_form": GuestForm(),
            "tables": open_tables(),
            "default_bot": DEFAULT_BOT,
            "levels": levels.levels(),
            "default_level": levels.default_level(),
        },
        status=status,
    )


TOO_MANY_TABLES = "You have started many tables in a short time: wait a few minutes."


def within_limit(request: HttpRequest, kind: str, p: Player | None = None) -> bool:
    """Count a ``kind`` request of this player and address (``game.sockets.limits``)."""
    p = p or player_of(request)
    key = limits.player_key(p.user, p.guest_id)
    return limits.hit(kind, key, request.META.get("REMOTE_ADDR") or "unknown")


@require_GET
def tables_json(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"tables": open_tables()})


def _identify_or_guest(request: HttpRequest) -> Player | None:
    """The player; a name posted with the form makes a guest on the way."""
    p = player_of(request)
    if p.known:
        return p
    form = GuestForm(request.POST)
    if form.is_valid():
        identity.ensure_guest(request.session, form.cleaned_data["name"])
        return player_of(request)
    messages.error(request, "Choose a name first (or log in) to sit at a table.")
    return None


def _new_listing(table: Table, p: Player, *, private: bool, reserved: list[int]) -> TableListing:
    return TableListing.objects.create(
        table=table,
        private=private,
        reserved=reserved,
        host_guest_id="" if p.user is not None else p.guest_id,
        host_name=p.name,
    )


@require_POST
def play_now(request: HttpRequest) -> HttpResponse:
    """One click: you in the South seat, three bots, the match starts."""
    if (refused := bound_refusal(request)) is not None:
        return refused
    try:  # the level first: a name that does not exist changes nothing
        bot = levels.bot_of(request.POST.get("level") or levels.default_level())
    except levels.UnknownLevel as e:
        messages.error(request, str(e))
        return home(request, status=400)
    p = _identify_or_guest(request)
    if p is None:
        return redirect("lobby:home")
    if not within_limit(request, "tables", p):
        messages.error(request, TOO_MANY_TABLES)
        return home(request, status=429)
    with transaction.atomic():
        table = seating.create_table(host=p.user)
        _new_listing(table, p, private=True, reserved=[])
        seating.take_seat(table, PLAY_NOW_SEAT, **p.seat_kwargs())
        for position in range(4):
            if position != PLAY_NOW_SEAT:
                seating.add_bot(table, position, bot)
        seating.start_table(table)
    return redirect("lobby:table", table.public_id)


def new_table(request: HttpRequest) -> HttpResponse:
    if (refused := bound_refusal(request)) is not None:
        return refused
    p = player_of(request)
    if request.method == "POST":
        form = TableForm(request.POST)
        if form.is_valid():
            p = _identify_or_guest(request) if not p.known else p
            if p is None:
                return redirect(f"{reverse('lobby:home')}")
            if not within_limit(request, "tables", p):
                form.add_error(None, TOO_MANY_TABLES)
                return render(
                    request, "lobby/new_table.html", {"form": form, "player": p}, status=429
                )
            seats = form.seats()
            rules: Rules = form.cleaned_data["rules"]
            try:
                with transaction.atomic():
                    table = seating.create_table(
                        host=p.user, rules=rules, turn_seconds=form.cleaned_data["turn_seconds"]
                    )
                    _new_listing(
                        table,
                        p,
                        private=form.cleaned_data["private"],
                        reserved=[i for i, s in enumerate(seats) if s == SEAT_INVITE],
                    )
                    for position, choice in enumerate(seats):
                        if choice == SEAT_ME:
                            seating.take_seat(table, position, **p.seat_kwargs())
                        elif choice not in (SEAT_OPEN, SEAT_INVITE):
                            seating.add_bot(table, position, choice)
            except ServiceError as e:
                form.add_error(None, e.message)
            else:
                return redirect("lobby:table", table.public_id)
    else:
        form = TableForm()
    return render(request, "lobby/new_table.html", {"form": form, "player": p})
