"""The staff dashboard: who may see it, the filter form, the figures, the export downloads."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from game.models import RoundRecordRow, Table
from game.research import exports
from game.research.round_columns import rules_key
from game.research.storage import store_match
from tests.support import analytics_fixtures

pytestmark = pytest.mark.django_db

URL = "/dashboard/"


@pytest.fixture
def tables() -> dict[str, Table]:
    return analytics_fixtures.build()


@pytest.fixture
def staff(client: Client) -> Client:
    user = get_user_model().objects.create_user("boss", password="pw-boss-123", is_staff=True)
    client.force_login(user)
    return client


@pytest.mark.parametrize("path", [URL, URL + "export.csv", URL + "export.jsonl"])
def test_anonymous_visitors_are_sent_to_log_in(client: Client, path: str) -> None:
    response = client.get(path + "?makeup=HB")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    assert "makeup%3DHB" in response["Location"]


@pytest.mark.parametrize("path", [URL, URL + "export.csv", URL + "export.jsonl"])
def test_players_who_are_not_staff_get_403(client: Client, path: str) -> None:
    user = get_user_model().objects.create_user("player", password="pw-player-123")
    client.force_login(user)
    assert client.get(path).status_code == 403


def test_inactive_staff_are_refused(client: Client) -> None:
    user = get_user_model().objects.create_user("gone", password="pw", is_staff=True)
    user.is_active = False
    user.save()
    client.force_login(user)
    assert client.get(URL).status_code in (302, 403)


def test_dashboard_shows_every_figure_with_its_sample_size(
    staff: Client, tables: dict[str, Table]
) -> None:
    response = staff.get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<strong>7</strong> rounds, <strong>3</strong> finished matches" in html
    for anchor in ("win-rates", "nil-positions", "figure-4", "figure-5", "figure-2",
                   "round-type-win-rates", "bidding-accuracy", "nil-bids"):  # fmt: skip
        assert f'id="{anchor}"' in html
    assert "<em>n</em> = 3 matches" in html
    assert "mean 10.00" in html  # Figure 5
    assert "n = 2 no-nil rounds" in html  # Figure 4
    assert "nil n = 7" in html  # Figure 2
    assert "88.0 <small>(2)</small>" in html  # double nil, HH
    assert "50.0% <small>(1/2)</small>" in html  # its nil success
    assert "vendor/chartjs/chart.umd.min.js" in html
    data = response.context["charts"]
    assert data["bid_sums"]["rounds"] == 7
    json.dumps(data)  # the charts' data is JSON


def test_filters_apply(staff: Client, tables: dict[str, Table]) -> None:
    html = staff.get(URL, {"makeup": "HH"}).content.decode()
    assert "<strong>2</strong> rounds, <strong>1</strong> finished matches" in html
    key = rules_key(analytics_fixtures.RULES_B)
    html = staff.get(URL, {"rules": key}).content.decode()
    assert "<strong>2</strong> rounds" in html
    html = staff.get(URL, {"bot": "RB+SRP", "date_to": "2026-01-15"}).content.decode()
    assert "<strong>5</strong> rounds, <strong>1</strong> finished matches" in html
    assert 'value="RB+SRP" selected' in html


def test_bad_filters_say_why_and_show_nothing(staff: Client, tables: dict[str, Table]) -> None:
    response = staff.get(URL, {"date_from": "2026-03-01", "date_to": "2026-01-01"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "the start date is after the end date" in html
    assert response.context["data"] is None
    response = staff.get(URL, {"makeup": "XX"})
    assert "Select a valid choice" in response.content.decode()
    assert staff.get(URL + "export.csv", {"date_from": "nope"}).status_code == 400
    for bad in ({"bot": "Nobody+Nothing"}, {"against": "XX"}, {"stand_ins": "maybe"},
                {"rules": "0123456789ab"}):  # fmt: skip
        response = staff.get(URL, bad)
        if "stand_ins" in bad:  # a checkbox: any value is on, nothing to refuse
            assert response.context["data"] is not None
            continue
        assert response.context["data"] is None, bad
        assert response.status_code == 400, bad
        assert "Select a valid choice" in response.content.decode()
        assert staff.get(URL + "export.jsonl", bad).status_code == 400
    response = staff.get(URL, {"bot": "RB+SRP", "makeup": "HH"})
    assert "a human+human partnership has no bot" in response.content.decode()
    assert response.context["data"] is None


def test_exports_download_with_the_filters(staff: Client) -> None:
    from tests.support.helpers import random_match

    a = store_match(random_match("dash-1"), ["RB+SRP", "MS+SRP", "RB+SRP", "MS+SRP"])
    store_match(random_match("dash-2"), ["BIS0+SRP"] * 4)
    n = RoundRecordRow.objects.filter(table=a).count()
    response = staff.get(URL + "export.csv", {"bot": "MS+SRP"})
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    text = b"".join(response.streaming_content).decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == exports.CSV_COLUMNS
    assert len(rows) == 1 + n
    response = staff.get(URL + "export.jsonl", {"makeup": "BB"})
    assert response["Content-Type"] == "application/x-ndjson"
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert len(lines) == RoundRecordRow.objects.count() > n


def test_admin_index_links_to_the_dashboard(staff: Client) -> None:
    html = staff.get("/admin/").content.decode()
    assert 'href="/dashboard/"' in html
