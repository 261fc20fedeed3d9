"""Recovery from a lost worker or a restarted Redis, piece by piece, on a Redis
server of the test's own (a short visibility timeout on the shared one would
hand other tests' held messages around).

- A worker renews the lease of each message it holds (``spadesite/celery.py``):
  a live holder keeps its message past the visibility timeout, and the
  message goes back to the queue soon after its holder stops renewing.
- The channel layer after a Redis restart (``game/sockets/pubsub_layer.py``): a
  publish on a connection from before the restart is made again on a new
  one, and a subscription that connects again has its table sockets resend
  their state (group messages may have been lost meanwhile).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kombu import Connection, Exchange, Queue

import spadesite.celery  # noqa: F401  (the leases in kombu's Redis QoS)
from game.sockets.pubsub_layer import TablePubSubLayer
from lab.stack import stackprocs
from tests.support import services

pytestmark = pytest.mark.stack

VISIBILITY = 1.0
TICK = 0.25  # each worker's look at the held messages (unacked_restore_interval)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    url, process = services.own_redis_server(tmp_path)
    try:
        yield url, tmp_path
    finally:
        stackprocs.stop(process)


def _connection(url: str) -> Connection:
    return Connection(url, transport_options={"visibility_timeout": VISIBILITY})


def _tick(connection: Connection) -> None:
    """One of kombu's periodic looks, as a worker's event loop makes it."""
    connection.default_channel.qos.restore_visible(num=10, interval=1)


def test_a_held_message_goes_back_only_once_its_holder_stops_renewing(
    own_redis: tuple[str, Path],
) -> None:
    url, _ = own_redis
    name = f"test-lease-{uuid.uuid4().hex}"
    with _connection(url) as holder, _connection(url) as other:
        queue = Queue(name, Exchange(name), routing_key=name)
        bound = queue(holder.default_channel)
        bound.declare()
        with holder.Producer() as producer:
            producer.publish({"move": 1}, exchange=queue.exchange, routing_key=name)
        held = bound.get(no_ack=False)
        assert held is not None
        theirs = queue(other.default_channel)
        # Held three visibility timeouts: the holder renews, the other looks.
        until = time.monotonic() + 3 * VISIBILITY
        while time.monotonic() < until:
            _tick(holder)
            _tick(other)
            assert theirs.get(no_ack=True) is None
            time.sleep(TICK)
        # The holder stops (killed): the other gives the message back, and takes it.
        stopped = time.monotonic()
        while (message := theirs.get(no_ack=True)) is None:
            assert time.monotonic() - stopped < VISIBILITY + 5 * TICK
            _tick(other)
            time.sleep(TICK)
        assert message.payload == {"move": 1}
        assert time.monotonic() - stopped >= VISIBILITY - TICK


async def test_the_channel_layer_after_a_redis_restart(tmp_path: Path) -> None:
    url, server = services.own_redis_server(tmp_path)
    prefix = f"test-{uuid.uuid4().hex}"
    reader, sender = (TablePubSubLayer(hosts=[url], prefix=prefix) for _ in range(2))
    got: list[dict[str, Any]] = []
    arrived = asyncio.Event()

    async def handle(message: dict[str, Any]) -> None:
        got.append(message)
        arrived.set()

    try:
        channel = await reader.new_channel()
        await reader.group_add("table-4", channel)
        reader.deliver_directly(channel, handle)
        await sender.group_send("table-4", {"type": "table.event", "version": 1})
        await asyncio.wait_for(arrived.wait(), 5)
        assert got == [{"type": "table.event", "version": 1}]
        # Redis stopped and started again on its port, empty.
        stackprocs.stop(server)
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        server = services.own_redis_server(tmp_path, port=port)[1]
        back = time.monotonic()
        # The sender's first publish is made although its pooled connection died.
        await sender.group_send("table-4", {"type": "table.event", "version": 2})
        # The reader's subscription comes back, and its sockets resend their state.
        while {"type": "table.changed"} not in got:
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), 3)
        assert time.monotonic() - back < 3
    finally:
        await reader.flush()
        await sender.flush()
        stackprocs.stop(server)
