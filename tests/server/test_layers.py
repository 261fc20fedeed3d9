"""The embedded default's channel layer (game/events.py)."""

from __future__ import annotations

import asyncio

from game import events as layers
from game.events import TableChannelLayer


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
    monkeypatch.setattr(layers, "SWEEP_EVERY_SECONDS", 0.0)

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
