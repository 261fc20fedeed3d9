"""Every bidder of the registry, and so of the league, can be seated from the
table form (lobby/forms.py)."""

from __future__ import annotations

import pytest
from django.test import Client

from bots.registry import BIDDERS
from game.models import Table
from lab.tournaments.league import PLAYER, default_bidders
from tests.support.lobby_client import as_guest, table_form_data

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_seat_menu_offers_every_registered_bidder_with_srp(client: Client) -> None:
    page = client.get("/tables/new/").content.decode()
    menu = page[page.index('name="seat_1"') :]
    menu = menu[: menu.index("</select>")]
    for bidder in BIDDERS:
        assert f'value="{bidder}+{PLAYER}"' in menu, bidder
    assert set(default_bidders()) <= set(BIDDERS)


def test_each_league_bidder_takes_a_seat_from_the_form(client: Client, machine_speed: None) -> None:
    # One host makes a table for each of the 17 bidders at once: no rate limit.
    as_guest(client, "Lee")
    for bidder in default_bidders():
        data = table_form_data(seat_0="me", seat_1=f"{bidder}+{PLAYER}", seat_2="open")
        response = client.post("/tables/new/", data)
        assert response.status_code == 302, bidder
        table = Table.objects.order_by("-pk").first()
        assert table is not None
        assert table.seats.get(position=1).bot_name == f"{bidder}+{PLAYER}"
    assert Table.objects.count() == len(default_bidders())
