"""The embedded default's channel layer: Channels' in-memory layer, made cheaper per message.

Channels' ``InMemoryChannelLayer`` starts a task per member in ``group_send``
(the sends never wait: a plain loop does the same), and it sweeps every
channel and every group for expired entries on each ``receive`` and
``group_send``: with 400 sockets that sweep is most of the layer's cost per
move (bench_server). Here it runs at most once a second, which changes
nothing but when an expired message is dropped. Group membership does not
expire (Channels' default drops a socket from its groups after a day,
silently, which would cut a long-open table page off its table's moves).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer

SWEEP_EVERY_SECONDS = 1.0


class TableChannelLayer(InMemoryChannelLayer):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("group_expiry", 10**9)
        super().__init__(**kwargs)
        self._last_sweep = 0.0

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._last_sweep < SWEEP_EVERY_SECONDS:
            return
        self._last_sweep = now
        super()._clean_expired()

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_group_name(group)
        self._clean_expired()
        for channel in list(self.groups.get(group, ())):
            # As in Channels: a full socket misses the message (its client resyncs).
            with contextlib.suppress(ChannelFull):
                await self.send(channel, message)
