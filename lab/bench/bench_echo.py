"""The bare Channels baseline of ``manage.py bench_server``: a websocket echo, no database.

``daphne lab.bench.bench_echo:application`` serves ``ws/table/<id>/`` like the site,
with the same Django settings and so the same channel layer (the in-memory
``game.sockets.memory_layer.TableChannelLayer`` without ``REDIS_URL``, channels_redis'
pub/sub layer with it), but no engine, no database, no session, and Channels'
queue per socket for group messages (it asks for no straight delivery,
``game.sockets.fanout``): each ``act``
is checked against the socket's version and sent as one group message to the
table's group, and each of the table's sockets then sends its own small
``state`` frame with the next version. What the benchmark's clients
(``lab.bench.loadtest``) read of a frame is there: ``version``, ``view.version``,
``view.to_act`` (``version % 4``: the seats take turns), ``view.legal_actions``
and ``view.table.status``. The site never routes here (``spadesite.asgi``
does not import it); only the benchmark starts it.

The version travels in the group message (the acting socket's version + 1),
so a table whose sockets sit on several Daphne processes stays in step
without shared state; each process remembers the last version it saw per
table for a socket that connects later.
"""

from __future__ import annotations

import gc
import os
import re
from typing import Any

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.routing import ProtocolTypeRouter, URLRouter
from django.urls import path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spadesite.settings")

FIRST_VERSION = 1
CLOSE_NO_TABLE = 4404
_GROUP_SAFE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# A few actions shaped like the engine's, so that the client's pick and its
# ``act`` frame cost what they cost against the site.
LEGAL_ACTIONS = [
    {"type": "play", "seat": 0, "card": card} for card in ("2C", "9D", "QH", "AS", "5S")
]

_versions: dict[str, int] = {}  # table id -> last version this process saw


def state_frame(version: int) -> dict[str, Any]:
    return {
        "type": "state",
        "version": version,
        "view": {
            "version": version,
            "to_act": version % 4,
            "legal_actions": LEGAL_ACTIONS,
            "table": {"status": "playing", "version": version},
        },
    }


class EchoConsumer(AsyncJsonWebsocketConsumer):
    table_id: str
    group: str
    last_version: int

    async def dispatch(self, message: dict[str, Any]) -> None:
        # As game.sockets.consumers.TableConsumer does: without Channels' hop to the
        # sync thread to close old database connections on every message.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"no handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        self.table_id = str(self.scope["url_route"]["kwargs"]["table_id"])
        if not _GROUP_SAFE.match(self.table_id):
            await self.close(code=CLOSE_NO_TABLE)
            return
        self.group = f"echo_{self.table_id}"
        self.last_version = _versions.setdefault(self.table_id, FIRST_VERSION)
        await self.accept()
        await self.channel_layer.group_add(self.group, self.channel_name)
        self.groups.append(self.group)  # discarded on disconnect by the base class
        await self.send_json(state_frame(self.last_version))

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "resync":
            await self.send_json(state_frame(self.last_version))
        elif kind == "act":
            # The site's compare-and-swap, in miniature: an act on an old
            # version changes nothing and gets the current state back.
            if content.get("version") != self.last_version:
                await self.send_json({"type": "error", "message": "stale", "code": "stale"})
                await self.send_json(state_frame(self.last_version))
                return
            await self.channel_layer.group_send(
                self.group, {"type": "echo.event", "version": self.last_version + 1}
            )

    async def echo_event(self, event: dict[str, Any]) -> None:
        """The group message of one act: this socket's own frame, once per version."""
        version = int(event["version"])
        if version <= self.last_version:
            return
        self.last_version = version
        if version > _versions.get(self.table_id, 0):
            _versions[self.table_id] = version
        await self.send_json(state_frame(version))


application = ProtocolTypeRouter(
    {"websocket": URLRouter([path("ws/table/<str:table_id>/", EchoConsumer.as_asgi())])}
)

# The site's process tuning (spadesite/asgi.py), so that the two differ only in
# what runs per frame.
gc.freeze()
gc.set_threshold(20_000, 20, 100)
