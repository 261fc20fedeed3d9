"""Migration 0020's backfill of the rating bands (game/ratings/bands.py): a rated
match's bands from its people's ratings at its start (their history's
before-values), 0 where unknown."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE, AFTER = ("game", "0019_study_keys"), ("game", "0020_rating_bands")
WHEN = datetime(2026, 11, 1, tzinfo=UTC)


def _migrate(target: tuple[str, str]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


def _migrate_to_the_latest() -> None:
    """Every app's last migration again: a test after this one in the same
    process (a transactional one keeps the schema) needs the later columns."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_the_backfill_reads_the_ratings_at_each_matchs_start() -> None:
    apps = _migrate(BEFORE)
    try:
        Table, Seat = apps.get_model("game", "Table"), apps.get_model("game", "Seat")
        Rating, Change = apps.get_model("game", "Rating"), apps.get_model("game", "RatingChange")
        Result = apps.get_model("game", "MatchResult")

        def table(kinds: str, status: str = "finished") -> Any:
            t = Table.objects.create(status=status, rules={})
            for p, k in enumerate(kinds):
                if k == "B":
                    Seat.objects.create(table=t, position=p, kind="bot", bot_name="RB+SRP")
                else:
                    Seat.objects.create(table=t, position=p, kind="human", guest_id=k)
            Result.objects.create(table=t, winner=0, score_ns=1, score_ew=0, bags_ns=0,
                                  bags_ew=0, rounds=1, version=1)  # fmt: skip
            return t

        def rating(g: str, mu: float, sigma: float, matches: int) -> Any:
            return Rating.objects.create(key=f"g:{g}", kind="guest", guest_id=g, mu=mu,
                                         sigma=sigma, conservative=mu - 3 * sigma,
                                         matches=matches)  # fmt: skip

        first, second = table("aBbB"), table("aBbB")  # a, b at N/S twice
        unrated = table("aBbB")  # no history: unknown
        playing = table("BaBB", status="playing")
        a, b = rating("a", 30.0, 2.0, 2), rating("b", 22.0, 3.0, 2)
        # first: a's and b's first rated match (nobody rated at its start): band 0
        for r, t, mu, sigma in ((a, first, 25.0, 25 / 3), (b, first, 25.0, 25 / 3),
                                (a, second, 28.0, 3.0), (b, second, 20.0, 1.0)):  # fmt: skip
            Change.objects.create(rating=r, table=t, finished_at=WHEN, mu_before=mu,
                                  sigma_before=sigma, mu=mu, sigma=sigma, won=True)  # fmt: skip
        apps = _migrate(AFTER)
        Table, Result = apps.get_model("game", "Table"), apps.get_model("game", "MatchResult")
        got = {t.pk: (t.band_ns, t.band_ew) for t in Table.objects.all()}
        # second: a at 28 - 9 = 19, b at 20 - 3 = 17, mean 18: band 3 (12 to 20).
        # playing: a's rating now, 30 - 6 = 24, at E: band 4.
        assert got == {first.pk: (0, 0), second.pk: (3, 0), unrated.pk: (0, 0),
                       playing.pk: (0, 4)}  # fmt: skip
        assert {r.table_id: (r.band_ns, r.band_ew) for r in Result.objects.all()} == got
    finally:
        _migrate_to_the_latest()
