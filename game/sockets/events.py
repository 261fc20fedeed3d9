"""The broadcast: group messages to a table's sockets, and the embedded default's layer.

One group message per event (docs/architecture.md): ``{"type": "table.event",
"version": N, "action": ..., "info": ...}`` after a move (the action and the
table's public info let a server process that did not commit it build its
sockets' frames without reading the database, ``game.sockets.frames``),
``table.changed`` after seating or status changes and ``table.chat`` for chat.
Each consumer turns an event into its own seat's view.
The production stack's layer is ``game.sockets.pubsub_layer``'s; the embedded
default's is ``game.sockets.memory_layer.TableChannelLayer``.

Sending from sync code: a Celery worker (no event loop anywhere) hands the
send to a publishing loop of its own, one per process and kept for the
process's life (``async_to_sync`` would run each send on a new event loop, and
the pub/sub layer would open a new Redis connection for each: a fifth of a
worker's CPU per move in ``bench_workers``). Inside the server process the
in-memory channel layer's queues belong to the server's event loop and are not
thread-safe, so a bot runner thread must hand the send to that loop: consumers
register the loop they run on (:func:`note_server_loop`) and
:func:`send_to_table` uses ``run_coroutine_threadsafe`` when that loop is
running in another thread. Called on the loop itself (where the moves of
both stacks are made) it hands the message to this process's table sockets at
once (``group_send_now`` of either layer); only the publishing to Redis starts
as a task.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from typing import Any

from channels.layers import get_channel_layer

log = logging.getLogger(__name__)

_loop_lock = threading.Lock()
_sending: set[asyncio.Task[None]] = set()  # sends started on the event loop, until done
_server_loop: asyncio.AbstractEventLoop | None = None


def group_name(table_pk: int) -> str:
    return f"table_{table_pk}"


def note_server_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Remember the event loop the consumers run on (called on each connect)."""
    global _server_loop
    with _loop_lock:
        _server_loop = loop


def _running_server_loop() -> asyncio.AbstractEventLoop | None:
    with _loop_lock:
        loop = _server_loop
    if loop is None or loop.is_closed() or not loop.is_running():
        return None
    return loop


def send_to_table(table_pk: int, message: dict[str, Any]) -> None:
    """Send one group message to every socket of the table (from sync code)."""
    send_to_group(group_name(table_pk), message)


def send_to_group(group: str, message: dict[str, Any]) -> None:
    """Send one group message to every member of ``group`` (from sync code): a
    table's sockets, or an external bot's (``botapi``)."""
    layer = get_channel_layer()
    if layer is None:
        return
    loop = _running_server_loop()
    try:
        current = asyncio.get_running_loop()
    except RuntimeError:
        current = None
    if current is not None:
        # On the event loop (the moves of both stacks are made there): never
        # block it. Both layers hand the message to this process's sockets now,
        # without a task and a turn of the loop; what is left (publishing to
        # Redis) runs as a task, which the loop holds only weakly: hold on.
        send_now = getattr(layer, "group_send_now", layer.group_send)
        try:
            rest = send_now(group, message)
        except Exception:
            log.exception("a group message to a table failed")
            return
        if rest is None:
            return
        task = current.create_task(rest)
        _sending.add(task)
        task.add_done_callback(_sending.discard)
        task.add_done_callback(_log_failure)
        return
    if loop is not None:
        # Hand over and go on: the sending thread is the one that serves every
        # socket's database calls, and must not wait for the busy event loop.
        # The loop runs the handed-over sends in the order they were made.
        future = asyncio.run_coroutine_threadsafe(layer.group_send(group, message), loop)
        future.add_done_callback(_log_failure)
    else:
        # Wait: a task is done only once its move is announced.
        publishing = asyncio.run_coroutine_threadsafe(
            layer.group_send(group, message), _publishing_loop()
        )
        publishing.result(timeout=PUBLISH_TIMEOUT_SECONDS)


PUBLISH_TIMEOUT_SECONDS = 10.0
_publisher: tuple[int, asyncio.AbstractEventLoop] | None = None


def _publishing_loop() -> asyncio.AbstractEventLoop:
    """This process's loop for sends from sync code (a thread of its own; made
    anew in a forked child, which inherits no threads)."""
    global _publisher
    with _loop_lock:
        if _publisher is None or _publisher[0] != os.getpid():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="spades-publisher", daemon=True).start()
            _publisher = (os.getpid(), loop)
        return _publisher[1]


def _log_failure(future: Any) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("a group message to a table failed", exc_info=future.exception())


def table_event(
    table_pk: int,
    version: int,
    action: dict[str, Any] | None = None,
    info: dict[str, Any] | None = None,
) -> None:
    # "table": a bot's socket is in the groups of several tables (botapi).
    message: dict[str, Any] = {"type": "table.event", "version": version, "table": table_pk}
    if action is not None and info is not None:
        message.update(action=action, info=info)
    send_to_table(table_pk, message)


class ChannelAnnouncer:
    """The master's announcer: a committed move, or a table's other change, as
    one group message to its table's sockets, on whichever channel layer is
    configured."""

    def announce(
        self, table_id: int, version: int, action: dict[str, Any], info: dict[str, Any]
    ) -> None:
        table_event(table_id, version, action, info)

    def changed(self, table_id: int) -> None:
        # "table": a bot's socket is in the groups of several tables (botapi).
        send_to_table(table_id, {"type": "table.changed", "table": table_id})
