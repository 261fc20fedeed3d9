"""manage.py tournament --store: the tournament's games stored as ordinary matches
(lab/tournaments/storage.py)."""

from __future__ import annotations

import pytest

from game.models import MatchResult, RoundRecordRow

pytestmark = pytest.mark.django_db


def test_tournament_store_option_stores_the_tournaments_games() -> None:
    import argparse
    import io

    from lab.tournaments.storage import add_store_option, store_if_asked
    from lab.tournaments.tournament import add_arguments, run_from_options

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    add_store_option(parser)
    argv = ["--ns", "RB+SRP", "--ew", "MS+SRP", "--games", "4", "--seed", "9", "--store",
            "--no-progress"]  # fmt: skip
    opts = vars(parser.parse_args(argv))
    summary = run_from_options(opts, None)
    out = io.StringIO()
    assert store_if_asked(opts, out) == 4
    assert "stored 4 matches" in out.getvalue()
    assert MatchResult.objects.count() == 4
    # The stored games are the tournament's (same seeds, seats and bot random streams).
    assert RoundRecordRow.objects.count() == summary["rounds"]
    a_wins = MatchResult.objects.filter(winner=0, bot_n="RB+SRP").count()
    assert a_wins == summary["sides"][0]["wins"]
    assert store_if_asked({**opts, "store": False}, out) == 0
