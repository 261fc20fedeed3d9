"""Rate limits per player and per address, across all of their sockets and requests.

Each kind of request has a limit: at most ``count`` per player and
``per_address`` per client address in a window of ``seconds`` (fixed
windows: a burst at a window's edge may get up to twice through, never more).
A player is an account or a guest (by the id in their session); an
anonymous client counts only by its address. The address is the one Daphne
sees: behind a reverse proxy run Daphne with ``--proxy-headers`` so that it
is the player's, not the proxy's.

| kind | what counts | player | address | window |
|---|---|---|---|---|
| ``frames`` | every frame a player's sockets send | 20 | 100 | 1 s |
| ``chat`` | chat lines | 5 | 20 | 10 s |
| ``reactions`` | quick reactions at a table | 5 | 20 | 10 s |
| ``resync`` | full-state requests | 10 | 50 | 10 s |
| ``seat`` | seat commands on table pages | 30 | 120 | 60 s |
| ``tables`` | tables created ("Play now" or the form) | 10 | 30 | 600 s |

Open sockets are capped too: 8 per player and 40 per address
(:data:`MAX_SOCKETS`). A study's participant (a session bound to its table)
is counted as a player only (:func:`counted_address`): a lab session puts
every participant behind one address. The environment overrides the defaults:
``SPADES_LIMITS="chat=5/10/20,tables=10/600/30"`` (kind=count/seconds/
per-address, :func:`parse_limits`) and ``SPADES_MAX_SOCKETS="8/40"``;
``SPADES_RATE_LIMITS=0`` turns the limits off (``bench_server``: its
thousands of moves come from one address).

The counters live in Redis on the production stack, so that every server
process shares them, and in this process's memory in the embedded default
(one process): ``game.builder`` chooses (:func:`use_counters`, from
``REDIS_URL``). Should Redis fail, requests are let through (and
logged): the limits protect the site, they must not take it down.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

import redis
from django.conf import settings

from game.redis_clients import async_client, sync_client

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limit:
    count: int  # per player
    seconds: float
    per_address: int


DEFAULT_LIMITS = {
    "frames": Limit(20, 1.0, 100),
    # A bot's socket (botapi): a program playing many unpaced tables at once.
    "bot_frames": Limit(200, 1.0, 400),
    "chat": Limit(5, 10.0, 20),
    "reactions": Limit(5, 10.0, 20),
    "resync": Limit(10, 10.0, 50),
    "seat": Limit(30, 60.0, 120),
    "tables": Limit(10, 600.0, 30),
}
MAX_SOCKETS = (8, 40)  # open sockets per player, per address
SOCKET_COUNT_TTL = 3600  # seconds: a count a crashed process left behind fades
KEY_PREFIX = "spades:limit:"


def parse_limits(text: str) -> dict[str, Limit]:
    """``"chat=5/10/20,tables=10/600/30"``: the limits it names (ValueError if
    a kind is unknown or a number is not positive)."""
    out: dict[str, Limit] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        kind, _, numbers = item.partition("=")
        parts = numbers.split("/")
        if kind.strip() not in DEFAULT_LIMITS or len(parts) != 3:
            raise ValueError(
                f"SPADES_LIMITS: {item!r} is not kind=count/seconds/per_address "
                f"(kinds: {', '.join(DEFAULT_LIMITS)})"
            )
        try:
            count, seconds, per_address = int(parts[0]), float(parts[1]), int(parts[2])
        except ValueError:
            raise ValueError(f"SPADES_LIMITS: {item!r} needs numbers") from None
        if min(count, seconds, per_address) <= 0:
            raise ValueError(f"SPADES_LIMITS: {item!r} needs positive numbers")
        out[kind.strip()] = Limit(count, seconds, per_address)
    return out


def parse_max_sockets(text: str) -> tuple[int, int]:
    """``"8/40"``: open sockets per player and per address."""
    player, _, address = text.partition("/")
    try:
        pair = int(player), int(address)
    except ValueError:
        raise ValueError(f"SPADES_MAX_SOCKETS: {text!r} is not per_player/per_address") from None
    if min(pair) <= 0:
        raise ValueError(f"SPADES_MAX_SOCKETS: {text!r} needs positive numbers")
    return pair


def enabled() -> bool:
    return bool(getattr(settings, "SPADES_RATE_LIMITS", True))


def limit_of(kind: str) -> Limit:
    override = (getattr(settings, "SPADES_LIMITS", None) or {}).get(kind)
    if override is None:
        return DEFAULT_LIMITS[kind]
    return override if isinstance(override, Limit) else Limit(*override)


def max_sockets() -> tuple[int, int]:
    found = getattr(settings, "SPADES_MAX_SOCKETS", None)
    return tuple(found) if found is not None else MAX_SOCKETS  # type: ignore[return-value]


def player_key(user: Any, guest_id: str) -> str:
    """Whom a limit counts: an account, a guest, or '' (anonymous: the address only)."""
    if user is not None and getattr(user, "is_authenticated", False):
        return f"u{user.pk}"
    return f"g{guest_id}" if guest_id else ""


def counted_address(address: str, player: str, *, bound: bool) -> str:
    """The address a player's limits count, '' for none: a player the site
    bound to one table (a study's participant) is counted as a player only.
    In a lab session every participant sits behind one address, and the
    study caps its own numbers (places per condition, ``studies.intake``)."""
    return "" if bound and player else address


def _keys(kind: str, player: str, address: str, window: int) -> list[tuple[str, str]]:
    """(key, which limit) for the player (if known) and the address (unless
    '': :func:`counted_address`)."""
    keys = []
    if address or not player:
        keys.append((f"{KEY_PREFIX}{kind}:a:{address}:{window}", "address"))
    if player:
        keys.append((f"{KEY_PREFIX}{kind}:p:{player}:{window}", "player"))
    return keys


def _within(limit: Limit, counts: list[tuple[int, str]]) -> bool:
    return all(n <= (limit.count if who == "player" else limit.per_address) for n, who in counts)


# ----- where the counts live ---------------------------------------------------------


class Counters(Protocol):
    """This process's memory or the shared Redis (``game.builder`` chooses)."""

    def new_window(self, kind: str, window: int) -> None:
        """``kind`` is counted in ``window`` now: forget its past windows' counts."""
        ...

    def add(self, keys: list[str], ttl: float, by: int = 1) -> list[int]:
        """Add ``by`` to each key (kept ``ttl`` seconds): their counts now."""
        ...

    async def add_on_loop(self, keys: list[str], ttl: float, by: int = 1) -> list[int]:
        """:meth:`add` without blocking the event loop."""
        ...


_counts: dict[str, int] = {}
_lock = threading.Lock()
_swept_window: dict[str, int] = {}


class MemoryCounters:
    """The embedded default's: one process, no I/O (the window sweep forgets)."""

    def new_window(self, kind: str, window: int) -> None:
        with _lock:
            if _swept_window.get(kind) == window:
                return
            _swept_window[kind] = window
            stale = [k for k in _counts if k.startswith(f"{KEY_PREFIX}{kind}:")]
            for k in stale:
                if not k.endswith(f":{window}"):
                    del _counts[k]

    def add(self, keys: list[str], ttl: float, by: int = 1) -> list[int]:
        counts = []
        with _lock:
            for k in keys:
                _counts[k] = _counts.get(k, 0) + by
                counts.append(_counts[k])
        return counts

    async def add_on_loop(self, keys: list[str], ttl: float, by: int = 1) -> list[int]:
        return self.add(keys, ttl, by)


class RedisCounters:
    """The production stack's: every server process counts in the same keys,
    which expire by themselves."""

    def new_window(self, kind: str, window: int) -> None:
        pass

    def add(self, keys: list[str], ttl: float, by: int = 1) -> list[int]:
        pipe = sync_client().pipeline(transaction=False)
        _pipeline_incr(pipe, keys, ttl, by)
        return list(pipe.execute()[::2])

    async def add_on_loop(self, keys: list[str], ttl: float, by: int = 1) -> list[int]:
        pipe = async_client().pipeline(transaction=False)
        _pipeline_incr(pipe, keys, ttl, by)
        return list((await pipe.execute())[::2])


def _pipeline_incr(pipe: Any, keys: list[str], ttl: float, by: int) -> None:
    for k in keys:
        pipe.incrby(k, by)
        pipe.expire(k, max(1, int(ttl) + 1))


_counters: Counters = MemoryCounters()


def use_counters(counters: Counters) -> None:
    """The builder's: where the counts live from now on."""
    global _counters
    _counters = counters


def reset() -> None:
    """Forget every count of this process (tests)."""
    with _lock:
        _counts.clear()
        _swept_window.clear()


# ----- the checks ----------------------------------------------------------------------


def _counted(kind: str, player: str, address: str) -> tuple[Limit, list[tuple[str, str]]]:
    """``kind``'s limit and the keys of this request's window, past windows forgotten."""
    limit = limit_of(kind)
    window = int(time.time() // limit.seconds)
    _counters.new_window(kind, window)
    return limit, _keys(kind, player, address, window)


def _unchecked(kind: str, error: Exception) -> bool:
    # The limits protect the site: Redis failing must not take it down.
    log.warning("rate limit %s not checked (Redis: %r)", kind, error)
    return True


def hit(kind: str, player: str, address: str) -> bool:
    """Count one ``kind`` request; False if it is over a limit (then refuse it)."""
    if not enabled():
        return True
    limit, keys = _counted(kind, player, address)
    try:
        counts = _counters.add([k for k, _ in keys], limit.seconds)
    except redis.RedisError as e:
        return _unchecked(kind, e)
    return _within(limit, list(zip(counts, (who for _, who in keys), strict=True)))


async def hit_async(kind: str, player: str, address: str) -> bool:
    """:func:`hit` for the event loop (no blocking call on it)."""
    if not enabled():
        return True
    limit, keys = _counted(kind, player, address)
    try:
        counts = await _counters.add_on_loop([k for k, _ in keys], limit.seconds)
    except redis.RedisError as e:
        return _unchecked(kind, e)
    return _within(limit, list(zip(counts, (who for _, who in keys), strict=True)))


def _socket_keys(player: str, address: str) -> list[tuple[str, str]]:
    keys = [(f"{KEY_PREFIX}sockets:a:{address}", "address")] if address or not player else []
    if player:
        keys.append((f"{KEY_PREFIX}sockets:p:{player}", "player"))
    return keys


async def open_socket(player: str, address: str) -> bool:
    """Count an opening socket; False (and not counted) if the player or the
    address already has as many open as allowed. Pair a True with
    :func:`close_socket`."""
    if not enabled():
        return True
    per_player, per_address = max_sockets()
    keys = _socket_keys(player, address)
    names = [k for k, _ in keys]
    counts = await _socket_incr(names, 1)
    if counts is None:
        return True
    cap = {"player": per_player, "address": per_address}
    if all(n <= cap[who] for n, (_, who) in zip(counts, keys, strict=True)):
        return True
    await _socket_incr(names, -1)
    return False


async def close_socket(player: str, address: str) -> None:
    if enabled():
        await _socket_incr([k for k, _ in _socket_keys(player, address)], -1)


async def _socket_incr(keys: list[str], by: int) -> list[int] | None:
    try:
        return await _counters.add_on_loop(keys, SOCKET_COUNT_TTL, by)
    except redis.RedisError as e:
        log.warning("socket count not kept (Redis: %r)", e)
        return None
