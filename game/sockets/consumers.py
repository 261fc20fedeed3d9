"""The table websocket at ``ws/table/<public id>/``: thin, the rules live below it.

A move goes to the table master (``game.master``), whose store decides where
it runs; frames come from ``game.sockets.frames``.

Server to client frames:

- ``{"type": "state", "version": N, "view": {...}}``: the whole view of this
  socket's seat (``game.sockets.frames``), after connecting, after every
  move (one per version at most; a socket that falls behind gets the latest
  state) and on ``resync``.
- ``{"type": "chat", "seat": S or null, "name": ..., "text": ..., "at": ...}``:
  the text is raw; the page escapes it when it shows it.
- ``{"type": "chat_history", "lines": [...]}``: after connecting, the table's
  last 50 chat lines (``game.sockets.talk``), oldest first.
- ``{"type": "reaction", "seat": S or null, "name": ..., "emote": ...}``: a
  quick reaction, one of ``game.sockets.client_frames.REACTIONS``.
- ``{"type": "watchers", "names": [...]}``: who watches (``game.sockets.watchers``),
  after connecting and whenever a spectator comes or goes.
- ``{"type": "error", "message": ..., "code": ...}``: the frame was refused
  and nothing changed. ``code`` is ``stale`` when the client acted on an old
  version (a fresh ``state`` follows).

Client to server frames (``game.sockets.client_frames`` checks every field):

- ``{"type": "act", "action": {...}, "version": N}``: the seat is this
  socket's own, decided on connect from the session, never read from the frame.
- ``{"type": "resync", "version": N}``: the client saw a gap; it gets the full state.
- ``{"type": "chat", "text": ...}``: up to 200 characters; ``{"type":
  "react", "emote": ...}``. A spectator talks only under a name (an account,
  or a guest who chose one).
- ``{"type": "back"}``: the player marked away (their timer ran out, so a
  stand-in now moves for them at once) is back: their own timer again.
- ``{"type": "ping"}``: the page is still open (every minute); a seated
  player's or the host's keeps the table from being closed as abandoned
  (``game.abandoned``). No answer.

Error codes: ``bad_frame`` (not a frame this socket takes), ``bad_action``,
``spectator``, ``illegal``, ``stale``, ``not_playing``, ``chat``, ``chat_off``
(the table's ``talk`` allows no chat, or no reactions either: a study's),
``chat_rate`` (chat or reactions) and ``rate_limited`` (over a limit of ``game.sockets.limits``),
``try_again`` (the database failed under the frame, e.g. a dropped
connection: nothing half-written, send it again; a move's retry carries its
version, so it cannot apply twice), ``server_error`` (anything else: logged
in one line, nothing changed, the socket stays open).

Close codes: 4404 no such table; 4403 a private table this browser may not
watch (``lobby.access``, refused at the handshake); 4429 too many sockets
open for this player or address (after an error frame that says so); 4500
the server failed while connecting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import psycopg
from channels.consumer import get_handler_name
from channels.exceptions import AcceptConnection, DenyConnection, StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.db import DatabaseError

from game import abandoned, identity, master, observe, seating
from game.driver import sweeper
from game.errors import ServiceError, StaleVersion, TryAgain
from game.models import Seat, Table
from game.moves.db import db_call
from game.moves.rows import Think
from game.sockets import events, frames, limits, talk, visits, watchers
from game.sockets.client_frames import Act, Back, Chat, FrameRefused, React, Resync, parse

CLOSE_NO_TABLE = 4404
CLOSE_TOO_MANY_SOCKETS = 4429
CLOSE_SERVER_ERROR = 4500
DB_FAILED = (DatabaseError, psycopg.Error)  # a restart, a dropped connection: try again

log = logging.getLogger(__name__)


def _identify(
    scope: dict[str, Any], public_id: str
) -> tuple[int, int | None, str, bool, str] | None:
    """(table pk, seat or None, chat name, a player of the table: seated or its
    host, what the table allows said: ``Table.talk``) for this connection;
    None: no such table."""
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
    is_host = table.host_id is not None and getattr(user, "pk", None) == table.host_id
    player = seat is not None or is_host
    if player:
        abandoned.touch(table.pk)
    return table.pk, seat, name, player, table.talk


def watches_silently(scope: dict[str, Any]) -> bool:
    """A staff member watching with ``?silent=1`` (the study monitor's watch
    link): unseen in the table's watchers and unable to chat, so that
    participants are not watched visibly. Anyone else's ``silent`` is ignored."""
    user = scope.get("user")
    if not getattr(user, "is_staff", False):
        return False
    return "silent=1" in bytes(scope.get("query_string", b"")).decode("latin-1").split("&")


class TableConsumer(AsyncJsonWebsocketConsumer):
    table_pk: int
    seat: int | None
    name: str
    talk: str = "chat"  # Table.talk: what may be said at the table
    last_version: int
    silent = False  # a staff member watching unseen (watches_silently)
    # (version, when its state frame was first sent): the bound of a decision's time.
    offer: tuple[int, float] = (-1, 0.0)

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
        try:
            await handler(message)
        except (StopConsumer, AcceptConnection, DenyConnection):
            raise  # how Channels ends a consumer or answers a handshake
        except Exception as e:
            # A failed group message (a state frame the database could not
            # read, say): one log line, an error frame, and the socket stays.
            log.error("table socket: %s failed: %r", message.get("type"), e)
            code = TryAgain.code if isinstance(e, DB_FAILED) else "server_error"
            with contextlib.suppress(Exception):
                await self.send_error("the server failed to update you: resync", code)

    async def connect(self) -> None:
        self.counted = False
        try:
            await self._connect()
        except Exception as e:
            log.error("table socket %s: connecting failed: %r", self.scope.get("path"), e)
            await self.close(code=CLOSE_SERVER_ERROR)

    async def _connect(self) -> None:
        public_id = str(self.scope["url_route"]["kwargs"]["table_id"])
        found = await db_call(_identify)(self.scope, public_id)
        if found is None:
            await self.close(code=CLOSE_NO_TABLE)
            return
        self.table_pk, self.seat, self.name, self.is_player, self.talk = found
        self.silent = self.seat is None and watches_silently(self.scope)
        self.last_visit = time.monotonic()
        guest_id, _ = identity.guest_of(self.scope.get("session"))
        self.rate_key = limits.player_key(self.scope.get("user"), guest_id)
        self.address = limits.counted_address(
            str((self.scope.get("client") or ("unknown",))[0]),
            self.rate_key,
            bound=bool(identity.bound_table(self.scope.get("session"))),
        )
        self.last_version = -1
        self.offer = (-1, 0.0)
        await self.accept()
        if not await limits.open_socket(self.rate_key, self.address):
            await self.send_error(
                "too many table sockets open from your browser or network: close some tabs",
                code="too_many_sockets",
            )
            await self.close(code=CLOSE_TOO_MANY_SOCKETS)
            return
        self.counted = True
        observe.socket_opened()
        events.note_server_loop(asyncio.get_running_loop())
        master.get().store.warm_up()
        self.group = events.group_name(self.table_pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        self.groups.append(self.group)  # discarded on disconnect by the base class
        # The table's group messages straight to dispatch, not through a queue
        # and a task of this socket's own (game.sockets.fanout): the layers of both stacks can.
        deliver_directly = getattr(self.channel_layer, "deliver_directly", None)
        if deliver_directly is not None:
            deliver_directly(self.channel_name, self.dispatch)
        await self.send_state()
        chat = self.talk == Table.Talk.CHAT
        lines = await db_call(talk.history)(self.table_pk) if chat else []
        await self.send_json({"type": "chat_history", "lines": lines})
        if self.seat is None and not self.silent:
            await self.announce_watchers(
                await watchers.seen(self.table_pk, self.channel_name, self.name)
            )
        else:
            await self.send_json({"type": "watchers", "names": await watchers.names(self.table_pk)})
        # A move lost in a restart would stall the table: schedule it again if
        # overdue; the embedded server then sweeps every table (game.driver.sweeper).
        master.get().start_sweeping()
        await db_call(sweeper.resume_table)(self.table_pk)

    async def disconnect(self, code: int) -> None:
        stop_delivering = getattr(self.channel_layer, "stop_delivering", None)
        if stop_delivering is not None:
            stop_delivering(self.channel_name)
        if self.counted and self.seat is None and not self.silent:
            with contextlib.suppress(Exception):  # the others learn at the next change
                await self.announce_watchers(
                    await watchers.gone(self.table_pk, self.channel_name, self.name)
                )
        if getattr(self, "is_player", False):
            with contextlib.suppress(Exception):  # the socket is gone: nobody to tell
                await db_call(abandoned.touch)(self.table_pk)
        if self.counted:
            self.counted = False
            observe.socket_closed()
            await limits.close_socket(self.rate_key, self.address)

    # ----- client frames ---------------------------------------------------------

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        """Check the frame and its limits, then handle it; whatever fails, the
        client gets an error frame and the socket stays open."""
        try:
            if not await limits.hit_async("frames", self.rate_key, self.address):
                raise FrameRefused("slow down: too many frames", "rate_limited")
            frame = parse(text_data)
            if self.is_player and time.monotonic() - self.last_visit > abandoned.TOUCH_EVERY:
                self.last_visit = time.monotonic()
                visits.note(self.table_pk)  # written with the process's others
            if isinstance(frame, Act):
                await self.on_act(frame)
            elif isinstance(frame, Resync):
                if not await limits.hit_async("resync", self.rate_key, self.address):
                    raise FrameRefused("slow down: too many resyncs", "rate_limited")
                await self.send_state(force=True)
            elif isinstance(frame, Chat):
                await self.on_chat(frame)
            elif isinstance(frame, React):
                await self.on_react(frame)
            elif isinstance(frame, Back):
                if self.seat is None:
                    raise FrameRefused("spectators are never away", "spectator")
                await db_call(seating.mark_back)(self.table_pk, self.seat)
            elif self.seat is None and not self.silent:  # a ping: a spectator still watching
                await watchers.seen(self.table_pk, self.channel_name, self.name)
            # A ping is also a visit (above); nothing to answer.
        except FrameRefused as e:
            observe.frame_refused(e.code)
            await self.send_error(e.message, code=e.code)
        except DB_FAILED as e:
            log.error("table %s seat %s: the database failed: %r", self.table_pk, self.seat, e)
            await self.send_error(
                "the server lost its database for a moment; nothing changed: try again",
                code=TryAgain.code,
            )
        except Exception as e:
            log.error("table %s seat %s: a frame failed: %r", self.table_pk, self.seat, e)
            await self.send_error(
                "the server could not handle that frame; nothing changed", code="server_error"
            )

    async def on_act(self, frame: Act) -> None:
        if self.seat is None:
            raise FrameRefused("spectators cannot act: take a seat first", "spectator")
        try:
            await master.get().submit_on_loop(
                self.table_pk, self.seat, frame.action, frame.version, think=self.think(frame)
            )
        except ServiceError as e:
            await self.send_error(e.message, code=e.code)
            if isinstance(e, StaleVersion):
                await self.send_state(force=True)
        except DB_FAILED as e:
            # The database failed under the move (e.g. it restarted): the move
            # committed or not, never half; say so and keep the socket. The
            # client's next act carries its version, so a retry cannot apply twice.
            log.error("table %s: a move could not be stored: %r", self.table_pk, e)
            await self.send_error(
                "the server could not store your move just now: try again", code=TryAgain.code
            )
            with contextlib.suppress(DatabaseError, psycopg.Error):
                await self.send_state(force=True)  # what stands, if the database answers
        # On success the group event brings the new state to every socket, this one too.

    async def on_chat(self, frame: Chat) -> None:
        if self.talk != Table.Talk.CHAT:
            raise FrameRefused("chat is off at this table", "chat_off")
        if self.silent:
            raise FrameRefused("a silent watcher cannot chat", "spectator")
        if self.seat is None and not self.name:
            raise FrameRefused("choose a name to chat", "chat")
        if not await limits.hit_async("chat", self.rate_key, self.address):
            raise FrameRefused("slow down: too many chat messages", "chat_rate")
        line = await db_call(talk.say)(self.table_pk, self.seat, self.name, frame.text)
        await self.channel_layer.group_send(self.group, {"type": "table.chat", **line})

    async def on_react(self, frame: React) -> None:
        if self.talk == Table.Talk.OFF:
            raise FrameRefused("reactions are off at this table", "chat_off")
        if self.silent:
            raise FrameRefused("a silent watcher cannot react", "spectator")
        if self.seat is None and not self.name:
            raise FrameRefused("choose a name to react", "chat")
        if not await limits.hit_async("reactions", self.rate_key, self.address):
            raise FrameRefused("slow down: too many reactions", "chat_rate")
        await self.channel_layer.group_send(
            self.group,
            {"type": "table.reaction", "seat": self.seat, "name": self.name, "emote": frame.emote},
        )

    async def announce_watchers(self, names: list[str]) -> None:
        await self.channel_layer.group_send(self.group, {"type": "table.watchers", "names": names})

    # ----- group messages --------------------------------------------------------

    async def table_event(self, event: dict[str, Any]) -> None:
        """A move was committed: send this seat's view, unless already newer.

        The view of a move committed in this process comes from this process's
        cache, and one committed in another process from the event's action
        applied to the cached version before it, without a database read (a
        read per socket per move would queue behind the moves of all tables);
        otherwise the latest state is read.
        """
        version = int(event.get("version", 0))
        if version <= self.last_version:
            return
        frame = frames.cached_state_frame(
            self.table_pk, self.seat, version
        ) or frames.applied_state_frame(self.table_pk, self.seat, event)
        if frame is None:
            await self.send_state()
            return
        self.last_version, text = frame
        self.offered(self.last_version)  # before the send, as in send_state
        await self.send(text_data=text)

    async def table_changed(self, event: dict[str, Any]) -> None:
        """Seats or status changed (no new version): resend the view."""
        await self.send_state(force=True)

    async def table_chat(self, event: dict[str, Any]) -> None:
        await self.send_json({**event, "type": "chat"})

    async def table_reaction(self, event: dict[str, Any]) -> None:
        await self.send_json({**event, "type": "reaction"})

    async def table_watchers(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "watchers", "names": event.get("names", [])})

    # ----- helpers ---------------------------------------------------------------

    async def send_state(self, force: bool = False) -> None:
        version, text = await db_call(frames.state_frame)(self.table_pk, self.seat)
        # A group message may have sent a newer version while this one was read
        # (game.sockets.fanout): never send an older one after it; ``force`` sends the
        # same version again (seats changed, the client asked).
        if version < self.last_version or (not force and version == self.last_version):
            return
        self.last_version = max(self.last_version, version)
        # The clock starts before the send: this coroutine may resume well after
        # the frame has gone (a busy loop), and a bound must not fall short of it.
        self.offered(version)
        await self.send(text_data=text)

    def offered(self, version: int) -> None:
        """A state frame of ``version`` goes out: the first one starts the clock of
        any decision it offers."""
        if version != self.offer[0]:
            self.offer = (version, time.monotonic())

    def think(self, frame: Act) -> Think | None:
        """The act's decision time: the browser's measure, never above the time
        from sending the state frame it acted on to receiving the act (the
        server's bound); None when this socket sent no frame of that version."""
        version, sent = self.offer
        if version != frame.version:
            return None
        bound = int((time.monotonic() - sent) * 1000)
        measured = None if frame.think_ms is None else min(frame.think_ms, bound)
        return Think(measured, bound)

    async def send_error(self, message: str, code: str = "error") -> None:
        await self.send_json({"type": "error", "message": message, "code": code})
