"""Group messages handed straight to this process's table sockets.

Channels gives each consumer a queue and a loop of its own: for every group
message, each member's queue wakes a waiting task, ``asyncio.wait`` returns,
the consumer dispatches, and a new receiving task starts. For a move that is
four wake-ups of the machinery (a quarter of a bare echo's CPU per action in
``bench_server``). Here a channel layer hands a group message to the
handlers of the members that asked for it (:meth:`DirectDelivery.deliver_directly`)
in one task, one after another, and queues it for the other members as
Channels does. lila-ws works the same way: one subscriber per process, and
the process's own sockets served from it.

What a consumer gives up: Channels runs one message of a consumer at a time,
and a message delivered here may run while that consumer's own handler (a
frame from its client) waits on the database. ``game.sockets.consumers`` is written
for that: a state frame is sent only when it is newer than the last one the
socket got (or the same version, when asked again), decided without
awaiting in between.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[None]]

_delivering: set[asyncio.Task[None]] = set()  # the loop holds tasks weakly: hold them


class DirectDelivery:
    """A channel layer's register of channels served by a handler, not a queue."""

    def __init__(self) -> None:
        self.direct: dict[str, Handler] = {}

    def deliver_directly(self, channel: str, handler: Handler) -> None:
        """Hand this channel's group messages to ``handler`` (on this loop)."""
        self.direct[channel] = handler

    def stop_delivering(self, channel: str) -> None:
        self.direct.pop(channel, None)

    def split(self, members: Iterable[str]) -> tuple[list[Handler], list[str]]:
        """(handlers of the members served directly, the other members)."""
        direct = self.direct
        handlers: list[Handler] = []
        queued: list[str] = []
        for channel in members:
            handler = direct.get(channel)
            if handler is None:
                queued.append(channel)
            else:
                handlers.append(handler)
        return handlers, queued


def deliver(handlers: list[Handler], message: dict[str, Any]) -> None:
    """Run each handler on ``message`` in turn, in one task on the running loop.

    The handlers only read the message (it is one copy for all of them). A
    handler that fails is logged and the others still run.
    """
    if not handlers:
        return
    task = asyncio.get_running_loop().create_task(_run(handlers, message))
    _delivering.add(task)
    task.add_done_callback(_delivering.discard)


async def _run(handlers: list[Handler], message: dict[str, Any]) -> None:
    for handler in handlers:
        try:
            await handler(message)
        except Exception:
            log.exception("a group message %r failed at a socket", message.get("type"))
