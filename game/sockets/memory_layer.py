"""The embedded default's channel layer (no ``REDIS_URL``): in memory, one process."""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import time
from typing import Any

from channels.layers import InMemoryChannelLayer

from game.sockets import fanout

SWEEP_EVERY_SECONDS = 1.0


class TableChannelLayer(fanout.DirectDelivery, InMemoryChannelLayer):
    """The embedded default's channel layer: Channels' in-memory layer, made cheaper per message.

    A table socket takes its group messages straight from ``group_send``
    (``game.sockets.fanout``), not through a queue of its own.

    Channels' ``InMemoryChannelLayer`` starts a task per member in ``group_send``
    (the sends never wait: a plain loop does the same), and it sweeps every
    channel and every group for expired entries on each ``receive`` and
    ``group_send``: with 400 sockets that sweep is most of the layer's cost per
    move (bench_server). Here it runs at most once a second, which changes
    nothing but when an expired message is dropped. Group membership does not
    expire (Channels' default drops a socket from its groups after a day,
    silently, which would cut a long-open table page off its table's moves).
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("group_expiry", 10**9)
        InMemoryChannelLayer.__init__(self, **kwargs)
        fanout.DirectDelivery.__init__(self)
        self._last_sweep = 0.0

    async def flush(self) -> None:
        await super().flush()
        self.direct.clear()

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < SWEEP_EVERY_SECONDS:
            return
        self._last_sweep = now
        super()._clean_expired()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        self.group_send_now(group, message)

    def group_send_now(self, group: str, message: dict[str, Any]) -> None:
        """``group_send`` from code on the layer's event loop that cannot await
        (nothing is left to await: ``game.sockets.pubsub_layer``'s returns its publishing)."""
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        # One copy for all members, where Channels' send copies it for each: a
        # move's message carries the table's info, and four deep copies of it
        # were a twentieth of the embedded server's CPU (bench_server). The
        # consumers only read their messages. A pickle round trip is the same
        # copy in a third of deepcopy's time (30 -> 12 us for a move's message),
        # and like the Redis layer's serializing it takes plain data only.
        members = self.groups.get(group)
        if not members:
            return
        shared = pickle.loads(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))
        handlers, queued = self.split(members)
        fanout.deliver(handlers, shared)
        expires = time.time() + self.expiry
        for channel in queued:
            queue = self.channels.setdefault(
                channel, asyncio.Queue(maxsize=self.get_capacity(channel))
            )
            # As in Channels: a full socket misses the message (its client resyncs).
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait((expires, shared))
