"""The embedded default's channel layer (game/sockets/memory_layer.py)."""

from __future__ import annotations

import asyncio
import multiprocessing
from typing import Any

import pytest

from game.sockets import events as layers
from game.sockets import memory_layer
from game.sockets.memory_layer import TableChannelLayer


def test_group_send_reaches_every_member_in_order() -> None:
    async def scenario() -> list[list[int]]:
        layer = TableChannelLayer()
        names = [await layer.new_channel() for _ in range(4)]
        for name in names:
            await layer.group_add("table_1", name)
        await layer.group_add("table_2", await layer.new_channel())
        for version in (1, 2, 3):
            await layer.group_send("table_1", {"type": "table.event", "version": version})
        got = []
        for name in names:
            got.append([(await layer.receive(name))["version"] for _ in range(3)])
        return got

    assert asyncio.run(scenario()) == [[1, 2, 3]] * 4


def test_expired_messages_are_still_swept(monkeypatch) -> None:
    monkeypatch.setattr(memory_layer, "SWEEP_EVERY_SECONDS", 0.0)

    async def scenario() -> bool:
        layer = TableChannelLayer(expiry=0)
        name = await layer.new_channel()
        await layer.send(name, {"type": "x"})
        await asyncio.sleep(0.01)
        layer._clean_expired()
        return name in layer.channels

    assert asyncio.run(scenario()) is False


def test_group_membership_does_not_expire_after_a_day() -> None:
    layer = TableChannelLayer()
    assert layer.group_expiry >= 10 * 365 * 86400


class RecordingLayer:
    """A channel layer that notes which event loop each send ran on."""

    def __init__(self) -> None:
        self.sent: list[tuple[asyncio.AbstractEventLoop, str, dict[str, Any]]] = []

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await asyncio.sleep(0.01)  # returns only once sent: the caller waits
        self.sent.append((asyncio.get_running_loop(), group, message))


def test_sync_senders_publish_on_one_kept_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Celery worker's sends (sync code, no server loop) share one loop for
    the process's life, so the pub/sub layer keeps its Redis connection."""
    layer = RecordingLayer()
    monkeypatch.setattr(layers, "get_channel_layer", lambda: layer)
    monkeypatch.setattr(layers, "_server_loop", None)
    for version in (1, 2, 3):
        layers.table_event(7, version)
        assert len(layer.sent) == version  # sent before send_to_table returned
    loops = {loop for loop, _, _ in layer.sent}
    assert len(loops) == 1 and next(iter(loops)).is_running()
    assert [(g, m["version"]) for _, g, m in layer.sent] == [("table_7", v) for v in (1, 2, 3)]


def _publish_in_child() -> None:
    done = asyncio.run_coroutine_threadsafe(asyncio.sleep(0, 42), layers._publishing_loop())
    raise SystemExit(0 if done.result(timeout=5) == 42 else 1)


def test_a_forked_worker_child_gets_a_publishing_loop_of_its_own() -> None:
    layers._publishing_loop()  # the parent's, whose thread the child does not inherit
    child = multiprocessing.get_context("fork").Process(target=_publish_in_child)
    child.start()
    child.join(timeout=20)
    assert child.exitcode == 0


def test_group_send_copies_the_message_once_and_skips_a_full_socket() -> None:
    async def scenario() -> tuple[list[dict[str, Any]], int]:
        layer = TableChannelLayer(capacity=1)
        names = [await layer.new_channel() for _ in range(3)]
        for name in names:
            await layer.group_add("table_1", name)
        await layer.send(names[2], {"type": "x"})  # this socket's queue is full
        message = {"type": "table.event", "version": 4, "info": {"seats": [1, 2]}}
        await layer.group_send("table_1", message)
        message["info"]["seats"].append(3)  # the sender's later change reaches no one
        got = [await layer.receive(name) for name in names[:2]]
        return got, layer.channels[names[2]].qsize()

    got, full = asyncio.run(scenario())
    assert got[0] == got[1] == {"type": "table.event", "version": 4, "info": {"seats": [1, 2]}}
    assert full == 1  # it still holds the earlier message only


def test_a_send_from_the_loop_reaches_the_in_memory_queues_at_once(monkeypatch) -> None:
    """A move made on the loop (SQLite) announces it before send_to_table
    returns: no task, no turn of the loop in between."""
    layer = TableChannelLayer()
    monkeypatch.setattr(layers, "get_channel_layer", lambda: layer)

    async def scenario() -> tuple[int, dict[str, Any]]:
        name = await layer.new_channel()
        await layer.group_add("table_9", name)
        tasks_before = len(asyncio.all_tasks())
        layers.table_event(9, 5, {"type": "bid", "seat": 0, "bid": 3}, {"seats": [1]})
        queued = layer.channels[name].qsize()
        assert len(asyncio.all_tasks()) == tasks_before
        return queued, await layer.receive(name)

    queued, got = asyncio.run(scenario())
    assert queued == 1
    assert got["version"] == 5 and got["info"] == {"seats": [1]}


def test_a_failed_send_from_the_loop_is_logged_not_raised(monkeypatch, caplog) -> None:
    layer = TableChannelLayer()
    monkeypatch.setattr(layers, "get_channel_layer", lambda: layer)

    async def scenario() -> None:
        await layer.group_add("table_9", await layer.new_channel())
        layers.send_to_table(9, {"type": "table.event", "version": 1, "info": lambda: None})

    asyncio.run(scenario())  # a lambda cannot be copied: the send fails
    assert "a group message to a table failed" in caplog.text


def test_direct_members_get_each_message_in_one_task_the_others_by_queue() -> None:
    """Table sockets take group messages straight from group_send (game.sockets.fanout):
    in order, one copy for all, a failing handler not stopping the others."""

    async def scenario() -> tuple[dict[str, list[int]], list[int], bool, int]:
        layer = TableChannelLayer()
        got: dict[str, list[int]] = {"a": [], "b": []}
        seen: list[dict[str, Any]] = []

        def handler(name: str, fail: bool = False) -> Any:
            async def handle(message: dict[str, Any]) -> None:
                seen.append(message)
                got[name].append(message["version"])
                if fail:
                    raise RuntimeError("this socket's handler fails")

            return handle

        direct = [await layer.new_channel() for _ in range(2)]
        queued = await layer.new_channel()
        for name in [*direct, queued]:
            await layer.group_add("table_3", name)
        layer.deliver_directly(direct[0], handler("a", fail=True))
        layer.deliver_directly(direct[1], handler("b"))
        for version in (1, 2, 3):
            await layer.group_send("table_3", {"type": "table.event", "version": version})
        await asyncio.sleep(0.01)
        by_queue = [(await layer.receive(queued))["version"] for _ in range(3)]
        one_copy = seen[0] is seen[1]
        layer.stop_delivering(direct[1])
        await layer.group_send("table_3", {"type": "table.event", "version": 4})
        await asyncio.sleep(0.01)
        return got, by_queue, one_copy, layer.channels[direct[1]].qsize()

    got, by_queue, one_copy, queued_after_stop = asyncio.run(scenario())
    assert got == {"a": [1, 2, 3, 4], "b": [1, 2, 3]}
    assert by_queue == [1, 2, 3]
    assert one_copy
    assert queued_after_stop == 1  # no longer direct: back to its queue
