"""A table's match is its log replayed; a small cache keeps recent committed states.

The cache is keyed by (table, version) and holds what a committed move left:
the match and what anyone may know of the table (:func:`table_info`).
It saves the replay on most moves, and lets a socket get the view of a
just-committed version without reading the database (``game.sockets.frames``), in
another server process too: there the move's group message carries the
action and the table's info, applied to the version before. It is only filled with committed states,
entries are never mutated (a move works on a copy of the match), and a miss
is always answered by replaying the log, so correctness never depends on it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from typing import Any

from game.engine import ActionError, IllegalAction, Match, Rules, action_from_dict
from game.errors import CorruptLog
from game.models import Action, Seat, Table
from game.sql.instances import dialect, quote
from game.sql.statements import Query, run_steps

CACHE_SIZE = 512
TAIL = 8  # a cached version this close below the one asked for is replayed forward


@dataclass(frozen=True)
class Committed:
    """A table as a committed move left it. ``info`` (:func:`table_info`)
    is None when only the match is known (a replay): then no frame is served
    from it."""

    match: Match
    info: dict[str, Any] | None = None


@dataclass(frozen=True)
class Rows:
    """A table's row and its seats as a move of this process read or left them,
    for the quick move
    (``game.moves.move``). Between moves only the version, the
    turn clock and the status change, and a change to any seat adds to
    ``table.seats_version``: the quick move's statement checks all three, so
    rows of an earlier version serve while the seats are unchanged. Never
    change them."""

    table: Table
    seats: Mapping[int, Seat]


def public_seat(seat: Seat | None, bots_as_players: bool) -> dict[str, Any] | None:
    return seat.to_public_dict(bots_as_players) if seat is not None else None


def table_info(table: Table, seats: Mapping[int, Seat]) -> dict[str, Any]:
    """What anyone at the table may know about it (never the seed or the invite token)."""
    deadline = None
    if (
        table.status == Table.Status.PLAYING
        and table.stand_in_bots
        and table.turn_started_at is not None
    ):
        deadline = (table.turn_started_at + timedelta(seconds=table.turn_seconds)).isoformat()
    return {
        "id": table.public_id,
        "status": table.status,
        "version": table.version,
        "host": table.host.get_username() if table.host_id and table.host else None,
        "seats": [public_seat(seats.get(p), table.bots_as_players) for p in range(4)],
        "turn_seconds": table.turn_seconds,
        "stand_in_bots": table.stand_in_bots,
        "turn_deadline": deadline,
        "rules": table.rules,
    }


_cache: OrderedDict[tuple[int, int], Committed] = OrderedDict()
_latest: dict[int, int] = {}  # the newest version of each table remembered here
_rows: OrderedDict[int, Rows] = OrderedDict()
_lock = threading.Lock()


def clear_cache() -> None:
    with _lock:
        _cache.clear()
        _latest.clear()
        _rows.clear()


def remember_rows(table_pk: int, rows: Rows) -> None:
    with _lock:
        _rows[table_pk] = rows
        _rows.move_to_end(table_pk)
        while len(_rows) > CACHE_SIZE:
            _rows.popitem(last=False)


def remembered_rows(table_pk: int) -> Rows | None:
    with _lock:
        return _rows.get(table_pk)


def remember(table_pk: int, entry: Committed) -> None:
    """Keep a committed state (replacing what was kept for that version)."""
    version = entry.match.version
    with _lock:
        _cache[(table_pk, version)] = entry
        _cache.move_to_end((table_pk, version))
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
        if len(_latest) > 8 * CACHE_SIZE:
            _latest.clear()  # a miss only means a database read
        if entry.info is not None and version > _latest.get(table_pk, -1):
            _latest[table_pk] = version


def cached(table_pk: int, version: int) -> Committed | None:
    """The kept state of ``table_pk`` at ``version``, or None."""
    with _lock:
        entry = _cache.get((table_pk, version))
        if entry is None:
            return None
        _cache.move_to_end((table_pk, version))
    return entry if entry.match.version == version else None


def latest_version(table_pk: int) -> int:
    """The newest version of the table this process has seen committed (-1: none)."""
    with _lock:
        return _latest.get(table_pk, -1)


def match_steps(table: Table, version: int) -> Generator[Query, Any, Match]:
    """:func:`load_match` as statements (see ``game.sql.statements.run_steps``): the cached
    match, or a cached version a few moves back with the log's tail replayed,
    or the whole log replayed."""
    entry = cached(table.pk, version)
    if entry is not None:
        return entry.match
    match = None
    for back in range(1, TAIL + 1):
        if version - back < 0:
            break
        entry = cached(table.pk, version - back)
        if entry is not None:
            match = entry.match.copy()
            break
    if match is None:
        match = Match(Rules.from_dict(table.rules), table.seed)
    logged = yield actions_query(table.pk, match.version, version)
    for number, data in logged:
        if number != match.version + 1:
            raise CorruptLog(f"table {table.pk}: action {match.version + 1} is missing")
        try:
            match.apply(action_from_dict(data))
        except (ActionError, IllegalAction) as e:
            raise CorruptLog(f"table {table.pk}: action {number} does not replay: {e}") from e
    if match.version != version:
        raise CorruptLog(f"table {table.pk}: the log stops at {match.version}, not {version}")
    remember(table.pk, Committed(match))
    return match


def load_match(table: Table, version: int | None = None) -> Match:
    """The table's match at ``version`` (default: the table's version).

    The result may be shared with other threads: never change it (use
    ``Match.copy``). Only call this for a version that is committed.
    """
    version = table.version if version is None else version
    entry = cached(table.pk, version)
    if entry is not None:
        return entry.match
    return run_steps(match_steps(table, version))


@cache
def _actions_sql() -> str:
    return (
        f"SELECT {quote('version')}, {quote('action')} FROM {quote(Action._meta.db_table)} "
        f"WHERE {quote('table_id')} = %s AND {quote('version')} > %s "
        f"AND {quote('version')} <= %s ORDER BY {quote('version')}"
    )


def actions_query(table_pk: int, after: int, upto: int) -> Query:
    """The log's (version, action dict) pairs with ``after < version <= upto``, in order."""
    return Query(_actions_sql(), [table_pk, after, upto], _read_actions)


def _read_actions(rowcount: int, fetched: list[tuple[Any, ...]]) -> list[tuple[int, Any]]:
    field = Action._meta.get_field("action")
    col = field.get_col("a")
    backend = dialect()
    converters = backend.ops.get_db_converters(col) + field.get_db_converters(backend)
    out = []
    for version, data in fetched:
        for convert in converters:
            data = convert(data, col, backend)
        out.append((version, data))
    return out
