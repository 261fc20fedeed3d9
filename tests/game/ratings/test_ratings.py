"""Ratings (game/ratings/): the live update equals openskill's own, a crash in
the match's end leaves nothing, excluded matches change nothing, and
``rebuild_ratings`` equals the live ratings on a random history."""

from __future__ import annotations

import io
import random
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone
from openskill.models import PlackettLuce

from game import master
from game.models import MatchResult, Seat, Table
from game.moves import rows
from game.ratings import compute, match_end
from game.ratings.models import Rating, RatingChange
from game.ratings.rebuild import claim_guest
from game.sql import statements
from tests.support.helpers import human_move, make_table, play_humans

pytestmark = pytest.mark.django_db(transaction=True)


def ratings() -> dict[str, tuple[float, float, int, int]]:
    return {r.key: (r.mu, r.sigma, r.matches, r.wins) for r in Rating.objects.all()}


def history() -> list[tuple[Any, ...]]:
    return sorted(
        RatingChange.objects.values_list(
            "rating__key", "table_id", "mu_before", "sigma_before", "mu", "sigma", "won"
        )
    )


def library_update(
    before: dict[str, tuple[float, float]], seats: list[str], winner: int
) -> dict[str, tuple[float, float]]:
    """openskill's own update, by hand: N/S against E/W."""
    model = PlackettLuce()
    teams = [[model.rating(*before[seats[p]]) for p in side] for side in ((0, 2), (1, 3))]
    out = model.rate(teams, ranks=[1, 2] if winner == 0 else [2, 1])
    return {
        seats[p]: (r.mu, r.sigma)
        for side, team in zip(((0, 2), (1, 3)), out, strict=True)
        for p, r in zip(side, team, strict=True)
    }


def test_a_match_moves_the_ratings_as_the_library_does(live: Any) -> None:
    rng = random.Random(45)
    keys = [f"g:g{p}" for p in range(4)]
    expected = dict.fromkeys(keys, (25.0, 25 / 3))
    for _ in range(2):
        table = play_humans(make_table("HHHH"), rng)
        assert table.status == Table.Status.FINISHED
        winner = MatchResult.objects.get(table=table).winner
        expected = library_update(expected, keys, winner)
        got = ratings()
        for key in keys:
            assert (got[key][0], got[key][1]) == expected[key]
    assert {v[2] for v in ratings().values()} == {2}
    assert RatingChange.objects.count() == 8
    # the same figures the library gives, by value too (hand-checked once)
    assert abs(library_update(dict.fromkeys(keys, (25.0, 25 / 3)), keys, 0)["g:g0"][0]
               - 26.964294621803063) < 1e-12  # fmt: skip


def test_bots_of_one_kind_share_a_rating_and_a_human_is_rated_against_them(live: Any) -> None:
    table = play_humans(make_table("HBBB", bot="RB+WRP"), random.Random(3))
    assert table.status == Table.Status.FINISHED
    winner = MatchResult.objects.get(table=table).winner
    got = ratings()
    assert set(got) == {"g:g0", "b:RB+WRP"}
    assert got["g:g0"][2] == got["b:RB+WRP"][2] == 1
    assert got["g:g0"][3] == int(winner == 0)
    # the human alone: exactly the library's update for N
    lib = library_update({k: (25.0, 25 / 3) for k in ("h", "b1", "b2", "b3")},
                         ["h", "b1", "b2", "b3"], winner)  # fmt: skip
    assert got["g:g0"][:2] == lib["h"]


def test_a_crash_after_the_ratings_are_written_leaves_the_match_and_ratings(
    live: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    table = make_table("HHHH")
    seen: list[int] = []
    real = rows.finish_table_query

    def crash(table_pk: int, now: Any) -> Any:
        with connection.cursor() as cursor:  # the move's transaction, the ratings written
            cursor.execute(f"SELECT COUNT(*) FROM {RatingChange._meta.db_table}")
            seen.append(cursor.fetchone()[0])
        raise RuntimeError("the process died in the middle of the match's end")

    monkeypatch.setattr(rows, "finish_table_query", crash)
    while True:
        table.refresh_from_db()
        seat, action = human_move(table, rng)
        try:
            master.submit(table.pk, seat, action, table.version)
        except RuntimeError:
            break
    assert seen == [4]
    before = table.version
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING and table.version == before
    assert not MatchResult.objects.exists()
    assert not Rating.objects.exists() and not RatingChange.objects.exists()
    monkeypatch.setattr(rows, "finish_table_query", real)
    master.submit(table.pk, seat, action, table.version)
    table.refresh_from_db()
    assert table.status == Table.Status.FINISHED
    assert RatingChange.objects.count() == 4 and Rating.objects.count() == 4


def test_unrated_tables_and_bot_only_matches_change_nothing(live: Any) -> None:
    table = make_table("HHHH", start=False)
    Table.objects.filter(pk=table.pk).update(rated=False)  # a study said so
    from game import seating

    seating.start_table(table)
    assert play_humans(table, random.Random(1)).status == Table.Status.FINISHED
    bots = make_table("BBBB", bot="RB+WRP")
    bots.refresh_from_db()
    assert bots.status == Table.Status.FINISHED
    assert not Rating.objects.exists() and not RatingChange.objects.exists()


class FakeSeat:
    def __init__(self, position: int, kind: str, user_id: int | None = None,
                 guest_id: str = "", bot_name: str = "") -> None:  # fmt: skip
        self.position, self.kind, self.user_id = position, kind, user_id
        self.guest_id, self.guest_name, self.bot_name = guest_id, "", bot_name


def test_who_a_match_rates() -> None:
    seats = {0: FakeSeat(0, "human", guest_id="a"), 1: FakeSeat(1, "bot", bot_name="X"),
             2: FakeSeat(2, "human", user_id=3), 3: FakeSeat(3, "bot", bot_name="X")}  # fmt: skip
    found = compute.rated_entrants(seats, True, 0)
    assert found is not None and [e.key for e in found.values()] == ["g:a", "b:X", "u:3", "b:X"]
    assert compute.rated_entrants(seats, True, 1) is None  # a stand-in round
    assert compute.rated_entrants(seats, False, 0) is None  # its study said so
    bots = {p: FakeSeat(p, "bot", bot_name="X") for p in range(4)}
    assert compute.rated_entrants(bots, True, 0) is None


def _random_history(n: int, rng: random.Random) -> list[int]:
    """``n`` finished matches of accounts, guests and bots (stored in bulk), then
    each rated in its own transaction through the statements the move path runs;
    returns the tables left out."""
    users = [get_user_model().objects.create_user(f"p{i}", password=None) for i in range(6)]
    guests = [f"guest{i}" for i in range(6)]
    bots = ["RB+WRP", "BIS+SRP", "SIM50+SRP"]
    start = timezone.now() - timedelta(days=30)
    tables = Table.objects.bulk_create(
        Table(status=Table.Status.FINISHED, rated=rng.random() > 0.1) for _ in range(n)
    )
    seats: dict[int, dict[int, Seat]] = {}
    results = []
    for i, table in enumerate(tables):
        people = rng.sample([("u", u.pk) for u in users[1:]] + [("g", g) for g in guests], 4)
        for p in range(4):
            if rng.random() < 0.4 and p != 0:
                s = Seat(table=table, position=p, kind="bot", bot_name=rng.choice(bots))
            elif people[p][0] == "u":
                s = Seat(table=table, position=p, kind="human", user_id=people[p][1])
            else:
                s = Seat(table=table, position=p, kind="human", guest_id=people[p][1])
            seats.setdefault(table.pk, {})[p] = s
        results.append(MatchResult(
            table=table, finished_at=start + timedelta(minutes=i), winner=rng.randrange(2),
            score_ns=0, score_ew=0, bags_ns=0, bags_ew=0, rounds=3, version=100,
            stand_in_rounds=int(rng.random() < 0.1),
        ))  # fmt: skip
    Seat.objects.bulk_create(s for by_position in seats.values() for s in by_position.values())
    MatchResult.objects.bulk_create(results)
    for i, (table, result) in enumerate(zip(tables, results, strict=True)):
        if i == n // 2:  # a guest signs up half-way and keeps their rating
            assert claim_guest("guest0", users[0])
        with transaction.atomic():
            statements.run_steps(match_end.match_steps(table, seats[table.pk], result))
    return [t.pk for t, r in zip(tables, results, strict=True) if not t.rated or r.stand_in_rounds]


def test_rebuild_equals_the_live_ratings_on_a_random_history() -> None:
    excluded = _random_history(200, random.Random(2026))
    live, live_history = ratings(), history()
    assert len(live) > 10 and sum(v[2] for k, v in live.items() if k.startswith("b:")) > 50
    assert "g:guest0" not in live and live[f"u:{get_user_model().objects.get(username='p0').pk}"]
    call_command("rebuild_ratings", stdout=io.StringIO())
    assert ratings() == live
    assert history() == live_history
    # the excluded matches change nothing: without them, the same ratings
    assert excluded
    Table.objects.filter(pk__in=excluded).delete()
    call_command("rebuild_ratings", stdout=io.StringIO())
    assert ratings() == live and history() == live_history


def test_imported_players_are_never_rated() -> None:
    from game.research.exports import IMPORTED_PREFIX

    assert compute.IMPORTED_PREFIX == IMPORTED_PREFIX
    seats = {p: FakeSeat(p, "human", guest_id=f"{IMPORTED_PREFIX}p_{p}") for p in range(4)}
    assert compute.rated_entrants(seats, True, 0) is None
