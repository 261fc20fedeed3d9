"""The ratings' statements of the move that ends a match, run in its transaction.

``game.moves.move.save_steps`` yields :func:`match_steps` after the match's
result row: the ratings move with the match's end or not at all. Only a
match's end runs these (the full path): the quick move never ends a match.

Rows of entrants met for the first time are inserted first (``ON CONFLICT DO
NOTHING``, sorted by key: a guest whose id an account has claimed conflicts
on ``guest_id`` and is found by it), then every entrant's row is read and,
on PostgreSQL, locked (``FOR UPDATE``, by key: two matches ending together
with the same bot kind queue here, in one order); SQLite's write lock is
already held. The update follows, and one history row per entrant.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from datetime import datetime
from functools import cache
from typing import Any

from game.models import MatchResult, Seat, Table
from game.ratings import compute
from game.ratings.compute import Entrant
from game.ratings.models import Rating, RatingChange
from game.sql import instances
from game.sql.statements import Query, insert_query, no_value

NEW_COLUMNS = ("key", "kind", "user_id", "guest_id", "name", "mu", "sigma", "conservative",
               "matches", "wins")  # fmt: skip
Found = tuple[int, str, str, float, float]  # id, key, guest_id, mu, sigma


def _q(name: str) -> str:
    return instances.quote(name)


def insert_new_query(entrants: list[Entrant]) -> Query:
    """A row at the starting rating for each entrant that has none."""
    mu, sigma = compute.new_rating()
    rows = sorted({e.key: e for e in entrants}.values(), key=lambda e: e.key)
    names = ", ".join(_q(c) for c in NEW_COLUMNS)
    marks = ", ".join(["(" + ", ".join(["%s"] * len(NEW_COLUMNS)) + ")"] * len(rows))
    sql = f"INSERT INTO {_q(Rating._meta.db_table)} ({names}) VALUES {marks} ON CONFLICT DO NOTHING"
    params: list[Any] = []
    for e in rows:
        params += [e.key, e.kind, e.user_id, e.guest_id, e.name[:40], mu, sigma,
                   compute.conservative(mu, sigma), 0, 0]  # fmt: skip
    return Query(sql, params, no_value)


@cache
def _lock_clause() -> str:
    backend = instances.dialect()
    return f" {backend.ops.for_update_sql()}" if backend.features.has_select_for_update else ""


def read_query(entrants: list[Entrant]) -> Query:
    """The entrants' rows (a guest's by guest id: an account may have claimed it), locked."""
    keys = sorted({e.key for e in entrants})
    guests = sorted({e.guest_id for e in entrants if e.guest_id})
    where = f"{_q('key')} IN ({', '.join(['%s'] * len(keys))})"
    if guests:
        where += f" OR {_q('guest_id')} IN ({', '.join(['%s'] * len(guests))})"
    columns = ", ".join(_q(c) for c in ("id", "key", "guest_id", "mu", "sigma"))
    sql = (
        f"SELECT {columns} FROM {_q(Rating._meta.db_table)} WHERE {where} "
        f"ORDER BY {_q('key')}{_lock_clause()}"
    )
    return Query(sql, [*keys, *guests], lambda _, fetched: [tuple(r) for r in fetched])


def resolve(entrants: Mapping[int, Entrant], found: list[Found]) -> dict[int, Found]:
    """Each seat's row: a guest's by guest id, anyone else's by key."""
    by_key = {row[1]: row for row in found}
    by_guest = {row[2]: row for row in found if row[2]}
    return {p: by_guest[e.guest_id] if e.guest_id else by_key[e.key] for p, e in entrants.items()}


def update_query(rating_id: int, mu: float, sigma: float, won: bool, now: datetime) -> Query:
    sets = ", ".join(
        f"{_q(c)} = %s" for c in ("mu", "sigma", "conservative", "updated_at")
    )  # fmt: skip
    matches, wins = _q("matches"), _q("wins")
    sql = (
        f"UPDATE {_q(Rating._meta.db_table)} SET {sets}, {matches} = {matches} + 1, "
        f"{wins} = {wins} + %s WHERE {_q('id')} = %s"
    )
    when = Rating._meta.get_field("updated_at").get_db_prep_save(now, instances.dialect())
    params = [mu, sigma, compute.conservative(mu, sigma), when, int(won), rating_id]
    return Query(sql, params, no_value)


def match_steps(
    table: Table, seats: Mapping[int, Seat], result: MatchResult
) -> Generator[Query, Any, dict[int, tuple[float, float]]]:
    """Rate the match ``result`` has just finished, if it counts
    (``compute.rated_entrants``). Returns each seat's (mu, sigma) after it."""
    entrants = compute.rated_entrants(seats, table.rated, result.stand_in_rounds)
    if entrants is None:
        return {}
    return (yield from rate_steps(table.pk, entrants, result.winner, result.finished_at))


def rate_steps(
    table_pk: int, entrants: Mapping[int, Entrant], winner: int, now: datetime
) -> Generator[Query, Any, dict[int, tuple[float, float]]]:
    """The statements rating one match of ``entrants``."""
    yield insert_new_query(list(entrants.values()))
    rows = resolve(entrants, (yield read_query(list(entrants.values()))))
    keys = {p: row[1] for p, row in rows.items()}
    before = {row[1]: (row[3], row[4]) for row in rows.values()}
    after = compute.update(keys, before, winner)
    for key, row in sorted({row[1]: row for row in rows.values()}.items()):
        mu, sigma = after[key]
        won = compute.won(keys, key, winner)
        yield update_query(row[0], mu, sigma, won, now)
        yield insert_query(
            RatingChange(rating_id=row[0], table_id=table_pk, finished_at=now, won=won,
                         mu_before=row[3], sigma_before=row[4], mu=mu, sigma=sigma)
        )  # fmt: skip
    return {p: after[k] for p, k in keys.items()}
