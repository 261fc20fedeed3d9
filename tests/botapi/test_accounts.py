"""Bot accounts: registered by a signed-in person, a token shown once and kept
hashed, rotated and revoked; seated by a host as ``ext:<name>``, and never a person."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from botapi import accounts, tokens
from botapi.models import BotAccount
from game import seating
from game.errors import SeatError
from game.models import Seat, Table
from game.ratings import compute
from tests.support.lobby_client import as_guest, seat_op, table_form_data

pytestmark = pytest.mark.django_db
TOKEN = re.compile(r'<code id="bot-token">(sbt_[A-Za-z0-9_-]+)</code>')


def _signed_in(client: Client, name: str = "ada") -> User:
    user = User.objects.create_user(name, password="a long enough password 1")
    client.force_login(user)
    return user


def _register(client: Client, name: str = "deepspade") -> str:
    data = {"name": name, "description": "MCTS in Rust", "contact": "ada@example.org"}
    response = client.post("/bots/", data)
    assert response.status_code == 200, response.content.decode()[:1000]
    found = TOKEN.search(response.content.decode())
    assert found is not None
    return found.group(1)


def test_a_person_registers_a_bot_and_sees_its_token_once(client: Client) -> None:
    owner = _signed_in(client)
    token = _register(client)
    account = BotAccount.objects.get()
    assert account.owner == owner and account.seat_name == "ext:deepspade"
    assert token not in str(BotAccount.objects.values().get())  # only its hash is kept
    assert account.token_hash == tokens.hash_of(token) and account.token_hint == token[:8]
    assert accounts.authenticate(token) == account
    listing = client.get("/bots/").content.decode()
    assert "ext:deepspade" in listing and token not in listing and token[:8] in listing
    assert not User.objects.filter(username__contains="deepspade").exists()  # not a person


def test_rotate_and_revoke_stop_the_old_token_at_once(client: Client) -> None:
    _signed_in(client)
    first = _register(client)
    second = TOKEN.search(client.post("/bots/deepspade/rotate/").content.decode()).group(1)
    assert first != second
    assert accounts.authenticate(first) is None
    assert accounts.authenticate(second) is not None
    assert client.post("/bots/deepspade/revoke/").status_code == 302
    assert accounts.authenticate(second) is None
    assert "revoked" in client.get("/bots/").content.decode()
    with pytest.raises(SeatError):  # a revoked bot cannot be seated
        seating.add_bot(seating.create_table(), 0, "ext:deepspade")


def test_only_the_owner_signed_in_with_csrf_changes_a_bot(client: Client) -> None:
    _signed_in(client)
    token = _register(client)
    stranger = Client()
    assert stranger.get("/bots/").status_code == 302  # to the login page
    assert stranger.post("/bots/deepspade/revoke/").status_code == 302
    _signed_in(stranger, "eve")
    assert stranger.post("/bots/deepspade/revoke/").status_code == 404
    assert stranger.post("/bots/deepspade/rotate/").status_code == 404
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(User.objects.get(username="ada"))
    assert strict.post("/bots/deepspade/revoke/").status_code == 403
    assert client.get("/bots/deepspade/revoke/").status_code == 405
    assert accounts.authenticate(token) is not None  # nothing of that changed it


@pytest.mark.parametrize(
    ("name", "why"),
    [("deepspade", "registered already"), ("Deep Spade", "a-z"), ("x", "a-z"), ("", "required")],
)
def test_a_bad_or_taken_name_is_refused_and_creates_nothing(
    client: Client, name: str, why: str
) -> None:
    _signed_in(client)
    _register(client)
    data = {"name": name, "description": "", "contact": "me"}
    response = client.post("/bots/", data)
    assert response.status_code == 400 and why in response.content.decode()
    assert BotAccount.objects.count() == 1


def test_tokens_are_read_only_from_a_bearer_header() -> None:
    token = tokens.new_token()
    assert tokens.from_header(f"Bearer {token}") == token
    assert tokens.from_header(f"bearer  {token} ") == token
    for header in ("", token, f"Basic {token}", "Bearer abc", f"Bearer {token}{'x' * 100}"):
        assert tokens.from_header(header) is None
    assert tokens.matches(token, tokens.hash_of(token))
    assert not tokens.matches(token, "") and not tokens.matches(token + "x", tokens.hash_of(token))


def test_a_host_seats_a_registered_bot_from_the_table_form(client: Client) -> None:
    owner = Client()
    _signed_in(owner)
    _register(owner)
    as_guest(client, "Host")
    form = client.get("/tables/new/").content.decode()
    assert 'value="ext:deepspade"' in form
    data = table_form_data(seat_0="ext:deepspade", seat_1="RB+WRP", seat_2="me", seat_3="open")
    assert client.post("/tables/new/", data).status_code == 302
    table = Table.objects.get()
    seat = table.seats.get(position=0)
    assert (seat.kind, seat.bot_name) == (Seat.Kind.BOT, "ext:deepspade")
    shown = client.get(f"/t/{table.public_id}/seating.json").json()["seats"][0]
    assert shown["state"] == "bot" and shown["bot"] == "ext:deepspade"
    assert seat_op(client, table, op="bot", position=3, bot="ext:nobody").status_code == 400
    assert seat_op(client, table, op="bot", position=3, bot="ext:deepspade").status_code == 200


def test_an_external_bot_is_rated_as_a_bot_kind_never_as_a_person(client: Client) -> None:
    _signed_in(client)
    _register(client)
    table = seating.create_table()
    seating.add_bot(table, 0, "ext:deepspade")
    entrant = compute.entrant_of(table.seats.get(position=0))
    assert entrant is not None and (entrant.key, entrant.kind) == ("b:ext:deepspade", "bot")


def test_a_signed_in_persons_profile_leads_to_their_bots(client: Client) -> None:
    assert "/bots/" not in client.get("/profile/").content.decode()
    _signed_in(client)
    assert 'href="/bots/"' in client.get("/profile/").content.decode()
