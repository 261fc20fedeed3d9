"""An external bot's rounds in the research data (issue 60, item 4): the round
log exports (CSV and JSON Lines) name the seat's bot ``ext:<name>`` and its
protocol version, its seat's actor is the bot (no stand-in moves), and the
dashboard lists it among the bots it filters by, like a house bot kind. The
match is played by a bot through its socket (botapi/consumer.py)."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest
from asgiref.sync import sync_to_async

from game.research import analytics, exports
from game.research.analytics import Filters
from tests.support.bot_protocol import (
    bot_table,
    bot_token,
    connect_bot,
    play_session,
    reference_client,
)
from tests.support.inline import InlineScheduler
from tests.support.sockets import close_sync_thread_connections  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def _csv(filters: Filters) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO("".join(exports.iter_csv(filters)))))


def _jsonl(filters: Filters) -> list[dict]:
    return [json.loads(line) for line in "".join(exports.iter_jsonl(filters)).splitlines()]


async def test_the_exports_name_the_external_bot_and_its_protocol(
    live: InlineScheduler, machine_speed: None
) -> None:
    token = await sync_to_async(bot_token)()
    # Both East and West the external bot: the E/W partnership's bot key is its name.
    table = await sync_to_async(bot_table)("BXBX", {1: "randy", 3: "randy"})
    comm, sent = await connect_bot(token), []
    policy = reference_client.random_policy(random.Random(3))
    await play_session(comm, reference_client.BotSession(policy), sent)
    await comm.disconnect()

    rows = await sync_to_async(_csv)(Filters())
    assert rows and {r["table"] for r in rows} == {table.public_id}
    for r in rows:
        assert (r["kind_e"], r["bot_e"], r["protocol_e"]) == ("bot", "ext:randy", "spades-bot/1")
        assert (r["bot_w"], r["protocol_w"]) == ("ext:randy", "spades-bot/1")
        assert (r["bot_n"], r["protocol_n"]) == ("Random+Random", "")
        assert (r["actor_e"], r["stand_in_plays_e"]) == ("bot", "0")
    items = await sync_to_async(_jsonl)(Filters())
    assert len(items) == len(rows)
    east = items[0]["seats"][1]
    assert (east["kind"], east["bot"], east["protocol"], east["actor"]) == (
        "bot", "ext:randy", "spades-bot/1", "bot")  # fmt: skip
    assert items[0]["seats"][0]["protocol"] == ""
    # The dashboard's bot filter knows it, and picks its rounds as bot rounds.
    assert "ext:randy" in await sync_to_async(analytics.bot_names_in_use)()
    mine = await sync_to_async(_csv)(Filters(bot="ext:randy"))
    assert [r["round_id"] for r in mine] == [r["round_id"] for r in rows]
    assert await sync_to_async(_csv)(Filters(bot="BIS+SRP")) == []
