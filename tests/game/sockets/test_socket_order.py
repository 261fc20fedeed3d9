"""A table socket never sends an older state after a newer one, even when a
group message (delivered straight to it, game.sockets.fanout) overtakes its own
database read."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from game.sockets import consumers
from game.sockets.consumers import TableConsumer


def socket(last_version: int) -> tuple[TableConsumer, list[str]]:
    sent: list[str] = []
    consumer = TableConsumer()
    consumer.table_pk, consumer.seat, consumer.last_version = 1, 0, last_version

    async def send(text_data: str | None = None, **kwargs: Any) -> None:
        sent.append(str(text_data))

    consumer.send = send  # type: ignore[method-assign]
    return consumer, sent


def reads(monkeypatch: pytest.MonkeyPatch, version: int, gate: asyncio.Event | None = None) -> None:
    """The state the socket reads from the database: ``version`` (after ``gate``)."""

    def db_call(func: Any) -> Any:
        async def call(*args: Any) -> tuple[int, str]:
            if gate is not None:
                await gate.wait()
            return version, f"v{version}"

        return call

    monkeypatch.setattr(consumers, "db_call", db_call)


@pytest.mark.parametrize(
    ("read", "force", "sent_after"),
    [(4, True, []), (5, True, ["v5"]), (5, False, []), (6, False, ["v6"]), (6, True, ["v6"])],
)
def test_what_a_state_read_sends(monkeypatch, read: int, force: bool, sent_after: list) -> None:
    consumer, sent = socket(last_version=5)
    reads(monkeypatch, read)
    asyncio.run(consumer.send_state(force=force))
    assert sent == sent_after
    assert consumer.last_version == max(5, read)


def test_a_move_that_overtakes_a_resync_read_is_not_undone(monkeypatch) -> None:
    consumer, sent = socket(last_version=5)
    gate = asyncio.Event()
    reads(monkeypatch, 5, gate)  # the resync reads version 5, slowly
    cached = lambda table, seat, version: (version, f"v{version}")  # noqa: E731
    monkeypatch.setattr(consumers.frames, "cached_state_frame", cached)

    async def scenario() -> None:
        resync = asyncio.create_task(consumer.send_state(force=True))
        await asyncio.sleep(0)  # the read is under way
        await consumer.table_event({"type": "table.event", "version": 6})
        gate.set()
        await resync

    asyncio.run(scenario())
    assert sent == ["v6"]
    assert consumer.last_version == 6
