"""Rating bands: how strong a partnership's people were as its match started,
a key of the dashboard's tallies (docs/ratings.md, "Rating bands").

A partnership's band is that of its human seats' conservative rating
(``mu - 3 sigma``, the leaderboard's; the mean of the two for two people)
among ``SPADES_RATING_BANDS``' edges, read when the match starts
(``game.seating.start_table``) and kept on the table: ratings change only at
a match's end, so a person's rating during a match is the one it started
with. Band 0 is a partnership with no rated human: bots only, or people with
no rated match yet (a guest's first match, an imported player). The table's
bands are copied to its round rows and match result as they are written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.conf import settings
from django.db.models import Q

from game.ratings.compute import conservative
from game.ratings.models import Rating

NO_BAND = 0
NO_BAND_LABEL = "no rated human"


def edges() -> list[tuple[str, float]]:
    """(name, lowest conservative rating) of each band, lowest first."""
    return [(name, float(low)) for name, low in settings.SPADES_RATING_BANDS]


def band_of(rating: float, table: Sequence[tuple[str, float]] | None = None) -> int:
    """The band (1 ..) of a conservative rating: the last whose edge it reaches."""
    bands = edges() if table is None else table
    band = 1
    for i, (_, low) in enumerate(bands, start=1):
        if rating >= low:
            band = i
    return band


def choices() -> list[tuple[int, str]]:
    """Every band with its edges in words, band 0 first (the dashboard's filter)."""
    bands = edges()
    out = [(NO_BAND, f"0: {NO_BAND_LABEL}")]
    for i, (name, low) in enumerate(bands, start=1):
        high = bands[i][1] if i < len(bands) else None
        if low == float("-inf"):
            span = f"below {high:g}" if high is not None else "any rating"
        else:
            span = f"{low:g} to {high:g}" if high is not None else f"{low:g} and above"
        out.append((i, f"{i}: {name} ({span})"))
    return out


def side_bands(seats: Iterable[Any]) -> tuple[int, int]:
    """The N/S and E/W bands of a table's seats now (its match starting): one read."""
    humans = [s for s in seats if s.kind == "human" and (s.user_id is not None or s.guest_id)]
    q = Q(pk__in=[])
    for s in humans:
        q |= Q(user_id=s.user_id) if s.user_id is not None else Q(guest_id=s.guest_id)
    found = list(Rating.objects.filter(q, matches__gt=0)) if humans else []
    by_user = {r.user_id: r for r in found if r.user_id is not None}
    by_guest = {r.guest_id: r for r in found if r.guest_id}
    sides: tuple[list[float], list[float]] = ([], [])
    for s in humans:
        r = by_user.get(s.user_id) if s.user_id is not None else by_guest.get(s.guest_id)
        if r is not None:
            sides[s.position % 2].append(conservative(r.mu, r.sigma))
    ns, ew = (band_of(sum(c) / len(c)) if c else NO_BAND for c in sides)
    return ns, ew


def table_bands(table: Any) -> dict[str, int]:
    """The columns a table's round rows and match result copy."""
    return {"band_ns": table.band_ns, "band_ew": table.band_ew}
