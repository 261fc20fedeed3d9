"""The production services answer: Redis (channel layer, Celery) and PostgreSQL."""

import uuid

import psycopg
import pytest
import redis
from channels_redis.pubsub import RedisPubSubChannelLayer

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
