"""The bot socket at ``ws/bot/``: one program playing a bot account's seats.

The handshake carries ``Authorization: Bearer <token>`` (``tokens``); a
missing, unknown or revoked token gets an ``error`` frame and close code
4401. Then the server says ``hello``, the bot answers ``ready`` with the
protocol's version, and it is told of every table whose seat is ``ext:<its
name>`` (open or playing: a reconnecting bot resumes them) and of every seat
given to it later. At each table it gets ``table_started``, then for each
of its decisions its seat's view, the legal actions and its time; every
trick, round and match end. Its actions go through the table master as a
player's do (``game.master.submit_on_loop``): a bad frame, an illegal or
stale action is refused with an ``error`` frame and changes nothing. Past its
time the house stand-in moves for it (``game.driver.external``), the bot is
told (``stood_in``), and its answer for that decision is refused as ``late``.
docs/bot-protocol.md is the protocol's description for bot authors.

A host may also offer a seat to any bot accepting open challenges
(``botapi.offers``): the bot is sent ``offer`` and answers ``accept`` or
``decline``. The socket's database reads are tried again when refused for a
moment (``botapi.reads``).

Close codes: 4400 a protocol this server does not speak; 4401 no valid token;
4403 the token was revoked or replaced while connected; 4429 too many
sockets for this bot or address; 4500 the server failed while connecting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from channels.consumer import get_handler_name
from channels.exceptions import AcceptConnection, DenyConnection, StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.utils import timezone

from botapi import accounts, inbound, notify, offers, reads, tokens
from botapi.protocol import (
    PROTOCOL,
    Watch,
    decision_frame,
    ends_since,
    error_frame,
    seat_view,
    started_frame,
    time_left_ms,
)
from game import external_bots, master
from game.driver import sweeper
from game.errors import ServiceError, StaleVersion, TryAgain
from game.models import Seat, Table
from game.moves import matches
from game.moves.db import db_call
from game.sockets import events, frames, limits
from game.sockets.client_frames import FrameRefused
from game.sockets.consumers import DB_FAILED

log = logging.getLogger(__name__)

CLOSE_BAD_PROTOCOL, CLOSE_BAD_TOKEN, CLOSE_WITHDRAWN = 4400, 4401, 4403
CLOSE_TOO_MANY_SOCKETS, CLOSE_SERVER_ERROR = 4429, 4500
LIVE = (Table.Status.OPEN, Table.Status.PLAYING)
IGNORED = {"table_chat", "table_reaction", "table_watchers"}


def _header(scope: dict[str, Any], name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return ""


def _sign_in(token: str | None) -> tuple[int, str, str] | None:
    found = accounts.authenticate(token)
    return None if found is None else (found.pk, found.name, found.token_hash)


def _seats_of(name: str, table_pk: int | None = None) -> dict[int, tuple[str, list[int]]]:
    """The live tables where ``ext:<name>`` sits: pk -> (public id, its seats)."""
    rows = Seat.objects.filter(kind=Seat.Kind.BOT, bot_name=external_bots.seat_name(name),
                               table__status__in=LIVE)  # fmt: skip
    if table_pk is not None:
        rows = rows.filter(table_id=table_pk)
    out: dict[int, tuple[str, list[int]]] = {}
    for pk, public_id, position in rows.values_list("table_id", "table__public_id", "position"):
        out.setdefault(pk, (public_id, []))[1].append(position)
    return out


def _load(table_pk: int) -> matches.Committed | None:
    """The table's state as committed, or None before its match starts."""
    table = Table.objects.select_related("host").get(pk=table_pk)
    if table.started_at is None:
        return None
    seats = {s.position: s for s in table.seats.select_related("user")}
    return matches.Committed(matches.load_match(table), matches.table_info(table, seats))


_ready_here: dict[str, int] = {}  # bot name -> its sockets ready in this process


def ready_here(name: str) -> int:
    """How many sockets of bot ``name`` said ready in this process (the lab's
    tournament waits for one before it deals)."""
    return _ready_here.get(name, 0)


class BotConsumer(AsyncJsonWebsocketConsumer):
    account: tuple[int, str, str] | None = None
    ready = False
    counted = False

    async def connect(self) -> None:
        self.tables: dict[int, Watch] = {}
        self.address = str((self.scope.get("client") or ("unknown",))[0])
        try:
            token = tokens.from_header(_header(self.scope, b"authorization"))
            self.account = await reads.read(_sign_in, token)
        except Exception as e:
            log.error("bot socket: signing in failed: %r", e)
            await self.close(code=CLOSE_SERVER_ERROR)
            return
        await self.accept()
        if self.account is None:
            need = "send a live bot token as 'Authorization: Bearer sbt_...'"
            await self.send_json(error_frame("bad_token", need))
            await self.close(code=CLOSE_BAD_TOKEN)
            return
        self.rate_key = f"bot:{self.account[1]}"
        if not await limits.open_socket(self.rate_key, self.address):
            await self.send_json(error_frame("too_many_sockets", "too many sockets of this bot"))
            await self.close(code=CLOSE_TOO_MANY_SOCKETS)
            return
        self.counted = True
        events.note_server_loop(asyncio.get_running_loop())
        master.get().store.warm_up()
        await self.send_json({"type": "hello", "protocol": PROTOCOL, "bot": self.account[1],
                              "max_frame_bytes": inbound.MAX_FRAME_BYTES})  # fmt: skip

    async def disconnect(self, code: int) -> None:
        for w in self.tables.values():
            await self.channel_layer.group_discard(events.group_name(w.pk), self.channel_name)
        await self.unready()
        if self.counted:
            self.counted = False
            await limits.close_socket(self.rate_key, self.address)

    # ----- the bot's frames ------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None,
                      **kwargs: Any) -> None:  # fmt: skip
        try:
            if not await limits.hit_async("bot_frames", self.rate_key, self.address):
                raise FrameRefused("slow down: too many frames", "rate_limited")
            frame = inbound.parse(text_data)
            if isinstance(frame, inbound.Ready):
                await self.on_ready(frame)
            elif not self.ready:
                raise FrameRefused("say 'ready' first", "not_ready")
            elif isinstance(frame, inbound.ActionFrame):
                await self.on_action(frame)
            elif isinstance(frame, inbound.Answer):
                await self.on_answer(frame)
            else:
                await self.send_json({"type": "pong"})
        except FrameRefused as e:
            await self.send_json(error_frame(e.code, e.message))
        except DB_FAILED as e:
            log.error("bot %s: the database failed: %r", self.account and self.account[1], e)
            await self.send_json(error_frame(TryAgain.code, "the server lost its database for "
                                             "a moment; nothing changed: try again"))  # fmt: skip
        except Exception as e:
            log.error("bot %s: a frame failed: %r", self.account and self.account[1], e)
            await self.send_json(error_frame("server_error", "the server could not handle "
                                             "that frame; nothing changed"))  # fmt: skip

    async def on_ready(self, frame: inbound.Ready) -> None:
        if frame.protocol != PROTOCOL:
            await self.send_json(error_frame("bad_protocol", f"this server speaks {PROTOCOL}"))
            await self.close(code=CLOSE_BAD_PROTOCOL)
            return
        if self.ready:
            raise FrameRefused("already ready", "bad_frame")
        assert self.account is not None
        self.ready = True
        _ready_here[self.account[1]] = ready_here(self.account[1]) + 1
        await self.channel_layer.group_add(notify.group_of(self.account[1]), self.channel_name)
        await self.channel_layer.group_add(offers.CHALLENGES, self.channel_name)
        # A move lost in a restart would stall the bot's tables: schedule it again
        # if overdue, as a table's socket does (game.driver.sweeper).
        master.get().start_sweeping()
        try:
            for pk, (public_id, seats) in (await reads.read(_seats_of, self.account[1])).items():
                await self.watch(pk, public_id, seats)
                await reads.read(sweeper.resume_table, pk)
            for offer in await reads.read(offers.open_frames, self.account[1]):
                await self.send_json(offer)
        except Exception:
            await self.unready()  # so that the bot may say ready again (try_again)
            raise

    async def unready(self) -> None:
        if self.account is not None and self.ready:
            self.ready = False
            _ready_here[self.account[1]] = ready_here(self.account[1]) - 1
            for group in (notify.group_of(self.account[1]), offers.CHALLENGES):
                await self.channel_layer.group_discard(group, self.channel_name)

    async def on_action(self, frame: inbound.ActionFrame) -> None:
        w = next((w for w in self.tables.values() if w.public_id == frame.table), None)
        about = {"table": frame.table, "seat": frame.seat, "version": frame.version}
        if w is None or frame.seat not in w.seats:
            raise FrameRefused("this bot holds no such seat", "not_your_seat")
        if w.late.get(frame.seat) == frame.version:
            await self.send_json(error_frame(
                "late", "out of time: the stand-in moved for you", **about))  # fmt: skip
            return
        w.mine[frame.seat] = frame.version
        try:
            done = await master.get().submit_on_loop(w.pk, frame.seat, frame.action, frame.version)
        except Exception as e:
            w.mine.pop(frame.seat, None)  # not the bot's move after all
            if not isinstance(e, ServiceError):
                raise  # receive's: try_again or server_error
            await self.send_json(error_frame(e.code, e.message, **about))
            if isinstance(e, StaleVersion):
                await self.catch_up(w, None, again=True)
            return
        await self.send_json({"type": "accepted", **about, "new_version": done.version})

    async def on_answer(self, frame: inbound.Answer) -> None:
        """Accept (then ``seated`` follows) or decline an offered seat."""
        assert self.account is not None
        answer = offers.accept if frame.accept else offers.decline
        try:
            await db_call(answer)(frame.offer, self.account[1])
        except ServiceError as e:
            await self.send_json(error_frame(e.code, e.message, offer=frame.offer))

    # ----- group messages --------------------------------------------------------

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Run the message's handler; the table's talk and watchers are not a
        bot's (chat is personal data, and nothing here answers it), and a
        handler that fails costs the bot an error frame, not its socket."""
        name = get_handler_name(message)
        if name in IGNORED:
            return
        # The handler at once, as the table socket does (game.sockets.consumers):
        # Channels' own dispatch hops to the sync thread before every message.
        handler = getattr(self, name, None)
        try:
            if handler is None:
                raise ValueError(f"no handler for message type {message['type']}")
            await handler(message)
        except (StopConsumer, AcceptConnection, DenyConnection):
            raise
        except Exception as e:
            log.error("bot socket: %s failed: %r", message.get("type"), e)
            with contextlib.suppress(Exception):
                await self.send_json(
                    error_frame(
                        "server_error",
                        "the server failed to update you; it tries again at the next move",
                    )
                )

    async def table_event(self, event: dict[str, Any]) -> None:
        w = self.tables.get(int(event.get("table", -1)))
        if w is not None and int(event.get("version", 0)) > w.version:
            await self.catch_up(w, event)

    async def table_changed(self, event: dict[str, Any]) -> None:
        w = self.tables.get(int(event.get("table", -1)))
        if w is None:
            return
        found = (await reads.read(_seats_of, self.account[1], w.pk)).get(w.pk)  # type: ignore[index]
        if found is None:
            await self.unwatch(w, "the seat was taken back, or the table closed")
            return
        w.seats = found[1]
        await self.catch_up(w, None)

    async def bot_seated(self, event: dict[str, Any]) -> None:
        pk = int(event["table"])
        found = (await reads.read(_seats_of, self.account[1], pk)).get(pk)  # type: ignore[index]
        if found is not None and pk not in self.tables:
            await self.watch(pk, *found)

    async def bot_offer(self, event: dict[str, Any]) -> None:
        assert self.account is not None
        frame = await reads.read(offers.frame_for, int(event["offer"]), self.account[1])
        if frame is not None:
            await self.send_json(frame)

    async def bot_offer_closed(self, event: dict[str, Any]) -> None:
        assert self.account is not None
        frame = await reads.read(offers.closed_frame, int(event["offer"]), self.account[1])
        if frame is not None:
            await self.send_json(frame)

    async def bot_withdrawn(self, event: dict[str, Any]) -> None:
        assert self.account is not None
        if not await reads.read(accounts.still_valid, self.account[0], self.account[2]):
            await self.send_json(error_frame("token_withdrawn", "this token was revoked"))
            await self.close(code=CLOSE_WITHDRAWN)

    # ----- helpers ---------------------------------------------------------------

    async def watch(self, pk: int, public_id: str, seats: list[int]) -> None:
        w = self.tables[pk] = Watch(pk, public_id, seats)
        await self.channel_layer.group_add(events.group_name(pk), self.channel_name)
        await self.send_json({"type": "seated", "table": public_id, "seats": seats})
        await self.catch_up(w, None)

    async def unwatch(self, w: Watch, why: str) -> None:
        self.tables.pop(w.pk, None)
        await self.channel_layer.group_discard(events.group_name(w.pk), self.channel_name)
        await self.send_json({"type": "unseated", "table": w.public_id, "reason": why})

    async def catch_up(self, w: Watch, event: dict[str, Any] | None, again: bool = False) -> None:
        """Tell the bot what happened at ``w`` up to the newest committed state:
        the start, trick and round ends, the stand-in's move for it, its turn."""
        entry = self.committed(w.pk, event)
        if entry is None or entry.info is None:
            entry = await reads.read(_load, w.pk)
        if entry is None or entry.info is None:
            return  # not started yet
        match, info = entry.match, entry.info
        if match.version < w.version:
            return
        if not w.started:
            w.started = True
            await self.send_json(started_frame(w, info))
        if event is not None:
            await self.stood_in(w, event)
        w.version = match.version
        for frame in ends_since(w, match):
            await self.send_json(frame)
        if w.over:
            self.tables.pop(w.pk, None)
            await self.channel_layer.group_discard(events.group_name(w.pk), self.channel_name)
            return
        seat = match.round.to_act
        if seat in w.seats and (again or w.asked.get(seat) != match.version):
            w.asked[seat] = match.version
            view = seat_view(match, seat, info)
            left = time_left_ms(info, timezone.now())
            await self.send_json(decision_frame(w, seat, view, left))

    def committed(self, pk: int, event: dict[str, Any] | None) -> matches.Committed | None:
        """This process's newest state of the table, if it is the event's or later."""
        if event is None:
            return None
        version = max(int(event["version"]), matches.latest_version(pk))
        entry = matches.cached(pk, version)
        if entry is None:  # committed by another process: its action on our copy
            with contextlib.suppress(Exception):
                frames.applied_state_frame(pk, None, event)
            entry = matches.cached(pk, int(event["version"]))
        return entry

    async def stood_in(self, w: Watch, event: dict[str, Any]) -> None:
        """A move for one of the bot's seats that the bot did not make: the stand-in's."""
        action, version = event.get("action"), int(event["version"])
        seat = action.get("seat") if isinstance(action, dict) else None
        if seat not in w.seats or w.asked.get(seat) != version - 1:
            return
        if w.mine.get(seat) == version - 1:
            return
        w.late[seat] = version - 1
        await self.send_json({"type": "stood_in", "table": w.public_id, "seat": seat,
                              "version": version - 1, "action": action})  # fmt: skip
