"""The production stack's channel layer: channels_redis' pub/sub layer, with
group messages handed straight to this process's table sockets (``game.fanout``).

channels_redis keeps one Redis subscription per process and event loop, and
its reader puts each group message, still serialized, in the queue of every
member channel; each consumer then decodes its own copy. Here the reader
decodes a group message once and hands it to the members that asked for
direct delivery (the table sockets, ``game.consumers``); other members (none
of the site's today) are served as channels_redis serves them.

Built on channels_redis 4's classes (``RedisPubSubChannelLayer``, its
per-loop layer and its shard connection); ``tests/server/test_stack_services.py``
runs it against a real Redis.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from channels_redis.pubsub import (
    RedisPubSubChannelLayer,
    RedisPubSubLoopLayer,
    RedisSingleShardConnection,
)
from channels_redis.utils import _wrap_close, decode_hosts

from game import fanout

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


class TableLoopLayer(fanout.DirectDelivery, RedisPubSubLoopLayer):
    """One event loop's layer: its channels, groups, subscriptions and direct handlers."""

    def __init__(self, hosts: Any = None, *args: Any, **kwargs: Any) -> None:
        RedisPubSubLoopLayer.__init__(self, hosts, *args, **kwargs)
        fanout.DirectDelivery.__init__(self)
        self._shards = [TableShard(host, self) for host in decode_hosts(hosts)]

    async def flush(self) -> None:
        await super().flush()
        self.direct.clear()


class TableShard(RedisSingleShardConnection):
    """One Redis server's subscription: decodes a group message once for the
    members served directly."""

    def _receive_message(self, message: dict[str, Any] | None) -> None:
        if message is None:
            return
        name = message["channel"]
        if isinstance(name, bytes):
            name = name.decode()
        layer: TableLoopLayer = self.channel_layer
        members = layer.groups.get(name)
        if not members or not layer.direct:
            super()._receive_message(message)
            return
        handlers, queued = layer.split(members)
        data = message["data"]
        if handlers:
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
