"""``tournament --ns ext:<name>`` and ``league --bidders ...,ext:<name>``: what
they refuse before they serve anything (the games themselves:
tests/botapi/test_live_client.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from botapi import accounts
from lab.tournaments.external import external_side
from lab.tournaments.league import LeagueConfig, run_league
from lab.tournaments.tournament import TournamentConfig, TournamentError, run_tournament

pytestmark = pytest.mark.django_db


def _games(*extra: str) -> list[str]:
    return ["--ew", "BIS+SRP", "--games", "2", "--no-progress", *extra]


def test_an_unknown_or_revoked_external_bot_is_refused() -> None:
    with pytest.raises(CommandError, match="no external bot called 'nobody'"):
        call_command("tournament", "--ns", "ext:nobody", *_games())
    owner = User.objects.create_user("author")
    account, _ = accounts.register(owner, "gone", "", "a@b.c")
    accounts.revoke(account)
    with pytest.raises(CommandError, match="no external bot called 'gone'"):
        call_command("tournament", "--ns", "ext:gone", *_games())


def test_an_external_bot_is_never_played_in_process_nor_on_celery() -> None:
    owner = User.objects.create_user("author")
    accounts.register(owner, "here", "", "a@b.c")
    with pytest.raises(CommandError, match="no --celery, no --store"):
        call_command("tournament", "--ns", "ext:here", *_games("--celery"))
    with pytest.raises(TournamentError, match="through the bot protocol"):
        run_tournament(TournamentConfig("ext:here", "BIS+SRP", 2))
    with pytest.raises(TournamentError, match="one external bot"):
        external_side(TournamentConfig("ext:here", "ext:there", 2))
    assert external_side(TournamentConfig("BIS+SRP", "ext:here", 2)) == "here"
    assert external_side(TournamentConfig("BIS+SRP", "RB+WRP", 2)) is None


def test_a_league_takes_one_external_bot_and_plays_it_only_through_the_protocol(
    tmp_path: Path,
) -> None:
    owner = User.objects.create_user("author")
    accounts.register(owner, "here", "", "a@b.c")
    accounts.register(owner, "there", "", "a@b.c")
    config = LeagueConfig(bidders=("RB", "ext:here"), games=2)
    assert config.tournament("RB", "ext:here").ns == "RB+SRP"
    assert config.tournament("RB", "ext:here").ew == "ext:here"  # whole: it bids and plays
    assert config.external() == "here"
    with pytest.raises(TournamentError, match="one external bot"):
        LeagueConfig(bidders=("RB", "ext:here", "ext:there"), games=2).validate()
    with pytest.raises(TournamentError, match="through the bot protocol"):
        run_league(config, tmp_path)
    league = ["--games", "2", "--no-progress", "--logs", str(tmp_path), "--markdown", "",
              "--json", ""]  # fmt: skip
    with pytest.raises(CommandError, match="no external bot called 'nobody'"):
        call_command("league", "--bidders", "RB,ext:nobody", *league)
    with pytest.raises(CommandError, match="sits at no more than 10 tables"):
        call_command("league", "--bidders", "RB,ext:here", "--bot-tables", "11", *league)
    assert not list(tmp_path.iterdir())  # refused before a game or a log
