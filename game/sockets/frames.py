"""The ``state`` frame: what one seat (or a spectator) may see of a table, as JSON text.

One builder serves every way a socket gets its frame: from this process's
cache of committed states (:func:`cached_state_frame`, no database access:
a consumer calls it on the event loop when a move's group event arrives);
for a move committed in another server process, from the event itself
(:func:`applied_state_frame`: its action applied to this process's state
of the version before, with the table's info the event carries); or from
the database (:func:`state_frame`, on connect, resync, a
``table.changed`` event or a cache miss). The part every seat sees alike is
built and encoded once per committed version; each socket adds its own
seat's part. What a seat may see of the game is decided by the engine's
``view_for``; the table's info never carries the seed or the invite token.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from game.engine import ActionError, IllegalAction, action_from_dict, private_part, view_for
from game.models import Table
from game.moves import matches
from game.moves.matches import Committed, table_info

_public: OrderedDict[tuple[int, int], tuple[Committed, str]] = OrderedDict()
_lock = threading.Lock()


def _encode(version: int, own: dict[str, Any], public: str) -> str:
    """The frame's text; ``public`` is a JSON object's members without braces."""
    mine = json.dumps(own)[1:-1]
    return f'{{"type": "state", "version": {version}, "view": {{{mine}, {public}}}}}'


def _frame(table_pk: int, entry: Committed, seat: int | None, keep: bool) -> tuple[int, str]:
    """(version, text) of a committed state for ``seat``; ``keep``: cache the shared part."""
    assert entry.info is not None
    version = entry.match.version
    key = (table_pk, version)
    with _lock:
        found = _public.get(key)
    if found is not None and found[0] is entry:
        public = found[1]
    else:
        # Alike for every seat: a spectator's view has it, without legal actions.
        public_part = view_for(entry.match, None).public_dict()
        shared = {"version": version, **public_part, "table": entry.info}
        public = json.dumps(shared)[1:-1]
        if keep:
            with _lock:
                _public[key] = (entry, public)
                while len(_public) > matches.CACHE_SIZE:
                    _public.popitem(last=False)
    return version, _encode(version, private_part(entry.match, seat), public)


def cached_state_frame(table_pk: int, seat: int | None, version: int) -> tuple[int, str] | None:
    """(version, text) of the newest state this process committed for the table,
    when that is ``version`` or later; None on a miss (the move was committed in
    another process, or the entry is gone): then read it with :func:`state_frame`."""
    version = max(version, matches.latest_version(table_pk))
    entry = matches.cached(table_pk, version)
    if entry is None or entry.info is None:
        return None
    return _frame(table_pk, entry, seat, keep=True)


def applied_state_frame(
    table_pk: int, seat: int | None, event: Mapping[str, Any]
) -> tuple[int, str] | None:
    """(version, text) of a move committed elsewhere, from its group message
    (``game.sockets.events.table_event``: the version, the action and the table's
    info) applied to this process's state of the version before; None when
    that state is not kept here or the event does not carry the move."""
    version, action, info = event.get("version"), event.get("action"), event.get("info")
    if not isinstance(version, int) or action is None or info is None:
        return None
    before = matches.cached(table_pk, version - 1)
    if before is None:
        return None
    match = before.match.copy()
    try:
        match.apply(action_from_dict(action))
    except (ActionError, IllegalAction):
        return None  # not the state the move was made on: read the database
    if match.version != version:
        return None
    entry = Committed(match, info)
    matches.remember(table_pk, entry)
    return _frame(table_pk, entry, seat, keep=True)


def state_frame(table_pk: int, seat: int | None) -> tuple[int, str]:
    """(version, text) of the table's state read from the database.

    Before the match starts the view holds only ``version``, ``seat`` and
    ``table``; afterwards every key of the engine's ``SeatView.to_dict()``
    too. What it reads is kept for the next socket (from the first move on:
    until then seats and status change without a new version).
    """
    table = Table.objects.select_related("host").get(pk=table_pk)
    seats = {s.position: s for s in table.seats.select_related("user")}
    never_started = table.status == Table.Status.ABANDONED and table.started_at is None
    if table.status == Table.Status.OPEN or never_started:
        public = json.dumps({"version": table.version, "table": table_info(table, seats)})
        return table.version, _encode(table.version, {"seat": seat}, public[1:-1])
    entry = Committed(matches.load_match(table), table_info(table, seats))
    keep = table.version > 0
    if keep:
        matches.remember(table.pk, entry)
    return _frame(table.pk, entry, seat, keep)
