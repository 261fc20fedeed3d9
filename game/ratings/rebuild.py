"""Every rating again from the stored matches (``manage.py rebuild_ratings``),
and a guest's rating kept by the account they sign up for.

The rebuild replays first the matches never rated (finished before the
ratings existed, or left out) by their end, then the rated ones in the order
they were rated (their first history row's id: two matches that share an
entrant were rated one after the other, under its row's lock, so the ids
follow that order; the end times of two tables ending together need not);
each through ``compute`` as the live path does, with the seats as the match
left them.
Who a guest is stays as claimed: the rows' ``guest_id``s are kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Min

from game.models import MatchResult, Seat, Table
from game.ratings import compute
from game.ratings.models import Rating, RatingChange

BATCH = 2000


@dataclass
class Kept:
    """A rating row as the rebuild holds it."""

    row: Rating
    matches: int = 0
    wins: int = 0


def _ordered_results() -> Iterator[MatchResult]:
    first = dict(
        RatingChange.objects.values("table_id")
        .annotate(first=Min("id"))
        .values_list("table_id", "first")
    )
    found = list(
        MatchResult.objects.filter(table__status=Table.Status.FINISHED).values_list(
            "table_id", "finished_at"
        )
    )
    order = sorted(found, key=lambda t: (t[0] in first, first.get(t[0], 0), t[1], t[0]))
    for start in range(0, len(order), BATCH):
        ids = [table_id for table_id, _ in order[start : start + BATCH]]
        results = MatchResult.objects.select_related("table").in_bulk(ids, field_name="table_id")
        yield from (results[i] for i in ids)


def _seats(results: list[MatchResult]) -> dict[int, dict[int, Seat]]:
    seats: dict[int, dict[int, Seat]] = {}
    for seat in Seat.objects.filter(table_id__in=[r.table_id for r in results]):
        seats.setdefault(seat.table_id, {})[seat.position] = seat
    return seats


def rebuild() -> int:
    """Recompute every rating and its history; the number of matches rated."""
    with transaction.atomic():
        kept = {r.key: Kept(r) for r in Rating.objects.select_for_update().order_by("key")}
        by_guest = {k.row.guest_id: k for k in kept.values() if k.row.guest_id}
        mu0, sigma0 = compute.new_rating()
        for k in kept.values():
            k.row.mu, k.row.sigma, k.row.updated_at = mu0, sigma0, None
        changes: list[tuple[Kept, dict[str, Any]]] = []
        rated = 0
        pending: list[MatchResult] = []

        def replay(batch: list[MatchResult]) -> int:
            count = 0
            seats = _seats(batch)
            for result in batch:
                entrants = compute.rated_entrants(
                    seats.get(result.table_id, {}), result.table.rated, result.stand_in_rounds
                )
                if entrants is None:
                    continue
                count += 1
                at: dict[int, Kept] = {}
                for p, e in entrants.items():
                    found = by_guest.get(e.guest_id) if e.guest_id else kept.get(e.key)
                    if found is None:
                        row = Rating(key=e.key, kind=e.kind, user_id=e.user_id,
                                     guest_id=e.guest_id, name=e.name[:40],
                                     mu=mu0, sigma=sigma0)  # fmt: skip
                        found = kept[e.key] = Kept(row)
                        if e.guest_id:
                            by_guest[e.guest_id] = found
                    at[p] = found
                keys = {p: k.row.key for p, k in at.items()}
                before = {k.row.key: (k.row.mu, k.row.sigma) for k in at.values()}
                after = compute.update(keys, before, result.winner)
                for key, k in sorted({k.row.key: k for k in at.values()}.items()):
                    won = compute.won(keys, key, result.winner)
                    changes.append((k, {
                        "table_id": result.table_id, "finished_at": result.finished_at,
                        "mu_before": k.row.mu, "sigma_before": k.row.sigma, "won": won,
                        "mu": after[key][0], "sigma": after[key][1],
                    }))  # fmt: skip
                    k.row.mu, k.row.sigma = after[key]
                    k.row.updated_at = result.finished_at
                    k.matches, k.wins = k.matches + 1, k.wins + int(won)
            return count

        for result in _ordered_results():
            pending.append(result)
            if len(pending) == BATCH:
                rated += replay(pending)
                pending = []
        rated += replay(pending)
        _write(list(kept.values()), changes)
    return rated


def _write(kept: list[Kept], changes: list[tuple[Kept, dict[str, Any]]]) -> None:
    RatingChange.objects.all().delete()
    for k in kept:
        k.row.matches, k.row.wins = k.matches, k.wins
        k.row.conservative = compute.conservative(k.row.mu, k.row.sigma)
    fields = ["mu", "sigma", "conservative", "matches", "wins", "updated_at"]
    Rating.objects.bulk_update([k.row for k in kept if k.row.pk], fields, batch_size=BATCH)
    Rating.objects.bulk_create([k.row for k in kept if not k.row.pk], batch_size=BATCH)
    RatingChange.objects.bulk_create(
        (RatingChange(rating_id=k.row.pk, **values) for k, values in changes), batch_size=BATCH
    )


def claim_guest(guest_id: str, user: Any) -> bool:
    """The guest's rating becomes the new account's (signing up keeps it); False
    when the guest has none or the account has one already."""
    if not guest_id:
        return False
    with transaction.atomic():
        if Rating.objects.filter(user=user).exists():
            return False
        claimed = Rating.objects.filter(guest_id=guest_id, kind=Rating.Kind.GUEST).update(
            kind=Rating.Kind.USER, key=f"u:{user.pk}", user=user
        )
    return claimed == 1
