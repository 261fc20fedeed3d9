"""The production stack's channel layer: channels_redis' pub/sub layer, with
group messages handed straight to this process's table sockets (``game.sockets.fanout``).

channels_redis keeps one Redis subscription per process and event loop, and
its reader puts each group message, still serialized, in the queue of every
member channel; each consumer then decodes its own copy. Here the reader
decodes a group message once and hands it to the members that asked for
direct delivery (the table sockets, ``game.sockets.consumers``); other members (none
of the site's today) are served as channels_redis serves them.

A group message sent from a process goes to that process's own table sockets
at once, then to Redis for the others, marked with the sending layer's origin
so that its reader skips the copy that comes back (the Socket.IO Redis
adapter's way): the moving process's sockets no longer wait for a round trip
through Redis, and keep getting moves while Redis is away.

Redis restarted (or the connection lost): a group message published while
this process's subscription was away is not delivered again, so when the
subscription connects again every table socket of the process resends its
state (:class:`NoticingPubSub`); and a publish that meets a connection the
pool kept from before the restart is made once more, on a new one.

Built on channels_redis 4's classes (``RedisPubSubChannelLayer``, its
per-loop layer and its shard connection); ``tests/stack/test_services.py``
runs it against a real Redis.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Coroutine
from typing import Any

from channels_redis.pubsub import (
    RedisPubSubChannelLayer,
    RedisPubSubLoopLayer,
    RedisSingleShardConnection,
)
from channels_redis.utils import _wrap_close, decode_hosts
from redis.asyncio.client import PubSub
from redis.exceptions import ConnectionError as RedisConnectionError

from game.sockets import fanout

log = logging.getLogger(__name__)


class TablePubSubLayer(RedisPubSubChannelLayer):
    """``CHANNEL_LAYERS``' backend with Redis (``spadesite.config``)."""

    def _get_layer(self) -> TableLoopLayer:
        loop = asyncio.get_running_loop()
        try:
            layer = self._layers[loop]
        except KeyError:
            layer = TableLoopLayer(*self._args, **self._kwargs, channel_layer=self)
            self._layers[loop] = layer
            _wrap_close(self, loop)
        return layer  # type: ignore[no-any-return]


# A group message goes to Redis behind a mark of MARK_SIZE bytes outside the
# message itself: the origin of the loop layer that sent it when that layer has
# handed it to its own direct members already, else NOT_SERVED. Every process
# of the site uses this layer (``spadesite.config``), so every reader strips it.
MARK_SIZE = 8
NOT_SERVED = bytes(MARK_SIZE)


class TableLoopLayer(fanout.DirectDelivery, RedisPubSubLoopLayer):
    """One event loop's layer: its channels, groups, subscriptions and direct handlers."""

    def __init__(self, hosts: Any = None, *args: Any, **kwargs: Any) -> None:
        RedisPubSubLoopLayer.__init__(self, hosts, *args, **kwargs)
        fanout.DirectDelivery.__init__(self)
        self._shards = [TableShard(host, self) for host in decode_hosts(hosts)]
        self.origin = secrets.token_bytes(MARK_SIZE)

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await self.group_send_now(group, message)

    def group_send_now(self, group: str, message: dict[str, Any]) -> Coroutine[Any, Any, None]:
        """Hand ``message`` to this loop's direct members of ``group`` now (one
        copy for them all, decoded as another process reads it from Redis);
        returns the publishing to Redis, for the caller to await or run as a task."""
        group_channel = self._get_group_channel_name(group)
        data = self.channel_layer.serialize(message)
        members = self.groups.get(group_channel)
        handlers = self.split(members)[0] if members and self.direct else []
        if handlers:
            fanout.deliver(handlers, self.channel_layer.deserialize(data))
        mark = self.origin if handlers else NOT_SERVED
        return self._publish(group_channel, mark + data)

    async def _publish(self, group_channel: str, data: bytes) -> None:
        shard = self._get_shard(group_channel)
        try:
            await shard.publish(group_channel, data)
        except RedisConnectionError:
            # The pool's connection died with a restarted Redis (redis-py finds
            # out by using it): once more, on a new connection.
            await shard.publish(group_channel, data)

    def resend_states(self) -> None:
        """Every table socket of this loop sends its state again (the
        subscription was away: group messages may have been missed)."""
        handlers = list(self.direct.values())
        log.warning("channel layer subscription back: %d sockets resend their state",
                    len(handlers))  # fmt: skip
        fanout.deliver(handlers, {"type": "table.changed"})

    async def flush(self) -> None:
        await super().flush()
        self.direct.clear()


class NoticingPubSub(PubSub):
    """redis-py's subscription, which subscribes again by itself when its
    connection comes back (``on_connect``, not called for the first connect),
    and here also has the layer's table sockets resend their state."""

    def __init__(self, layer: TableLoopLayer, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.layer = layer

    async def on_connect(self, connection: Any) -> None:
        await super().on_connect(connection)
        self.layer.resend_states()


class TableShard(RedisSingleShardConnection):
    """One Redis server's subscription: decodes a group message once for the
    members served directly, unless this layer sent it and served them then."""

    def _ensure_redis(self) -> None:
        if self._redis is None:
            super()._ensure_redis()
            self._pubsub = NoticingPubSub(
                self.channel_layer,
                self._redis.connection_pool,
                event_dispatcher=self._redis._event_dispatcher,
            )

    def _receive_message(self, message: dict[str, Any] | None) -> None:
        if message is None:
            return
        name = message["channel"]
        if isinstance(name, bytes):
            name = name.decode()
        layer: TableLoopLayer = self.channel_layer
        members = layer.groups.get(name)
        if members is None:  # a channel's own message (``send``), unmarked
            super()._receive_message(message)
            return
        marked = message["data"]
        mark, data = marked[:MARK_SIZE], marked[MARK_SIZE:]
        handlers, queued = layer.split(members) if layer.direct else ([], members)
        if handlers and mark != layer.origin:
            try:
                decoded = layer.channel_layer.deserialize(data)
            except Exception:
                # channels_redis' reader would pause a second on it: drop it here.
                log.exception("a group message on %s could not be read", name)
            else:
                fanout.deliver(handlers, decoded)
        for channel in queued:
            queue = layer.channels.get(channel)
            if queue is not None:
                queue.put_nowait(data)
