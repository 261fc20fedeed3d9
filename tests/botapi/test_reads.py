"""The bot socket's reads tried again when the database refused them for a
moment (botapi/reads.py): a planted refusal, and the frame still arrives."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from asgiref.sync import sync_to_async
from django.db import IntegrityError, OperationalError

from botapi import consumer, reads
from tests.support.bot_protocol import bot_table, bot_token, connect_bot, frame_until
from tests.support.inline import InlineScheduler
from tests.support.sockets import close_sync_thread_connections  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def _refusing(func: Any, times: int, error: Exception) -> tuple[Any, list[int]]:
    """``func``, refused ``times`` times first."""
    calls = [0]

    def planted(*args: Any) -> Any:
        calls[0] += 1
        if calls[0] <= times:
            raise error
        return func(*args)

    return planted, calls


def test_which_refusals_pass() -> None:
    assert reads.is_transient(OperationalError("database table is locked: game_seat"))
    assert reads.is_transient(OperationalError("database is locked"))
    lost = OperationalError("server closed the connection unexpectedly")
    lost.__cause__ = psycopg.OperationalError("server closed the connection unexpectedly")
    assert reads.is_transient(lost)
    serial = OperationalError("could not serialize access")
    serial.__cause__ = psycopg.errors.SerializationFailure("could not serialize access")
    assert reads.is_transient(serial)
    assert not reads.is_transient(OperationalError("no such table: game_seat"))
    assert not reads.is_transient(IntegrityError("UNIQUE constraint failed"))
    assert not reads.is_transient(ValueError("database table is locked"))


async def test_a_seat_read_refused_for_a_moment_still_sends_seated(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = await sync_to_async(bot_token)()
    table = await sync_to_async(bot_table)("HHHX", {3: "randy"}, start=False)
    planted, calls = _refusing(consumer._seats_of, 2, OperationalError("database table is locked"))
    monkeypatch.setattr(consumer, "_seats_of", planted)
    sent: list[dict[str, Any]] = []
    comm = await connect_bot(token)
    await frame_until(comm, sent, "hello")
    await comm.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    seated = await frame_until(comm, sent, "seated")
    assert (seated["table"], seated["seats"]) == (table.public_id, [3])
    assert calls[0] == 3  # twice refused, the third read answered
    assert not [f for f in sent if f["type"] == "error"]
    await comm.disconnect()


async def test_a_table_read_refused_for_a_moment_still_sends_the_decision(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = await sync_to_async(bot_token)()
    await sync_to_async(bot_table)("XBBB", {0: "randy"})
    planted, calls = _refusing(consumer._load, 3, OperationalError("database table is locked"))
    monkeypatch.setattr(consumer, "_load", planted)
    sent: list[dict[str, Any]] = []
    comm = await connect_bot(token)
    await frame_until(comm, sent, "hello")
    await comm.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    assert (await frame_until(comm, sent, "decision"))["seat"] == 0
    assert calls[0] == 4
    await comm.disconnect()


async def test_a_refusal_that_lasts_is_given_up_and_reported(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = await sync_to_async(bot_token)()
    await sync_to_async(bot_table)("XBBB", {0: "randy"})
    planted, calls = _refusing(consumer._seats_of, 99, OperationalError("database is locked"))
    monkeypatch.setattr(consumer, "_seats_of", planted)
    sent: list[dict[str, Any]] = []
    comm = await connect_bot(token)
    await frame_until(comm, sent, "hello")
    await comm.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    assert (await frame_until(comm, sent, "error"))["code"] == "try_again"
    assert calls[0] == reads.ATTEMPTS
    # As the error says: once the database answers, ready again is taken.
    monkeypatch.undo()
    await comm.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    assert (await frame_until(comm, sent, "decision"))["seat"] == 0
    await comm.disconnect()


async def test_a_refusal_that_is_no_moments_is_not_tried_again(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = await sync_to_async(bot_token)()
    planted, calls = _refusing(consumer._seats_of, 99, OperationalError("no such table: x"))
    monkeypatch.setattr(consumer, "_seats_of", planted)
    sent: list[dict[str, Any]] = []
    comm = await connect_bot(token)
    await frame_until(comm, sent, "hello")
    await comm.send_json_to({"type": "ready", "protocol": "spades-bot/1"})
    assert (await frame_until(comm, sent, "error"))["code"] == "try_again"
    assert calls[0] == 1
    await comm.disconnect()
