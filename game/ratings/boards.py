"""The ratings as the pages read them: the leaderboard's two tables, a player's
rating and its history (the profile's chart)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from game.ratings import compute
from game.ratings.models import Rating, RatingChange
from game.research import league_table

Z95 = 1.96  # a 95 % interval: mu ± 1.96 sigma


@dataclass(frozen=True)
class Shown:
    """A rating as a page shows it."""

    name: str
    mu: float
    sigma: float
    matches: int
    wins: int

    @property
    def conservative(self) -> float:
        return compute.conservative(self.mu, self.sigma)

    @property
    def low(self) -> float:
        return self.mu - Z95 * self.sigma

    @property
    def high(self) -> float:
        return self.mu + Z95 * self.sigma


def people(min_matches: int, limit: int = 100) -> list[Shown]:
    """Accounts with at least ``min_matches`` rated matches, by mu - 3 sigma
    (the index ``rating_board`` serves the order)."""
    found = (
        Rating.objects.filter(kind=Rating.Kind.USER, matches__gte=min_matches)
        .order_by("-conservative", "id")
        .select_related("user")[:limit]
    )
    return [Shown(r.user.get_username() if r.user else "?", r.mu, r.sigma, r.matches, r.wins)
            for r in found]  # fmt: skip


def league_ratings() -> dict[str, tuple[float, float]]:
    """Each bot kind's league rating and its 95 % half-width (the league's
    bidders with its player), from ``game/research/league.json``."""
    data = league_table.latest()
    if data is None:
        return {}
    player = data.get("config", {}).get("player", "")
    return {
        f"{b['bidder']}+{player}": (float(b["rating"]), float(b.get("rating_ci95", 0.0)))
        for b in data["bidders"]
        if "rating" in b
    }


def bots() -> list[dict[str, Any]]:
    """Every rated bot kind (rated in matches with people only), best first, with its
    league rating where the league has it."""
    league = league_ratings()
    found = Rating.objects.filter(kind=Rating.Kind.BOT).order_by("-mu", "key")
    return [
        {"rating": Shown(r.name, r.mu, r.sigma, r.matches, r.wins), "league": league.get(r.name)}
        for r in found
    ]


def rating_of(user_id: int | None, guest_id: str) -> Rating | None:
    """A player's rating row: the account's, else the guest's (by guest id)."""
    if user_id is None and not guest_id:
        return None
    q = Q(user_id=user_id) if user_id is not None else Q(guest_id=guest_id)
    return Rating.objects.filter(q).first()


def ratings_of_bots(names: list[str]) -> dict[str, Rating]:
    return {r.name: r for r in Rating.objects.filter(key__in=[f"b:{n}" for n in names])}


def history(rating: Rating, limit: int = 200) -> list[RatingChange]:
    """The rating's last ``limit`` changes, oldest first."""
    changes = list(
        RatingChange.objects.filter(rating=rating).select_related("table").order_by("-id")[:limit]
    )
    return changes[::-1]


def chart(changes: list[RatingChange], width: int = 600, height: int = 160) -> dict[str, Any]:
    """An SVG line chart's points: mu and mu - 3 sigma after each match, from
    the starting rating."""
    if not changes:
        return {}
    mus = [changes[0].mu_before, *(c.mu for c in changes)]
    lows = [compute.conservative(changes[0].mu_before, changes[0].sigma_before)]
    lows += [compute.conservative(c.mu, c.sigma) for c in changes]
    top, bottom = max(mus) + 1, min(lows) - 1
    pad = 6

    def points(values: list[float]) -> str:
        step = (width - 2 * pad) / max(1, len(values) - 1)
        return " ".join(
            f"{pad + i * step:.1f},{pad + (top - v) / (top - bottom) * (height - 2 * pad):.1f}"
            for i, v in enumerate(values)
        )

    return {"width": width, "height": height, "mu": points(mus), "low": points(lows),
            "top": round(top), "bottom": round(bottom)}  # fmt: skip
