"""Open challenges and the cap of tables per bot (botapi/offers.py): a seat
offered to any bot accepting challenges reaches those bots' sockets, the
first to accept sits, every other answer is refused with its code and
changes nothing; a bot sits at no more than its ``max_tables`` live tables."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from botapi.models import BotAccount, SeatOffer
from game import external_bots, seating
from game.errors import SeatError, TooManyTables
from game.models import Seat, Table
from tests.support import schema_check
from tests.support.bot_protocol import SCHEMAS, bot_table, bot_token, connect_bot, frame_until
from tests.support.inline import InlineScheduler
from tests.support.sockets import close_sync_thread_connections  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def _set(name: str, **fields: Any) -> None:
    BotAccount.objects.filter(name=name).update(**fields)


async def _ready(token: str, sent: list[dict[str, Any]]) -> WebsocketCommunicator:
    comm = await connect_bot(token)
    await frame_until(comm, sent, "hello")
    await comm.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    await comm.send_json_to({"type": "ping"})  # frames are handled in order:
    await frame_until(comm, sent, "pong")  # the pong says the ready was
    return comm


async def _nothing_but_pong(comm: WebsocketCommunicator, sent: list[dict[str, Any]]) -> None:
    """Nothing reached ``comm`` since its last frame but the pong it asks for now."""
    await comm.send_json_to({"type": "ping"})
    before = len(sent)
    await frame_until(comm, sent, "pong")
    assert [f["type"] for f in sent[before:]] == ["pong"], sent[before:]


def _seats(table: Table) -> list[tuple[int, str, str]]:
    return [(s.position, s.kind, s.bot_name) for s in Seat.objects.filter(table=table)
            .order_by("position")]  # fmt: skip


# ----- the cap of tables ------------------------------------------------------------


def test_a_bot_at_its_cap_of_tables_is_refused_and_nothing_changes(live: InlineScheduler) -> None:
    bot_token("capped")
    _set("capped", max_tables=2)
    first = bot_table("XHHH", {0: "capped"}, start=False)
    bot_table("XHHH", {0: "capped"}, start=False)
    third = bot_table("HHHH", {}, start=False)
    seating.leave_seat(third, 1)
    before = _seats(third)
    with pytest.raises(TooManyTables) as refused:
        seating.add_bot(third, 1, "ext:capped")
    assert refused.value.code == "too_many_tables" and "2 tables" in refused.value.message
    assert _seats(third) == before
    seating.leave_seat(first, 2)
    seating.add_bot(first, 2, "ext:capped")  # a second seat at a table it holds: no new table
    Table.objects.filter(pk=first.pk).update(status=Table.Status.FINISHED)
    seating.add_bot(third, 1, "ext:capped")  # a finished table no longer counts
    assert (1, "bot", "ext:capped") in _seats(third)


def test_the_cap_is_the_owners_setting_checked_on_its_page(live: InlineScheduler) -> None:
    bot_token("owned")
    owner = User.objects.get(username="author")
    client = Client()
    client.force_login(owner)
    done = client.post("/bots/owned/settings/", {"accepts_challenges": "on", "max_tables": "3"})
    assert done.status_code == 302
    account = BotAccount.objects.get(name="owned")
    assert (account.accepts_challenges, account.max_tables) == (True, 3)
    for bad in ("0", "51", "x"):
        refused = client.post("/bots/owned/settings/", {"max_tables": bad})
        assert refused.status_code == 400
    account.refresh_from_db()
    assert (account.accepts_challenges, account.max_tables) == (True, 3)
    stranger = Client()
    stranger.force_login(User.objects.create_user("stranger"))
    assert stranger.post("/bots/owned/settings/", {"max_tables": "9"}).status_code == 404
    assert BotAccount.objects.get(name="owned").max_tables == 3
    assert "Accepts open challenges" in client.get("/bots/").content.decode()


# ----- open challenges --------------------------------------------------------------


async def test_an_offered_seat_goes_to_the_first_bot_that_accepts(live: InlineScheduler) -> None:
    tokens = {}
    for name in ("alpha", "beta", "gamma"):
        tokens[name] = await sync_to_async(bot_token)(name)
    await sync_to_async(_set)("alpha", accepts_challenges=True)
    await sync_to_async(_set)("beta", accepts_challenges=True)
    sent: dict[str, list[dict[str, Any]]] = {n: [] for n in tokens}
    comms = {n: await _ready(t, sent[n]) for n, t in tokens.items()}
    table = await sync_to_async(bot_table)("HHHH", {}, start=False)
    await sync_to_async(seating.leave_seat)(table, 3)
    await sync_to_async(seating.add_bot)(table, 3, external_bots.ANY_BOT)
    assert await sync_to_async(_seats)(table) == [(p, "human", "") for p in range(3)]
    offers = {n: await frame_until(comms[n], sent[n], "offer") for n in ("alpha", "beta")}
    assert offers["alpha"] == offers["beta"]
    offer = offers["alpha"]
    assert (offer["table"], offer["seat"]) == (table.public_id, 3)
    assert [p["position"] for p in offer["players"]] == [0, 1, 2]
    await _nothing_but_pong(comms["gamma"], sent["gamma"])  # it does not accept challenges

    await comms["alpha"].send_json_to({"type": "accept", "offer": offer["offer"]})
    seated = await frame_until(comms["alpha"], sent["alpha"], "seated")
    assert (seated["table"], seated["seats"]) == (table.public_id, [3])
    closed = await frame_until(comms["beta"], sent["beta"], "offer_closed")
    assert closed == {"type": "offer_closed", "offer": offer["offer"]}
    await _nothing_but_pong(comms["alpha"], sent["alpha"])  # the taker is not told it
    await _nothing_but_pong(comms["gamma"], sent["gamma"])  # nor one never offered it
    taken = await sync_to_async(_seats)(table)
    await comms["beta"].send_json_to({"type": "accept", "offer": offer["offer"]})
    error = await frame_until(comms["beta"], sent["beta"], "error")
    assert (error["code"], error["offer"]) == ("offer_gone", offer["offer"])
    await comms["gamma"].send_json_to({"type": "accept", "offer": offer["offer"]})
    assert (await frame_until(comms["gamma"], sent["gamma"], "error"))["code"] == "offer_gone"
    assert await sync_to_async(_seats)(table) == taken
    assert taken[3] == (3, "bot", "ext:alpha")
    for comm in comms.values():
        await comm.disconnect()
    for frames in sent.values():
        assert all(schema_check.check_frame(f, SCHEMAS) == [] for f in frames)


async def test_a_declined_offer_is_not_offered_again_and_stays_open(live: InlineScheduler) -> None:
    tokens = {n: await sync_to_async(bot_token)(n) for n in ("alpha", "beta")}
    for name in tokens:
        await sync_to_async(_set)(name, accepts_challenges=True)
    table = await sync_to_async(bot_table)("HHHH", {}, start=False)
    await sync_to_async(seating.leave_seat)(table, 0)
    await sync_to_async(seating.add_bot)(table, 0, external_bots.ANY_BOT)
    sent: list[dict[str, Any]] = []
    comm = await connect_bot(tokens["alpha"])  # connecting after the offer: told on ready
    await frame_until(comm, sent, "hello")
    await comm.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    offer = await frame_until(comm, sent, "offer")
    await comm.send_json_to({"type": "decline", "offer": offer["offer"]})
    await _nothing_but_pong(comm, sent)
    await comm.send_json_to({"type": "decline", "offer": offer["offer"]})
    assert (await frame_until(comm, sent, "error"))["code"] == "offer_gone"
    await comm.send_json_to({"type": "accept", "offer": offer["offer"]})
    assert (await frame_until(comm, sent, "error"))["code"] == "offer_gone"
    await comm.disconnect()
    again: list[dict[str, Any]] = []
    comm = await _ready(tokens["alpha"], again)
    assert "offer" not in [f["type"] for f in again]
    await comm.disconnect()
    assert await sync_to_async(_seats)(table) == [(p, "human", "") for p in range(1, 4)]
    other: list[dict[str, Any]] = []
    beta = await connect_bot(tokens["beta"])
    await frame_until(beta, other, "hello")
    await beta.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    offered = await frame_until(beta, other, "offer")
    await beta.send_json_to({"type": "accept", "offer": offered["offer"]})
    assert (await frame_until(beta, other, "seated"))["seats"] == [0]
    await beta.disconnect()


async def test_bad_answers_are_refused_and_change_nothing(live: InlineScheduler) -> None:
    token = await sync_to_async(bot_token)("alpha")
    await sync_to_async(_set)("alpha", accepts_challenges=True)
    table = await sync_to_async(bot_table)("HHHH", {}, start=False)
    await sync_to_async(seating.leave_seat)(table, 2)
    await sync_to_async(seating.add_bot)(table, 2, external_bots.ANY_BOT)
    sent: list[dict[str, Any]] = []
    comm = await connect_bot(token)
    await frame_until(comm, sent, "hello")
    await comm.send_json_to({"type": "accept", "offer": 1})  # before ready
    assert (await frame_until(comm, sent, "error"))["code"] == "not_ready"
    await comm.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    offer = await frame_until(comm, sent, "offer")
    bads = [{"type": "accept", "offer": "1"}, {"type": "accept"},
            {"type": "decline", "offer": -1}, {"type": "accept", "offer": 1, "seat": 2}]
    for bad in bads:
        await comm.send_json_to(bad)
        assert (await frame_until(comm, sent, "error"))["code"] == "bad_frame"
    await comm.send_json_to({"type": "accept", "offer": offer["offer"] + 1000})
    assert (await frame_until(comm, sent, "error"))["code"] == "offer_gone"
    assert await sync_to_async(_seats)(table) == [(p, "human", "") for p in (0, 1, 3)]
    # The seat taken by a person meanwhile: the offer is gone.
    await sync_to_async(seating.take_seat)(table, 2, guest_id="late", guest_name="Late")
    await comm.send_json_to({"type": "accept", "offer": offer["offer"]})
    assert (await frame_until(comm, sent, "error"))["code"] == "offer_gone"
    assert (await sync_to_async(_seats)(table))[2] == (2, "human", "")
    await comm.disconnect()


async def test_a_bot_at_its_cap_is_not_offered_and_may_not_accept(live: InlineScheduler) -> None:
    token = await sync_to_async(bot_token)("alpha")
    await sync_to_async(_set)("alpha", accepts_challenges=True, max_tables=1)
    await sync_to_async(bot_table)("XHHH", {0: "alpha"}, start=False)  # its one table
    table = await sync_to_async(bot_table)("HHHH", {}, start=False)
    await sync_to_async(seating.leave_seat)(table, 1)
    await sync_to_async(seating.add_bot)(table, 1, external_bots.ANY_BOT)
    sent: list[dict[str, Any]] = []
    comm = await _ready(token, sent)
    assert "offer" not in [f["type"] for f in sent]
    offer = await sync_to_async(SeatOffer.objects.get)(table=table)
    await comm.send_json_to({"type": "accept", "offer": offer.pk})
    assert (await frame_until(comm, sent, "error"))["code"] == "too_many_tables"
    assert (await sync_to_async(_seats)(table))[1:] == [(2, "human", ""), (3, "human", "")]
    await comm.disconnect()


def test_a_seat_is_offered_only_where_it_is_free_and_the_table_open(live: InlineScheduler) -> None:
    table = bot_table("HHHH", {}, start=False)
    with pytest.raises(SeatError):
        seating.add_bot(table, 0, external_bots.ANY_BOT)  # taken
    playing = bot_table("BBBB", {}, start=True)
    with pytest.raises(SeatError):
        seating.add_bot(playing, 0, external_bots.ANY_BOT)
    assert not SeatOffer.objects.exists()


def test_a_host_offers_a_seat_from_the_table_form_and_the_seat_menu(
    live: InlineScheduler, client: Client
) -> None:
    from tests.support.lobby_client import as_guest, table_form_data

    bot_token("alpha")
    as_guest(client, "Host")
    page = client.get("/tables/new/").content.decode()
    assert 'value="ext:*"' in page and "Any bot accepting challenges" in page
    made = client.post("/tables/new/", table_form_data(seat_1="ext:*", seat_2="me"))
    assert made.status_code == 302
    table = Table.objects.get()
    assert [(s.position, s.kind) for s in table.seats.all()] == [(2, "human")]
    assert list(SeatOffer.objects.values_list("table_id", "position")) == [(table.pk, 1)]
    # The table page's seat menu offers another seat the same way.
    assert '"ext:*"' in client.get(f"/t/{table.public_id}/").content.decode()
    done = client.post(f"/t/{table.public_id}/seat/", {"op": "bot", "position": "3",
                                                       "bot": "ext:*"})  # fmt: skip
    assert done.status_code == 200
    assert sorted(SeatOffer.objects.values_list("position", flat=True)) == [1, 3]
    assert [(s.position, s.kind) for s in table.seats.all()] == [(2, "human")]
    # The table page shows the open seats that are offered; a seat taken is not.
    assert done.json()["offered"] == [1, 3]
    seating.add_bot(table, 1, "BIS+SRP")
    assert client.get(f"/t/{table.public_id}/seating.json").json()["offered"] == [3]


def test_a_tournament_asking_more_tables_than_the_bots_cap_is_refused(
    live: InlineScheduler,
) -> None:
    from django.core.management import CommandError, call_command

    bot_token("capped")
    _set("capped", max_tables=3)
    games = ["--ew", "BIS+SRP", "--games", "2", "--no-progress", "--bot-tables", "4"]
    with pytest.raises(CommandError, match="no more than 3 tables at once"):
        call_command("tournament", "--ns", "ext:capped", *games)
    assert not Table.objects.exists()


async def test_an_offer_filled_by_the_host_is_closed_for_the_bots_offered_it(
    live: InlineScheduler,
) -> None:
    tokens = {n: await sync_to_async(bot_token)(n) for n in ("alpha", "beta")}
    for name in tokens:
        await sync_to_async(_set)(name, accepts_challenges=True)
    sent: dict[str, list[dict[str, Any]]] = {n: [] for n in tokens}
    comms = {n: await _ready(t, sent[n]) for n, t in tokens.items()}
    table = await sync_to_async(bot_table)("HHHH", {}, start=False)
    await sync_to_async(seating.leave_seat)(table, 2)
    await sync_to_async(seating.add_bot)(table, 2, external_bots.ANY_BOT)
    offer = {n: await frame_until(comms[n], sent[n], "offer") for n in tokens}
    await comms["beta"].send_json_to({"type": "decline", "offer": offer["beta"]["offer"]})
    await _nothing_but_pong(comms["beta"], sent["beta"])
    await sync_to_async(seating.add_bot)(table, 2, "BIS+SRP")  # the host fills it
    closed = await frame_until(comms["alpha"], sent["alpha"], "offer_closed")
    assert closed["offer"] == offer["alpha"]["offer"]
    await _nothing_but_pong(comms["beta"], sent["beta"])  # it had declined: nothing to close
    await comms["alpha"].send_json_to({"type": "accept", "offer": closed["offer"]})
    assert (await frame_until(comms["alpha"], sent["alpha"], "error"))["code"] == "offer_gone"
    assert (2, "bot", "BIS+SRP") in await sync_to_async(_seats)(table)
    for comm in comms.values():
        await comm.disconnect()
    for frames in sent.values():
        assert all(schema_check.check_frame(f, SCHEMAS) == [] for f in frames)
