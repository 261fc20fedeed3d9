"""The lobby over HTTP: guests and accounts, open tables, new tables, seats, invites,
rematches and the profile page."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client

from bots.registry import DEFAULT_BOT, bot_groups, bot_names
from game import master, seating
from game.models import Seat, Table
from game.moves import matches
from lobby.forms import rule_field_names
from lobby.models import TableListing
from tests.support.helpers import SHORT_RULES, make_table, play_humans
from tests.support.inline import InlineScheduler
from tests.support.lobby_client import as_guest, seat_op, table_form_data

pytestmark = pytest.mark.django_db(transaction=True)


def as_session_guest(client: Client, guest_id: str, name: str) -> None:
    session = client.session
    session["guest_id"] = guest_id
    session["guest_name"] = name
    session.save()


# ----- players ----------------------------------------------------------------------


def test_a_guest_picks_a_name_and_the_lobby_greets_them(client: Client) -> None:
    as_guest(client, "  Ann   Lee ")
    assert client.session["guest_name"] == "Ann Lee"
    page = client.get("/").content.decode()
    assert "Playing as <strong>Ann Lee</strong>" in page


def test_an_empty_guest_name_is_refused(client: Client) -> None:
    client.post("/guest/", {"name": "   "})
    assert "guest_name" not in client.session


def test_sign_up_log_out_and_log_in(client: Client) -> None:
    response = client.post(
        "/accounts/signup/",
        {"username": "bea", "password1": "a-long-Secret-42", "password2": "a-long-Secret-42"},
    )
    assert response.status_code == 302
    assert User.objects.filter(username="bea").exists()
    assert "bea" in client.get("/").content.decode()
    client.post("/accounts/logout/")
    assert "Log in" in client.get("/").content.decode()
    response = client.post("/accounts/login/", {"username": "bea", "password": "a-long-Secret-42"})
    assert response.status_code == 302
    assert client.get("/profile/").context["player"].name == "bea"


def test_sign_up_shows_form_errors(client: Client) -> None:
    response = client.post(
        "/accounts/signup/", {"username": "bea", "password1": "x", "password2": "y"}
    )
    assert response.status_code == 200
    assert "didn’t match" in response.content.decode() or "match" in response.content.decode()


# ----- Play now -----------------------------------------------------------------------


def test_play_now_seats_you_with_three_default_bots(client: Client, live: InlineScheduler) -> None:
    response = client.post("/play/", {"name": "Cy"})
    assert response.status_code == 302
    table = Table.objects.get()
    assert response["Location"] == f"/t/{table.public_id}/"
    assert table.status == Table.Status.PLAYING
    seats = {s.position: s for s in table.seats.all()}
    assert seats[2].kind == Seat.Kind.HUMAN and seats[2].guest_name == "Cy"
    assert all(seats[p].bot_name == DEFAULT_BOT for p in (0, 1, 3))
    # Play now tables are not offered to strangers in the lobby.
    assert client.get("/tables.json").json()["tables"] == []
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert page.context["seat"] == 2


def test_your_tables_lists_a_running_game_and_play_now_offers_it_first(
    client: Client, live: InlineScheduler
) -> None:
    assert b"Your tables" not in client.get("/").content
    first = client.post("/play/", {"name": "Cy"})["Location"]
    table = Table.objects.get()
    page = client.get("/")
    [game] = page.context["running"]
    assert game["table"] == table and game["seat"] == "South"
    assert (game["ours"], game["theirs"]) == (0, 0) and game["round"] == 1
    # The bots have moved (inline, no delay) up to South's first bid.
    assert matches.load_match(table).round.to_act == 2
    assert game["turn"] == "your turn" and game["mine"]
    html = page.content.decode()
    assert "Your tables" in html and f'href="{first}"' in html
    assert "Return to your game" in html and "Start a new game" in html
    assert ">Play now<" not in html
    # Starting a new one is still one click away; both are listed, newest move first.
    client.post("/play/")
    assert len(client.get("/").context["running"]) == 2
    # A finished match leaves the list.
    Table.objects.filter(pk=table.pk).update(status=Table.Status.FINISHED)
    assert [g["table"].pk for g in client.get("/").context["running"]] != [table.pk]
    assert all(g["table"].pk != table.pk for g in client.get("/").context["running"])


def test_play_now_without_a_name_asks_for_one(client: Client) -> None:
    response = client.post("/play/", {})
    assert response.status_code == 302
    assert not Table.objects.exists()


# ----- new tables ---------------------------------------------------------------------


def test_the_table_form_has_every_rule_option(client: Client) -> None:
    page = client.get("/tables/new/").content.decode()
    for name in rule_field_names():
        assert f'name="{name}"' in page
    assert DEFAULT_BOT in page


def test_the_seat_menu_groups_every_bot_by_how_it_plays(client: Client) -> None:
    page = client.get("/tables/new/").content.decode()
    seat_menu = page[page.index('name="seat_0"') :]
    seat_menu = seat_menu[: seat_menu.index("</select>")]
    levels, *groups = seat_menu.split("<optgroup")[1:]
    assert 'label="Bot levels"' in levels and 'value="level:Beginner"' in levels
    assert len(groups) == len(bot_groups())
    # The default bot's group and the default bot come first.
    assert "Strong rule-based play (SRP)" in groups[0]
    assert groups[0].index(f'value="{DEFAULT_BOT}"') < groups[0].index('value="RB+SRP"')
    assert "search every trick (UCT13)" in seat_menu
    for name in bot_names():
        assert seat_menu.count(f'value="{name}"') == 1
    # A bot that is not in the registry is refused, and nothing is made.
    as_guest(client)
    response = client.post("/tables/new/", table_form_data(seat_1="BIS+UCT99"))
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not Table.objects.exists()


def test_bad_rules_show_the_engines_reason_and_create_nothing(client: Client) -> None:
    as_guest(client)
    data = table_form_data(winning_goal=100, losing_goal=200)
    response = client.post("/tables/new/", data)
    assert response.status_code == 200
    assert "losing goal must be below the winning goal" in response.content.decode()
    response = client.post("/tables/new/", table_form_data(winning_goal="lots"))
    assert "Enter a whole number" in response.content.decode()
    response = client.post("/tables/new/", table_form_data(seat_0="me", seat_2="me"))
    assert "only sit in one seat" in response.content.decode()
    assert not Table.objects.exists()


def test_create_a_table_with_bots_an_open_seat_and_an_invite(client: Client) -> None:
    as_guest(client, "Dee")
    data = table_form_data(
        seat_0="invite", seat_1="RB+WRP", seat_2="me", seat_3="open", winning_goal=250
    )
    response = client.post("/tables/new/", data)
    assert response.status_code == 302
    table = Table.objects.get()
    assert table.rules["winning_goal"] == 250
    assert table.status == Table.Status.OPEN
    assert TableListing.objects.get(table=table).reserved == [0]
    seats = {s.position: s for s in table.seats.all()}
    assert seats[1].bot_name == "RB+WRP" and seats[2].guest_name == "Dee"
    listed = client.get("/tables.json").json()["tables"]
    assert [t["id"] for t in listed] == [table.public_id]
    assert [s["state"] for s in listed[0]["seats"]] == ["reserved", "bot", "human", "open"]
    assert listed[0]["host"] == "Dee"


def test_the_lobby_lists_only_public_open_tables(client: Client) -> None:
    as_guest(client)
    client.post("/tables/new/", table_form_data(private="on"))
    client.post("/tables/new/", table_form_data())
    tables = client.get("/tables.json").json()["tables"]
    assert len(tables) == 1
    assert len(seating.list_open_tables()) == 2


# ----- seats, invites, the host ---------------------------------------------------------


def new_table(client: Client, **overrides: Any) -> Table:
    response = client.post("/tables/new/", table_form_data(**overrides))
    assert response.status_code == 302, response.content.decode()[:2000]
    return Table.objects.order_by("-created_at").first()


def test_private_tables_need_the_invite_link(client: Client) -> None:
    host = Client()
    as_guest(host, "Host")
    table = new_table(host, private="on", seat_0="invite")
    as_guest(client, "Friend")
    assert client.get(f"/t/{table.public_id}/").status_code == 403
    assert seat_op(client, table, op="sit", position=0).status_code == 403
    assert client.get("/join/not-the-token/").status_code == 404
    response = client.get(f"/join/{table.invite_token}/")
    assert response["Location"] == f"/t/{table.public_id}/"
    page = client.get(f"/t/{table.public_id}/")
    assert page.status_code == 200
    # Only the host and seated players are shown the link itself.
    assert table.invite_token not in page.content.decode()
    assert seat_op(client, table, op="sit", position=0).json()["my_seat"] == 0
    assert TableListing.objects.get(table=table).reserved == []
    assert table.invite_token in host.get(f"/t/{table.public_id}/").content.decode()


def test_a_reserved_seat_is_held_for_invitees(client: Client) -> None:
    host = Client()
    as_guest(host, "Host")
    table = new_table(host, seat_0="invite")
    as_guest(client, "Stranger")
    response = seat_op(client, table, op="sit", position=0)
    assert response.status_code == 400
    assert "invite link" in response.json()["error"]
    assert seat_op(client, table, op="sit", position=1).json()["my_seat"] == 1


def test_take_change_and_leave_a_seat(client: Client) -> None:
    host = Client()
    as_guest(host, "Host")
    table = new_table(host)
    assert seat_op(client, table, op="sit", position=0).status_code == 400  # no name yet
    as_guest(client, "Eve")
    assert seat_op(client, table, op="sit", position=0).json()["my_seat"] == 0
    assert seat_op(client, table, op="sit", position=2).status_code == 400  # the host's
    assert seat_op(client, table, op="sit", position=3).json()["my_seat"] == 3
    assert not table.seats.filter(position=0).exists()
    assert seat_op(client, table, op="leave").json()["my_seat"] is None
    assert seat_op(client, table, op="leave").status_code == 400


def test_only_the_host_adds_and_removes_bots_and_starts(
    client: Client, live: InlineScheduler
) -> None:
    host = Client()
    as_guest(host, "Host")
    table = new_table(host)
    as_guest(client, "Guest")
    assert seat_op(client, table, op="bot", position=0).status_code == 400
    assert seat_op(client, table, op="start").status_code == 400
    data = seat_op(host, table, op="bot", position=0, bot="MS+WRP").json()
    assert data["seats"][0] == {"position": 0, "state": "bot", "name": "Nora", "bot": "MS+WRP"}
    assert seat_op(host, table, op="bot", position=0, bot="nonsense").status_code == 400
    assert seat_op(host, table, op="remove", position=0).json()["seats"][0]["state"] == "open"
    assert seat_op(host, table, op="remove", position=0).status_code == 400
    assert seat_op(host, table, op="reserve", position=1).json()["seats"][1]["state"] == "reserved"
    assert seat_op(host, table, op="open", position=1).json()["seats"][1]["state"] == "open"
    assert seat_op(client, table, op="sit", position=1).status_code == 200
    assert seat_op(host, table, op="bot", position=1).status_code == 400  # a person sits there
    assert seat_op(host, table, op="start").status_code == 400  # two seats are empty
    seat_op(host, table, op="bot", position=0)
    seat_op(host, table, op="bot", position=3)
    assert seat_op(host, table, op="start").json()["status"] == "playing"
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    # Leaving once the match is on hands the seat to a stand-in bot
    # (tests/game/test_away_players.py).
    assert seat_op(client, table, op="leave").status_code == 200
    assert table.seats.get(position=1).kind == Seat.Kind.BOT


def test_seating_json_says_who_may_do_what(client: Client) -> None:
    host = Client()
    as_guest(host, "Host")
    table = new_table(host, seat_1="invite")
    data = host.get(f"/t/{table.public_id}/seating.json").json()
    assert data["is_host"] and data["my_seat"] == 2 and data["may_take_reserved"]
    data = client.get(f"/t/{table.public_id}/seating.json").json()
    assert not data["is_host"] and data["my_seat"] is None and not data["known"]


def test_an_account_hosts_a_table(client: Client) -> None:
    user = User.objects.create_user("fay", password="pw-Secret-123")
    client.force_login(user)
    table = new_table(client)
    assert table.host == user
    assert table.seats.get(position=2).user == user
    assert client.get(f"/t/{table.public_id}/").context["is_host"]


# ----- the end of a match: rematch and profile -----------------------------------------


def finished_table(client: Client) -> Table:
    table = make_table("BBHB", SHORT_RULES)
    as_session_guest(client, "g2", "Guest 2")
    return play_humans(table, random.Random(7))


def test_rematch_makes_one_new_table_with_the_same_seats_and_rules(
    client: Client, live: InlineScheduler
) -> None:
    table = make_table("BBHB", SHORT_RULES)
    as_session_guest(client, "g2", "Guest 2")
    response = client.post(f"/t/{table.public_id}/rematch/")
    assert response["Location"] == f"/t/{table.public_id}/"  # not over yet
    table = play_humans(table, random.Random(7))
    assert table.status == Table.Status.FINISHED
    stranger = Client()
    as_guest(stranger, "Nosy")
    stranger.post(f"/t/{table.public_id}/rematch/")
    assert Table.objects.count() == 1  # only players may ask
    first = client.post(f"/t/{table.public_id}/rematch/")
    again = client.post(f"/t/{table.public_id}/rematch/")
    assert first["Location"] == again["Location"] != f"/t/{table.public_id}/"
    new = Table.objects.exclude(pk=table.pk).get()
    assert new.rules == table.rules and new.status == Table.Status.PLAYING
    old_seats = [(s.position, s.kind, s.bot_name, s.guest_id) for s in table.seats.all()]
    new_seats = [(s.position, s.kind, s.bot_name, s.guest_id) for s in new.seats.all()]
    assert old_seats == new_seats
    assert client.get(f"/t/{table.public_id}/seating.json").json()["rematch"] == first["Location"]


def test_the_rematch_is_announced_after_its_commit(
    client: Client, live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = finished_table(client)
    told: list[tuple[int, bool]] = []

    def changed(pk: int) -> None:
        told.append((pk, transaction.get_connection().in_atomic_block))

    monkeypatch.setattr(master.get().announcer, "changed", changed)
    client.post(f"/t/{table.public_id}/rematch/")
    assert (table.pk, False) in told  # the old table hears of its rematch
    assert not any(inside for _, inside in told)  # the new one's seats too, all after the commit


def test_profile_lists_games_and_results(client: Client, live: InlineScheduler) -> None:
    table = finished_table(client)
    result = table.result
    page = client.get("/profile/")
    games = page.context["games"]
    assert len(games) == 1
    outcome = "Won" if result.winner == 0 else "Lost"
    assert games[0]["outcome"] == outcome
    assert games[0]["ours"] == result.score_ns
    assert page.context["wins"] + page.context["losses"] == 1
    assert table.public_id in page.content.decode()


def test_profile_without_a_player_explains_itself(client: Client) -> None:
    page = client.get("/profile/").content.decode()
    assert "to see your games here" in page


def test_table_page_for_a_spectator_and_an_unknown_table(client: Client) -> None:
    table = make_table("BBBB", SHORT_RULES, start=False)
    page = client.get(f"/t/{table.public_id}/")
    assert page.status_code == 200
    assert page.context["seat"] is None
    assert table.invite_token not in page.content.decode()
    assert client.get("/t/nope/").status_code == 404
