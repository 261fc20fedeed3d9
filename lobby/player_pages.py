"""A player's pages: the leaderboard, one's own profile, and an account's
public profile (opt-in, ``PublicProfile``). Their figures come from
``game.ratings.boards`` and ``lobby.player_stats``."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from game.ratings import boards
from game.research.round_rows import record_pending
from lobby.models import PublicProfile
from lobby.player_stats import figures
from lobby.players import Player, games_of, my_seats, player_of

RECENT_GAMES = 30


def leaderboard(request: HttpRequest) -> HttpResponse:
    minimum = settings.SPADES_LEADERBOARD_MIN_MATCHES
    people = boards.people(minimum)
    public = set(  # the names linked to their public profiles
        PublicProfile.objects.filter(
            public=True, user__username__in=[r.name for r in people]
        ).values_list("user__username", flat=True)
    )
    return render(
        request,
        "lobby/leaderboard.html",
        {"people": people, "public": public, "bots": boards.bots(), "minimum": minimum},
    )


def _profile_context(p: Player) -> dict[str, Any]:
    games = games_of(p, limit=RECENT_GAMES)
    rating = boards.rating_of(p.user.pk if p.user else None, p.guest_id)
    changes = boards.history(rating) if rating else []
    record_pending(tables=[g["table"].pk for g in games])  # the last rounds, written now
    wins = sum(1 for g in games if g["outcome"] == "Won")
    return {
        "player": p,
        "games": games,
        "wins": wins,
        "losses": sum(1 for g in games if g["outcome"] == "Lost"),
        "rating": rating,
        "rating_shown": rating and boards.Shown("", rating.mu, rating.sigma, 0, 0),
        "chart": boards.chart(changes),
        "stats": figures(my_seats(p)),
    }


def profile(request: HttpRequest) -> HttpResponse:
    p = player_of(request)
    context = _profile_context(p) if p.known else {"player": p}
    if p.user is not None:
        shown = PublicProfile.objects.filter(user=p.user, public=True).exists()
        context["public"] = shown
    return render(request, "lobby/profile.html", context)


@require_POST
def make_public(request: HttpRequest) -> HttpResponse:
    """An account shows (or hides) its profile at /players/<name>/."""
    if not request.user.is_authenticated:
        messages.error(request, "Only an account has a public profile: sign up first.")
        return redirect("lobby:profile")
    public = request.POST.get("public") == "1"
    PublicProfile.objects.update_or_create(user=request.user, defaults={"public": public})
    messages.success(request, "Your profile is public." if public else "Your profile is private.")
    return redirect("lobby:profile")


def public_profile(request: HttpRequest, username: str) -> HttpResponse:
    user = get_user_model().objects.filter(username=username).first()
    shown = user is not None and PublicProfile.objects.filter(user=user, public=True).exists()
    if not shown:  # one answer for private and unknown: nobody learns which names exist
        return render(request, "lobby/private_profile.html", {"name": username[:150]}, status=404)
    p = Player(user, "", user.get_username())
    return render(request, "lobby/profile.html", {**_profile_context(p), "public_view": True})
