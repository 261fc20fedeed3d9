"""The replay page /rounds/<id>/ (game/replays/views.py): who may see it, and a
live round's hands in no page."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from game import seating
from game.engine import Rules
from game.engine.cards import format_hand
from game.models import RoundRecordRow, Table
from game.moves import matches
from game.replays import tasks
from tests.support.helpers import make_table, play_humans

pytestmark = pytest.mark.django_db(transaction=True)

LONG = Rules(winning_goal=10_000, losing_goal=-10_000)
MID_MATCH_SEED = "replay-pages-2"


def guest(guest_id: str, name: str) -> Client:
    client = Client()
    session = client.session
    session["guest_id"] = guest_id
    session["guest_name"] = name
    session.save()
    return client


def config_of(html: str) -> dict[str, Any]:
    found = re.search(
        r'<script id="replay-config" type="application/json">(.*?)</script>', html, re.S
    )
    assert found is not None
    return json.loads(found.group(1))


@pytest.fixture
def mid_match(live: Any) -> tuple[Table, RoundRecordRow]:
    """A live match: round 1 finished, round 2 a few cards into its play. Its
    deal is fixed: a random one may cost its analysis more than the 20 s budget
    on a loaded machine (this one takes about two seconds)."""
    table = make_table("HHHH", LONG, start=False)
    Table.objects.filter(pk=table.pk).update(seed=MID_MATCH_SEED)
    seating.start_table(table)
    play_humans(table, random.Random(3), until_version=60 + 10)
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    row = RoundRecordRow.objects.get(table=table, round_number=1)
    return table, row


def test_the_players_staff_and_the_share_link_see_it_others_do_not(
    mid_match: tuple[Table, RoundRecordRow],
) -> None:
    table, row = mid_match
    url = f"/rounds/{row.pk}/"
    assert Client().get(url).status_code == 403
    assert guest("stranger", "Stranger").get(url).status_code == 403
    assert Client().get(f"/rounds/{row.pk}/analysis.json").status_code == 403
    seated = guest("g2", "Guest 2").get(url)
    assert seated.status_code == 200
    assert b"Double-dummy analysis" in seated.content
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("boss", is_staff=True))
    assert staff.get(url).status_code == 200
    invited = Client()
    assert invited.get(f"/join/{table.invite_token}/").status_code == 302
    assert invited.get(url).status_code == 200
    assert Client().get("/rounds/999999/").status_code == 404


def test_a_live_rounds_hands_are_in_no_page(mid_match: tuple[Table, RoundRecordRow]) -> None:
    table, row = mid_match
    live_round = matches.load_match(table).round
    assert live_round.round_number == 2 and not live_round.is_over
    seated = guest("g0", "Guest 0")
    assert seated.get(f"/t/{table.public_id}/round/2/").status_code == 404
    page = seated.get(f"/rounds/{row.pk}/").content.decode()
    data = seated.get(f"/rounds/{row.pk}/analysis.json").content.decode()
    for seat in range(4):
        for text in (page, data):
            assert format_hand(live_round.hands_dealt[seat]) not in text
            assert format_hand(live_round.hands[seat]) not in text
    shown = config_of(page)["replay"]
    first = [format_hand(h).split() for h in matches.load_match(table).rounds[0].hands_dealt]
    assert sorted(sum(shown["hands"].values(), [])) == sorted(sum(first, []))
    assert shown["round_number"] == 1 and len(shown["cards"]) == 52


def test_the_score_sheets_link_and_the_analysis_filling_in(
    mid_match: tuple[Table, RoundRecordRow],
) -> None:
    table, row = mid_match
    seated = guest("g1", "Guest 1")
    response = seated.get(f"/t/{table.public_id}/round/1/")
    assert response.status_code == 302 and response["Location"] == f"/rounds/{row.pk}/"
    page = seated.get(f"/rounds/{row.pk}/").content.decode()
    assert config_of(page)["stored"] == {"ready": False}
    assert "Analysing…" in page
    assert json.loads(seated.get(f"/rounds/{row.pk}/analysis.json").content) == {"ready": False}
    tasks.analyse_row(row, with_alternatives=False)
    ready = json.loads(seated.get(f"/rounds/{row.pk}/analysis.json").content)
    assert ready["ready"] and ready["error"] == "" and len(ready["analysis"]["cards"]) == 52
    assert ready["alternatives"] is None
    assert config_of(seated.get(f"/rounds/{row.pk}/").content.decode())["stored"]["ready"]


def test_the_dashboards_list_of_rounds_is_for_staff(
    mid_match: tuple[Table, RoundRecordRow],
) -> None:
    _, row = mid_match
    assert Client().get("/rounds/").status_code == 302  # to the admin's login
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("boss", is_staff=True))
    listed = staff.get("/rounds/").content.decode()
    assert f'href="/rounds/{row.pk}/"' in listed and "analysing" in listed


def test_the_profile_and_the_next_round_link_the_replays(live: Any) -> None:
    short = play_humans(make_table("HHHH"), random.Random(5))
    assert short.status == Table.Status.FINISHED
    seated = guest("g3", "Guest 3")
    profile = seated.get("/profile/").content.decode()
    assert f'href="/t/{short.public_id}/round/1/"' in profile
    table = make_table("HHHH", LONG)
    play_humans(table, random.Random(5), until_version=130)
    rows = list(RoundRecordRow.objects.filter(table=table).order_by("round_number"))
    assert len(rows) >= 2
    first = seated.get(f"/rounds/{rows[0].pk}/").content.decode()
    assert f'href="/rounds/{rows[1].pk}/" rel="next"' in first and 'rel="prev"' not in first
    second = seated.get(f"/rounds/{rows[1].pk}/").content.decode()
    assert f'href="/rounds/{rows[0].pk}/" rel="prev"' in second
