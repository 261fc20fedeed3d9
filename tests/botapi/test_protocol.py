"""The bot protocol end to end on the site's ASGI app: a bot plays whole matches,
sees nothing hidden, and every refusal changes nothing."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from botapi import accounts, reads
from game import master, seating
from game.engine import parse_card
from game.engine.cards import cards_of
from game.models import Action, RoundRecordRow, Seat, Table
from tests.support import schema_check
from tests.support.bot_protocol import (
    SCHEMAS,
    TIMEOUT,
    bot_table,
    bot_token,
    connect_bot,
    frame_until,
    next_frame,
    play_session,
    reference_client,
)
from tests.support.inline import InlineScheduler
from tests.support.sockets import close_sync_thread_connections  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)
CARD = re.compile(r"^[2-9TJQKA][CDHS]$")


def _hidden_cards_seen(sent: list[dict[str, Any]], table: Table) -> list[str]:
    """Cards of another seat shown in a decision before they were played
    (checked against the table's round records: the deal and the tricks)."""
    records = {r.round_number: r.record for r in RoundRecordRow.objects.filter(table=table)}
    actions = list(Action.objects.filter(table=table).order_by("version"))
    leaks = []
    for frame in sent:
        if frame["type"] != "decision" or frame["table"] != table.public_id:
            continue
        view, seat = frame["view"], frame["seat"]
        record = records.get(view["round_number"])
        if record is None:
            continue  # the match ended in another round's middle: no record to hold it to
        own = set(record["hands"]["NESW"[seat]].split())
        own |= {c for p in record["passes"] if p["seat"] ^ seat in (0, 2) for c in p["cards"]}
        played = {a.action["card"] for a in actions
                  if a.version <= frame["version"] and a.round_number == view["round_number"]
                  and a.action["type"] == "play"}  # fmt: skip
        shown = {s for s in json.dumps(view).split('"') if CARD.match(s)}
        leaks += sorted(shown - own - played)
    return leaks


async def test_a_bad_token_is_refused_with_its_close_code(live: InlineScheduler) -> None:
    await sync_to_async(bot_token)()
    for token in (None, "sbt_not-a-token", "Basic abc"):
        comm = await connect_bot(token)
        error = await comm.receive_json_from(timeout=TIMEOUT)
        assert schema_check.check_frame(error, SCHEMAS) == []
        assert error["code"] == "bad_token"
        assert (await comm.receive_output(timeout=TIMEOUT)) == {"type": "websocket.close",
                                                               "code": 4401}  # fmt: skip


async def test_the_reference_client_plays_a_whole_match_with_house_bots(
    live: InlineScheduler, machine_speed: None
) -> None:
    token = await sync_to_async(bot_token)()
    table = await sync_to_async(bot_table)("BXBB", {1: "randy"})
    comm, sent = await connect_bot(token), []
    session = reference_client.BotSession(reference_client.random_policy(random.Random(7)))
    await play_session(comm, session, sent)
    await comm.disconnect()
    await sync_to_async(table.refresh_from_db)()
    assert table.status == Table.Status.FINISHED
    assert session.errors == []
    kinds = [f["type"] for f in sent]
    assert kinds[:3] == ["hello", "seated", "table_started"]
    assert kinds.count("match_end") == 1 and kinds[-1] == "match_end"
    rows = await sync_to_async(list)(RoundRecordRow.objects.filter(table=table))
    assert kinds.count("round_end") == len(rows) >= 1
    assert kinds.count("trick") == 13 * len(rows)
    assert all(r.bot_names[1] == "ext:randy" for r in rows)  # the actor, as stored
    decisions = [f for f in sent if f["type"] == "decision"]
    moves = await sync_to_async(Action.objects.filter(table=table, seat=1).count)()
    assert len(decisions) == moves  # every move of its seat was the bot's own
    assert await sync_to_async(_hidden_cards_seen)(sent, table) == []


async def test_a_decision_carries_the_seats_own_page_view(live: InlineScheduler) -> None:
    from game.sockets import frames

    token = await sync_to_async(bot_token)()
    table = await sync_to_async(bot_table)("XBBB", {0: "randy"})
    comm, sent = await connect_bot(token), []
    hello = await next_frame(comm, sent)
    await comm.send_json_to(reference_client.BotSession(print).handle(hello)[0])
    decision = await frame_until(comm, sent, "decision")
    _, page = await sync_to_async(frames.state_frame)(table.pk, decision["seat"])
    assert decision["view"] == json.loads(page)["view"]
    assert decision["legal_actions"] == decision["view"]["legal_actions"]
    assert 0 < decision["time_left_ms"] <= 30_000
    await comm.disconnect()


async def test_four_external_bots_play_two_tables_on_one_connection(
    live: InlineScheduler, machine_speed: None
) -> None:
    token = await sync_to_async(bot_token)()
    other = await sync_to_async(bot_token)("other")
    both = {p: "randy" for p in range(4)}
    first = await sync_to_async(bot_table)("XXXX", both)
    second = await sync_to_async(bot_table)("BXBX", both)
    comm, sent = await connect_bot(token), []
    # A second bot with its own connection sits out: it holds no seat.
    bystander = await connect_bot(other)
    session = reference_client.BotSession(reference_client.random_policy(random.Random(3)))
    await play_session(comm, session, sent, tables=2)
    for t in (first, second):
        await sync_to_async(t.refresh_from_db)()
        assert t.status == Table.Status.FINISHED
        assert await sync_to_async(_hidden_cards_seen)(sent, t) == []
    assert session.errors == []
    assert (await bystander.receive_json_from(timeout=TIMEOUT))["type"] == "hello"
    await bystander.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    assert await bystander.receive_nothing(timeout=0.2)
    await comm.disconnect()
    await bystander.disconnect()


async def _ready_at_decision(token: str, sent: list[dict[str, Any]]
                             ) -> tuple[WebsocketCommunicator, dict[str, Any]]:  # fmt: skip
    comm = await connect_bot(token)
    await frame_until(comm, sent, "hello")
    await comm.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    return comm, await frame_until(comm, sent, "decision")


async def test_refused_frames_change_nothing(live: InlineScheduler) -> None:
    token = await sync_to_async(bot_token)()
    table = await sync_to_async(bot_table)("XBBB", {0: "randy"})
    sent: list[dict[str, Any]] = []
    comm, d = await _ready_at_decision(token, sent)
    about = {"table": d["table"], "seat": d["seat"], "version": d["version"]}
    # A card the seat does not hold: illegal whatever the phase.
    other = next(c for c in ("AS", "KS", "QS") if c not in (d["view"]["hand"] or []))
    bid = {"type": "play", "card": other}
    wrong = [
        ("not json", "bad_frame"),
        (json.dumps({"type": "action", **about}), "bad_frame"),  # no action
        (json.dumps({"type": "action", **about, "action": {"type": "fly"}}), "bad_action"),
        (json.dumps({"type": "action", **about, "action": bid}), "illegal"),
        (json.dumps({"type": "action", **about, "seat": 2, "action": bid}), "not_your_seat"),
        (
            json.dumps(
                {
                    "type": "action",
                    **about,
                    "version": d["version"] + 5,
                    "action": d["legal_actions"][0],
                }
            ),
            "stale",
        ),  # fmt: skip
        (
            json.dumps({"type": "action", **about, "action": d["legal_actions"][0], "extra": 1}),
            "bad_frame",
        ),  # fmt: skip
        ("x" * 5000, "bad_frame"),
    ]
    for text, code in wrong:
        await comm.send_to(text_data=text)
        error = await frame_until(comm, sent, "error")
        assert error["code"] == code, (text[:80], error)
        assert await sync_to_async(Table.objects.get)(pk=table.pk) == table
        assert (await sync_to_async(Table.objects.get)(pk=table.pk)).version == table.version
    # The stale action gets the decision again; a right one is then taken.
    await comm.send_json_to({"type": "action", **about, "action": d["legal_actions"][0]})
    accepted = await frame_until(comm, sent, "accepted")
    assert accepted["new_version"] == d["version"] + 1
    await comm.disconnect()


async def test_over_the_frame_limit_is_refused(live: InlineScheduler, settings: Any) -> None:
    settings.SPADES_LIMITS = {"bot_frames": (3, 10.0, 50)}
    token = await sync_to_async(bot_token)()
    sent: list[dict[str, Any]] = []
    comm = await connect_bot(token)
    await frame_until(comm, sent, "hello")
    codes = []
    for _ in range(5):
        await comm.send_json_to({"type": "ping"})
        frame = await next_frame(comm, sent)
        codes.append(frame.get("code", frame["type"]))
    assert codes == ["not_ready"] * 3 + ["rate_limited"] * 2
    await comm.disconnect()


async def test_out_of_time_the_stand_in_moves_and_a_late_answer_is_refused(
    live: InlineScheduler,
) -> None:
    token = await sync_to_async(bot_token)()
    table = await sync_to_async(bot_table)("XBBB", {0: "randy"})
    sent: list[dict[str, Any]] = []
    comm, d = await _ready_at_decision(token, sent)
    # The stand-in, at the end of the turn timer (the bot's ready also resumed
    # its table, game.driver.sweeper: a copy, which finds its move made: stale).
    assert live.pending_timers() >= 1
    await sync_to_async(live.run_timers)()
    stood = await frame_until(comm, sent, "stood_in")
    assert (stood["seat"], stood["version"]) == (0, d["version"])
    first = await sync_to_async(Action.objects.get)(table=table, version=d["version"] + 1)
    assert first.by_stand_in and first.seat == 0  # marked as the stand-in's
    await comm.send_json_to({"type": "action", "table": d["table"], "seat": 0,
                             "version": d["version"], "action": d["legal_actions"][0]})  # fmt: skip
    late = await frame_until(comm, sent, "error")
    assert late["code"] == "late"
    after = await sync_to_async(Action.objects.filter(table=table).count)()
    assert after >= d["version"] + 1  # the match went on; nothing of the late answer
    await comm.disconnect()


async def test_a_reconnecting_bot_resumes_its_seat(live: InlineScheduler) -> None:
    token = await sync_to_async(bot_token)()
    await sync_to_async(bot_table)("XBBB", {0: "randy"})
    sent: list[dict[str, Any]] = []
    comm, d = await _ready_at_decision(token, sent)
    await comm.disconnect()
    again, d2 = await _ready_at_decision(token, sent)
    assert (d2["table"], d2["seat"], d2["version"]) == (d["table"], d["seat"], d["version"])
    answer = {"table": d["table"], "seat": 0, "version": d["version"]}
    await again.send_json_to({"type": "action", **answer, "action": d["legal_actions"][0]})
    assert (await frame_until(again, sent, "accepted"))["new_version"] == d["version"] + 1
    await again.disconnect()


async def test_a_bot_seated_while_connected_is_told_and_plays(live: InlineScheduler) -> None:
    token = await sync_to_async(bot_token)()
    sent: list[dict[str, Any]] = []
    comm = await connect_bot(token)
    await frame_until(comm, sent, "hello")
    await comm.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    # Frames are handled in order: the pong says the ready was (the bot listens now).
    await comm.send_json_to({"type": "ping"})
    await frame_until(comm, sent, "pong")
    # Guests, and the external seat last, so that no other write runs beside the
    # bot's reads: the test database (SQLite in memory, shared cache) refuses at
    # once a read while a write holds the table, where a file or PostgreSQL waits.
    table = await sync_to_async(bot_table)("HHHX", {3: "randy"}, start=False)
    seated = await frame_until(comm, sent, "seated")
    assert (seated["table"], seated["seats"]) == (table.public_id, [3])
    # The start is a write beside the socket's reads after `seated`: tried again
    # on the in-memory database's refusal, as the socket's own reads are.
    await reads.read(seating.start_table, table)
    assert (await frame_until(comm, sent, "table_started"))["players"][3]["bot_name"] == "ext:randy"
    await comm.disconnect()


async def test_a_token_revoked_mid_match_closes_the_socket_and_the_match_goes_on(
    live: InlineScheduler,
) -> None:
    token = await sync_to_async(bot_token)()
    table = await sync_to_async(bot_table)("XBBB", {0: "randy"})
    sent: list[dict[str, Any]] = []
    comm, d = await _ready_at_decision(token, sent)
    from botapi.models import BotAccount

    account = await sync_to_async(BotAccount.objects.get)(name="randy")
    await sync_to_async(accounts.revoke)(account)
    assert (await frame_until(comm, sent, "error"))["code"] == "token_withdrawn"
    assert (await comm.receive_output(timeout=TIMEOUT))["code"] == 4403
    await sync_to_async(live.run_timers)()  # the stand-in plays its turn
    await sync_to_async(table.refresh_from_db)()
    assert table.version > d["version"]
    refused = await connect_bot(token)
    assert (await refused.receive_json_from(timeout=TIMEOUT))["code"] == "bad_token"


async def test_a_wrong_protocol_version_is_refused(live: InlineScheduler) -> None:
    token = await sync_to_async(bot_token)()
    sent: list[dict[str, Any]] = []
    comm = await connect_bot(token)
    await frame_until(comm, sent, "hello")
    await comm.send_json_to({"type": "ready", "protocol": "spades-bot/9"})
    assert (await frame_until(comm, sent, "error"))["code"] == "bad_protocol"
    assert (await comm.receive_output(timeout=TIMEOUT))["code"] == 4400


def test_every_schema_is_checked_by_the_checker() -> None:
    assert set(SCHEMAS) == {"hello", "seated", "unseated", "table_started", "decision",
                            "accepted", "stood_in", "trick", "round_end", "match_end", "error",
                            "pong", "ready", "action", "ping", "offer", "accept",
                            "decline", "offer_closed"}  # fmt: skip
    for name, schema in SCHEMAS.items():
        assert schema["properties"]["type"] == {"const": name}
    bad = {"type": "trick", "table": "x", "round_number": 1, "number": 1, "leader": 0,
           "cards": ["AS", "KS", "QS", "ZZ"], "winner": 0}  # fmt: skip
    assert schema_check.check_frame(bad, SCHEMAS) != []
    assert parse_card("AS") in cards_of(parse_card("AS") and (1 << parse_card("AS")))
    assert Seat.Kind.BOT == "bot" and master.get() is not None


async def test_a_bot_and_a_browser_player_finish_a_rated_match_with_house_bots(
    live: InlineScheduler, machine_speed: None
) -> None:
    """The Done-when's table: a person on the table socket, the reference
    client, two house bots; the rounds name the bot, and its rating moves."""
    from game.models import Rating
    from tests.support.sockets import connect

    token = await sync_to_async(bot_token)()
    table = await sync_to_async(bot_table)("HXBB", {1: "randy"})
    person, state = await connect(table, guest="g0")
    comm, sent = await connect_bot(token), []
    session = reference_client.BotSession(reference_client.random_policy(random.Random(11)))
    rng = random.Random(5)

    async def person_moves(frame: dict[str, Any]) -> None:
        view = frame["view"]
        if frame["type"] == "state" and view.get("to_act") == 0 and view.get("legal_actions"):
            act = {"type": "act", "action": rng.choice(view["legal_actions"]),
                   "version": frame["version"]}  # fmt: skip
            await person.send_json_to(act)

    await person_moves(state)
    while not session.finished:
        try:
            frame = await comm.receive_json_from(timeout=0.05)
        except TimeoutError:
            frame = None
        if frame is not None:
            assert schema_check.check_frame(frame, SCHEMAS) == [], frame
            sent.append(frame)
            for reply in session.handle(frame):
                await comm.send_json_to(reply)
            if frame["type"] == "decision" and len(sent) < 8:  # talk is not the bot's to hear
                await person.send_json_to({"type": "chat", "text": "hello bot"})
        while not await person.receive_nothing(timeout=0.01):
            got = await person.receive_json_from(timeout=TIMEOUT)
            if got["type"] == "state":
                await person_moves(got)
    await comm.disconnect()
    await person.disconnect()
    await sync_to_async(table.refresh_from_db)()
    assert table.status == Table.Status.FINISHED and session.errors == []
    rows = await sync_to_async(list)(RoundRecordRow.objects.filter(table=table))
    assert rows and all(r.seat_kinds == "HBBB" and r.bot_e == "ext:randy" for r in rows)
    rating = await sync_to_async(Rating.objects.get)(key="b:ext:randy")
    assert rating.matches == 1 and rating.mu != 25.0
    from game.ratings import boards

    shown = await sync_to_async(boards.bots)()
    assert [b["rating"].matches for b in shown if b["rating"].name == "ext:randy"] == [1]
    assert await sync_to_async(_hidden_cards_seen)(sent, table) == []


async def test_over_the_sockets_per_bot_the_next_is_closed(
    live: InlineScheduler, settings: Any
) -> None:
    settings.SPADES_MAX_SOCKETS = (1, 40)
    token = await sync_to_async(bot_token)()
    first = await connect_bot(token)
    assert (await first.receive_json_from(timeout=TIMEOUT))["type"] == "hello"
    second = await connect_bot(token)
    refused = await second.receive_json_from(timeout=TIMEOUT)
    assert schema_check.check_frame(refused, SCHEMAS) == []
    assert refused["code"] == "too_many_sockets"
    assert (await second.receive_output(timeout=TIMEOUT))["code"] == 4429
    await first.disconnect()
    third = await connect_bot(token)  # the first one's place is free again
    assert (await third.receive_json_from(timeout=TIMEOUT))["type"] == "hello"
    await third.disconnect()


async def test_a_database_lost_under_an_action_asks_to_try_again(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import OperationalError

    token = await sync_to_async(bot_token)()
    table = await sync_to_async(bot_table)("XBBB", {0: "randy"})
    sent: list[dict[str, Any]] = []
    comm, d = await _ready_at_decision(token, sent)

    async def lost(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(master.get(), "submit_on_loop", lost)
    about = {"table": d["table"], "seat": 0, "version": d["version"]}
    await comm.send_json_to({"type": "action", **about, "action": d["legal_actions"][0]})
    assert (await frame_until(comm, sent, "error"))["code"] == "try_again"
    assert (await sync_to_async(Table.objects.get)(pk=table.pk)).version == d["version"]
    monkeypatch.undo()
    await comm.send_json_to({"type": "action", **about, "action": d["legal_actions"][0]})
    assert (await frame_until(comm, sent, "accepted"))["new_version"] == d["version"] + 1
    await comm.disconnect()
