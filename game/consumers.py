"""The table websocket at ``ws/table/<public id>/``: thin, the rules live below it.

A move goes to ``game.moves`` (on the event loop with PostgreSQL, else
through ``game.db.db_call``); frames come from ``game.frames``.

Server to client frames:

- ``{"type": "state", "version": N, "view": {...}}``: the whole view of this
  socket's seat (``game.frames``), after connecting, after every
  move (one per version at most; a socket that falls behind gets the latest
  state) and on ``resync``.
- ``{"type": "chat", "seat": S or null, "name": ..., "text": ...}``: the text
  is raw; the page escapes it when it shows it.
- ``{"type": "error", "message": ..., "code": ...}``: the frame was refused
  and nothing changed. ``code`` is ``stale`` when the client acted on an old
  version (a fresh ``state`` follows).

Client to server frames (at most 4 KB):

- ``{"type": "act", "action": {...}, "version": N}``: the seat is this
  socket's own, decided on connect from the session, never read from the frame.
- ``{"type": "resync", "version": N}``: the client saw a gap; it gets the full state.
- ``{"type": "chat", "text": ...}``: up to 200 characters, a few per ten seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import deque
from typing import Any

import psycopg
from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.db import DatabaseError

from game import events, frames, identity, moves, seating, turns
from game.db import db_call, moves_on_loop
from game.errors import ServiceError, StaleVersion
from game.models import Seat, Table

MAX_FRAME_BYTES = 4096
CHAT_MAX_CHARS = 200
CHAT_BURST = 5  # messages ...
CHAT_WINDOW_SECONDS = 10.0  # ... per this many seconds

CLOSE_NO_TABLE = 4404

log = logging.getLogger(__name__)


def _identify(scope: dict[str, Any], public_id: str) -> tuple[int, int | None, str] | None:
    """(table pk, seat or None, chat name) for this connection; None: no such table."""
    table = Table.objects.filter(public_id=public_id).first()
    if table is None:
        return None
    user = scope.get("user")
    guest_id, guest_name = identity.guest_of(scope.get("session"))
    seat = seating.seat_of(table, user=user, guest_id=guest_id)
    if seat is not None:
        row = Seat.objects.select_related("user").get(table=table, position=seat)
        name = row.display_name
    elif user is not None and getattr(user, "is_authenticated", False):
        name = user.get_username()
    else:
        name = guest_name
    return table.pk, seat, name


class TableConsumer(AsyncJsonWebsocketConsumer):
    table_pk: int
    seat: int | None
    name: str
    last_version: int

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Run the message's handler.

        Channels' own ``dispatch`` first hops to the shared sync thread to close
        old database connections, for every message (each move reaches four
        sockets). Our handlers reach the database only through ``db_call``,
        which keeps that thread's connection and drops a broken one itself.
        """
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"no handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        public_id = str(self.scope["url_route"]["kwargs"]["table_id"])
        found = await db_call(_identify)(self.scope, public_id)
        if found is None:
            await self.close(code=CLOSE_NO_TABLE)
            return
        self.table_pk, self.seat, self.name = found
        self.last_version = -1
        self.chat_times: deque[float] = deque()
        events.note_server_loop(asyncio.get_running_loop())
        self.group = events.group_name(self.table_pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        self.groups.append(self.group)  # discarded on disconnect by the base class
        await self.accept()
        await self.send_state()
        # A move lost in a restart would stall the table: schedule it again if overdue.
        await db_call(turns.resume_table)(self.table_pk)

    # ----- client frames ---------------------------------------------------------

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        if text_data is None:
            await self.send_error("frames must be JSON text")
            return
        if len(text_data) > MAX_FRAME_BYTES or len(text_data.encode()) > MAX_FRAME_BYTES:
            await self.send_error(f"frames are limited to {MAX_FRAME_BYTES} bytes")
            return
        try:
            content = json.loads(text_data)
        except (json.JSONDecodeError, RecursionError):
            await self.send_error("that frame is not JSON")
            return
        await self.receive_json(content)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            await self.send_error("a frame is a JSON object with a 'type'")
            return
        kind = content.get("type")
        if kind == "act":
            await self.on_act(content)
        elif kind == "resync":
            await self.send_state(force=True)
        elif kind == "chat":
            await self.on_chat(content)
        else:
            await self.send_error("'type' must be act, resync or chat")

    async def on_act(self, content: dict[str, Any]) -> None:
        if self.seat is None:
            await self.send_error("spectators cannot act: take a seat first", code="spectator")
            return
        action, version = content.get("action"), content.get("version")
        if not isinstance(action, dict):
            await self.send_error("'action' must be an object", code="bad_action")
            return
        if isinstance(version, bool) or not isinstance(version, int):
            await self.send_error(
                "'version' must be the version you are acting on", code="bad_action"
            )
            return
        try:
            if moves_on_loop():
                await moves.submit_action_async(self.table_pk, self.seat, action, version)
            else:
                await db_call(moves.submit_action)(self.table_pk, self.seat, action, version)
        except ServiceError as e:
            await self.send_error(e.message, code=e.code)
            if isinstance(e, StaleVersion):
                await self.send_state(force=True)
        except (DatabaseError, psycopg.Error):
            # The database failed under the move (e.g. it restarted): the move
            # committed or not, never half; say so and keep the socket. The
            # client's next act carries its version, so a retry cannot apply twice.
            log.exception("table %s: a move could not be stored", self.table_pk)
            await self.send_error(
                "the server could not store your move just now: try again", code="server"
            )
            with contextlib.suppress(DatabaseError, psycopg.Error):
                await self.send_state(force=True)  # what stands, if the database answers
        # On success the group event brings the new state to every socket, this one too.

    async def on_chat(self, content: dict[str, Any]) -> None:
        text = content.get("text")
        if not isinstance(text, str) or not text.strip():
            await self.send_error("a chat message needs some text", code="chat")
            return
        text = text.strip()
        if len(text) > CHAT_MAX_CHARS:
            await self.send_error(
                f"chat messages are limited to {CHAT_MAX_CHARS} characters", code="chat"
            )
            return
        if self.seat is None and not self.name:
            await self.send_error("choose a name to chat", code="chat")
            return
        now = time.monotonic()
        while self.chat_times and now - self.chat_times[0] > CHAT_WINDOW_SECONDS:
            self.chat_times.popleft()
        if len(self.chat_times) >= CHAT_BURST:
            await self.send_error("slow down: too many chat messages", code="chat_rate")
            return
        self.chat_times.append(now)
        await self.channel_layer.group_send(
            self.group,
            {"type": "table.chat", "seat": self.seat, "name": self.name, "text": text},
        )

    # ----- group messages --------------------------------------------------------

    async def table_event(self, event: dict[str, Any]) -> None:
        """A move was committed: send this seat's view, unless already newer.

        The view of a move committed in this process comes from this process's
        cache without a database read (one thread serves every consumer's
        database calls, so a read per socket per move would queue behind the
        moves of all tables); otherwise the latest state is read.
        """
        version = int(event.get("version", 0))
        if version <= self.last_version:
            return
        frame = frames.cached_state_frame(self.table_pk, self.seat, version)
        if frame is None:
            await self.send_state()
            return
        self.last_version, text = frame
        await self.send(text_data=text)

    async def table_changed(self, event: dict[str, Any]) -> None:
        """Seats or status changed (no new version): resend the view."""
        await self.send_state(force=True)

    async def table_chat(self, event: dict[str, Any]) -> None:
        await self.send_json(
            {
                "type": "chat",
                "seat": event.get("seat"),
                "name": event.get("name"),
                "text": event.get("text"),
            }
        )

    # ----- helpers ---------------------------------------------------------------

    async def send_state(self, force: bool = False) -> None:
        version, text = await db_call(frames.state_frame)(self.table_pk, self.seat)
        if not force and version <= self.last_version:
            return
        self.last_version = max(self.last_version, version)
        await self.send(text_data=text)

    async def send_error(self, message: str, code: str = "error") -> None:
        await self.send_json({"type": "error", "message": message, "code": code})
