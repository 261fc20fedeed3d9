"""Who watches a table: its spectators' open sockets, across server processes.

A spectator's socket joins when it opens and leaves when it closes; every
ping (a minute apart, ``table.js``) marks it seen again. An entry not seen for
:data:`STALE_SECONDS` is dropped when the list is next read, so a server
process that died without closing its sockets leaves no watcher behind for
long. The entries live in a Redis sorted set per table (score: last seen)
on the production stack, in this process's memory in the embedded default:
``game.builder`` chooses (:func:`use_lists`, from ``REDIS_URL``). Redis
failing costs the list, never the socket: the calls then answer with no names.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Protocol

import redis

from game.redis_clients import async_client

log = logging.getLogger(__name__)

STALE_SECONDS = 150.0  # two and a half ping intervals
KEY_PREFIX = "spades:watchers:"

# table pk -> socket's channel name -> (name, last seen)
_memory: dict[int, dict[str, tuple[str, float]]] = {}
_lock = threading.Lock()


class Lists(Protocol):
    """Where the tables' watchers are listed (``game.builder`` chooses)."""

    async def seen(self, table_pk: int, channel: str, name: str, now: float) -> list[str]: ...

    async def gone(self, table_pk: int, channel: str, name: str, now: float) -> list[str]: ...

    async def names(self, table_pk: int, now: float) -> list[str]: ...


def _member(channel: str, name: str) -> str:
    return json.dumps([channel, name])


def _memory_names(table_pk: int, now: float) -> list[str]:
    entries = _memory.get(table_pk, {})
    for channel in [c for c, (_, seen) in entries.items() if now - seen > STALE_SECONDS]:
        del entries[channel]
    return sorted(name for name, _ in entries.values())


class MemoryLists:
    """The embedded default's: this process's sockets are all the table's."""

    async def seen(self, table_pk: int, channel: str, name: str, now: float) -> list[str]:
        with _lock:
            _memory.setdefault(table_pk, {})[channel] = (name, now)
            return _memory_names(table_pk, now)

    async def gone(self, table_pk: int, channel: str, name: str, now: float) -> list[str]:
        with _lock:
            _memory.get(table_pk, {}).pop(channel, None)
            names = _memory_names(table_pk, now)
            if not _memory.get(table_pk):
                _memory.pop(table_pk, None)
            return names

    async def names(self, table_pk: int, now: float) -> list[str]:
        with _lock:
            return _memory_names(table_pk, now)


async def _redis_names(key: str, now: float) -> list[str]:
    client = async_client()
    await client.zremrangebyscore(key, "-inf", now - STALE_SECONDS)
    members = await client.zrange(key, 0, -1)
    return sorted(json.loads(m)[1] for m in members)


class RedisLists:
    """The production stack's: one sorted set per table that every server process shares."""

    async def seen(self, table_pk: int, channel: str, name: str, now: float) -> list[str]:
        key = f"{KEY_PREFIX}{table_pk}"
        try:
            client = async_client()
            await client.zadd(key, {_member(channel, name): now})
            await client.expire(key, int(STALE_SECONDS * 2))
            return await _redis_names(key, now)
        except redis.RedisError as e:
            log.warning("watchers of table %s not recorded (Redis: %r)", table_pk, e)
            return []

    async def gone(self, table_pk: int, channel: str, name: str, now: float) -> list[str]:
        key = f"{KEY_PREFIX}{table_pk}"
        try:
            await async_client().zrem(key, _member(channel, name))
            return await _redis_names(key, now)
        except redis.RedisError as e:
            log.warning("watchers of table %s not updated (Redis: %r)", table_pk, e)
            return []

    async def names(self, table_pk: int, now: float) -> list[str]:
        try:
            return await _redis_names(f"{KEY_PREFIX}{table_pk}", now)
        except redis.RedisError as e:
            log.warning("watchers of table %s not read (Redis: %r)", table_pk, e)
            return []


_lists: Lists = MemoryLists()


def use_lists(lists: Lists) -> None:
    """The builder's: where the watchers are listed from now on."""
    global _lists
    _lists = lists


async def seen(table_pk: int, channel: str, name: str) -> list[str]:
    """This spectator's socket is open (just now or still): the table's watchers."""
    return await _lists.seen(table_pk, channel, name, time.time())


async def gone(table_pk: int, channel: str, name: str) -> list[str]:
    """This spectator's socket closed: the table's watchers left."""
    return await _lists.gone(table_pk, channel, name, time.time())


async def names(table_pk: int) -> list[str]:
    """The table's watchers' names (an empty name: a spectator who chose none)."""
    return await _lists.names(table_pk, time.time())


def reset() -> None:
    """Forget this process's watchers (tests)."""
    with _lock:
        _memory.clear()
