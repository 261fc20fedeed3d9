"""The staff dashboard shows the latest bidding league: the JSON manage.py league
writes, read by game/research/league_table.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from lab.tournaments.league import LeagueConfig, run_league, write_json

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client: Client) -> Client:
    user = get_user_model().objects.create_user("boss", password="pw-boss-123", is_staff=True)
    client.force_login(user)
    return client


def test_the_dashboard_shows_the_league_table(staff: Client, settings: Any, tmp_path: Path) -> None:
    summary = run_league(LeagueConfig(("BIS", "RB", "MS"), games=4, seed=3), tmp_path / "logs")
    summary["commit"] = "abc1234"
    write_json(summary, tmp_path / "league.json")
    settings.SPADES_LEAGUE_FILE = str(tmp_path / "league.json")
    html = staff.get("/dashboard/").content.decode()
    table = html[html.index('id="league-table"') :]
    table = table[: table.index("</table>")]
    assert [row.split("</td>")[0] for row in table.split("<tr><td>")[1:]] == [
        b["bidder"] for b in summary["bidders"]
    ]
    assert "4 duplicate games per pair, seed 3" in html and "code abc1234" in html
    top = summary["bidders"][0]
    assert f"{top['rating']:.0f} ± {top['rating_ci95']:.0f}" in table


def test_without_a_league_the_dashboard_says_how_to_make_one(
    staff: Client, settings: Any, tmp_path: Path
) -> None:
    settings.SPADES_LEAGUE_FILE = str(tmp_path / "none.json")
    html = staff.get("/dashboard/").content.decode()
    assert 'id="league"' in html and "No league yet" in html
