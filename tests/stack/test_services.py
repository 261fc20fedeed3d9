"""The production services answer: Redis (channel layer, Celery) and PostgreSQL."""

import asyncio
import uuid
from typing import Any

import psycopg
import pytest
import redis
from channels_redis.pubsub import RedisPubSubChannelLayer

from game.sockets.pubsub_layer import TablePubSubLayer

pytestmark = pytest.mark.stack


def test_redis_answers_ping(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url, socket_timeout=2)
    try:
        assert client.ping() is True
    finally:
        client.close()


def test_postgres_runs_select_one(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, connect_timeout=2) as connection:
        assert connection.execute("select 1").fetchone() == (1,)


async def test_pubsub_channel_layer_delivers_a_group_message(redis_url: str) -> None:
    # The production channel layer, end to end: one group message reaches a member.
    layer = RedisPubSubChannelLayer(hosts=[redis_url], prefix=f"test-{uuid.uuid4().hex}")
    try:
        channel = await layer.new_channel()
        await layer.group_add("table-1", channel)
        await layer.group_send("table-1", {"type": "table.version", "version": 7})
        assert await layer.receive(channel) == {"type": "table.version", "version": 7}
    finally:
        await layer.flush()


async def test_the_sites_layer_hands_group_messages_to_direct_members(redis_url: str) -> None:
    # game.sockets.pubsub_layer: a table socket's handler gets the message decoded once,
    # a plain member still by its queue, and a stopped one by its queue again.
    layer = TablePubSubLayer(hosts=[redis_url], prefix=f"test-{uuid.uuid4().hex}")
    got: list[dict[str, Any]] = []
    arrived = asyncio.Event()

    async def handle(message: dict[str, Any]) -> None:
        got.append(message)
        arrived.set()

    try:
        direct, plain = await layer.new_channel(), await layer.new_channel()
        for channel in (direct, plain):
            await layer.group_add("table-2", channel)
        layer.deliver_directly(direct, handle)
        await layer.group_send("table-2", {"type": "table.event", "version": 8})
        assert await asyncio.wait_for(layer.receive(plain), 5) == {
            "type": "table.event",
            "version": 8,
        }
        await asyncio.wait_for(arrived.wait(), 5)
        assert got == [{"type": "table.event", "version": 8}]
        layer.stop_delivering(direct)
        await layer.group_send("table-2", {"type": "table.event", "version": 9})
        assert (await asyncio.wait_for(layer.receive(direct), 5))["version"] == 9
        assert len(got) == 1
    finally:
        await layer.flush()


async def test_a_group_message_reaches_the_senders_sockets_at_once_and_once(
    redis_url: str,
) -> None:
    # game.sockets.pubsub_layer: the sending process's table sockets get the message
    # before it is even published; the copy that comes back from Redis is
    # skipped there, and another process's sockets get it once, from Redis.
    prefix = f"test-{uuid.uuid4().hex}"
    here, there = (TablePubSubLayer(hosts=[redis_url], prefix=prefix) for _ in range(2))
    got: dict[str, list[dict[str, Any]]] = {"here": [], "there": []}
    arrived = asyncio.Event()

    def handler(name: str) -> Any:
        async def handle(message: dict[str, Any]) -> None:
            got[name].append(message)
            arrived.set()

        return handle

    try:
        plain = await here.new_channel()
        for name, layer in (("here", here), ("there", there)):
            channel = await layer.new_channel()
            await layer.group_add("table-3", channel)
            layer.deliver_directly(channel, handler(name))
        await here.group_add("table-3", plain)
        publishing = here.group_send_now("table-3", {"type": "table.event", "version": 5})
        await asyncio.sleep(0)  # the delivering task's turn, before any publishing
        assert got == {"here": [{"type": "table.event", "version": 5}], "there": []}
        await publishing
        # A plain member of the sending process still gets it by its queue, as
        # channels_redis serves it: the Redis copy came back through the reader.
        assert await asyncio.wait_for(here.receive(plain), 5) == {
            "type": "table.event",
            "version": 5,
        }
        while not got["there"]:
            await asyncio.wait_for(arrived.wait(), 5)
            arrived.clear()
        await here.group_send("table-3", {"type": "table.changed"})
        assert await asyncio.wait_for(here.receive(plain), 5) == {"type": "table.changed"}
        while len(got["there"]) < 2:
            await asyncio.wait_for(arrived.wait(), 5)
            arrived.clear()
        assert (
            got["here"]
            == got["there"]
            == [
                {"type": "table.event", "version": 5},
                {"type": "table.changed"},
            ]
        )
    finally:
        await here.flush()
        await there.flush()
