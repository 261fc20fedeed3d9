"""A worker outlives a lost broker connection (spadesite/celery.py).

When Redis goes away, Celery closes the worker's channel. A move that ends in
a pool child meanwhile is acknowledged later, after the worker has connected
again, on that closed channel; kombu 5.7 then raises AttributeError and the
worker dies ("Unrecoverable error"; seen in the Redis fault test of
tests/stack/test_faults.py, once in about 30 runs). Here a real channel
to the shared Redis, in a queue of the test's own, is put in the state that
worker's traceback shows: closed, with no transport and no connection pool.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kombu import Connection, Exchange, Queue

import spadesite.celery  # noqa: F401  (the patches to kombu's Redis QoS)
from tests.support import services

pytestmark = pytest.mark.stack


@pytest.fixture
def held() -> Iterator[tuple[Connection, Queue, Any]]:
    """A message a consumer holds (delivered, not acknowledged) on a channel
    that was then closed as a lost connection leaves it; and its queue."""
    name = f"test-broker-lost-{uuid.uuid4().hex}"
    with Connection(services.redis_url()) as connection:
        channel = connection.channel()
        queue = Queue(name, Exchange(name), routing_key=name, channel=channel)
        queue.declare()
        with connection.Producer() as producer:
            producer.publish({"move": 1}, exchange=queue.exchange, routing_key=name)
        message = queue.get(no_ack=False)
        assert message is not None
        channel.close()  # gives the held message back to the queue
        channel._disconnect_pools()  # what a dropped connection does to the channel
        assert channel.connection is None and channel._pool is None
        try:
            yield connection, queue, message
        finally:
            with connection.channel() as cleanup:
                queue(cleanup).delete()


def _in_queue(connection: Connection, queue: Queue) -> list[Any]:
    with connection.channel() as channel:
        bodies = []
        while (message := queue(channel).get(no_ack=True)) is not None:
            bodies.append(message.payload)
        return bodies


def test_a_move_acknowledged_on_a_closed_channel_is_left_to_redis(
    held: tuple[Connection, Queue, Any], caplog: pytest.LogCaptureFixture
) -> None:
    connection, queue, message = held
    with caplog.at_level(logging.WARNING, logger="spadesite.celery"):
        message.ack()
    assert "left unacknowledged to Redis" in caplog.text
    assert _in_queue(connection, queue) == [{"move": 1}]  # nothing lost


def test_a_move_rejected_on_a_closed_channel_is_left_to_redis(
    held: tuple[Connection, Queue, Any], caplog: pytest.LogCaptureFixture
) -> None:
    connection, queue, message = held
    with caplog.at_level(logging.WARNING, logger="spadesite.celery"):
        message.reject(requeue=True)
    assert "left unrejected to Redis" in caplog.text
    assert _in_queue(connection, queue) == [{"move": 1}]


def test_held_moves_given_back_on_a_closed_channel_are_left_to_redis(
    held: tuple[Connection, Queue, Any], caplog: pytest.LogCaptureFixture
) -> None:
    connection, queue, message = held
    message.channel.qos._delivered[message.delivery_tag] = message  # still held
    with caplog.at_level(logging.WARNING, logger="spadesite.celery"):
        message.channel.qos.restore_unacked()
    assert "held messages left to Redis" in caplog.text
    assert _in_queue(connection, queue) == [{"move": 1}]
