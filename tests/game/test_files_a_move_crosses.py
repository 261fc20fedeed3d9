"""The files a move crosses, counted by running one: docs/architecture.md's lists cannot drift.

A move is traced (``sys.setprofile``: every Python function that runs) from
the consumer's ``on_act`` (a player's move) or the bot driver's
``take_turn`` (a bot's, as its Celery task or the embedded scheduler runs
it) until it is announced. Counted: the server's own files. Named apart:
the guards every frame passes first (``limits``, ``client_frames``), the
counters that time it for ``/metrics`` (``observe``), the
libraries below the server (the engine, the bots, the model definitions,
the SQL toolkit ``game/sql/``),
and the broadcast's delivery to each socket, which every group message
shares (the layer, ``memory_layer`` or ``pubsub_layer``; ``fanout``, ``frames``,
``socket_writes``).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async

from game.driver import bot_turns
from game.engine import view_for
from game.moves import matches
from tests.support import ROOT
from tests.support.helpers import make_table
from tests.support.inline import InlineScheduler

SERVER = ("game", "lobby", "spadesite")
# Checks made before a move, which change nothing of it: a frame's rate limits
# and fields, a bot task's count of starts (and whatever they call).
GUARDS = {"game/sockets/limits.py", "game/sockets/client_frames.py", "game/driver/redelivery.py"}
LIBRARIES = {"game/models.py"}  # and game/engine/, bots/
# The SQL toolkit below the move path, the ratings and the research code: a
# statement as a value and its runner, knowing no move (as the engine knows no
# database), counted apart like the models.
TOOLKIT = "game/sql/"
# What only measures a move for /metrics (a counter and a clock around it).
INSTRUMENTS = {"game/observe.py"}
DELIVERY = {
    "game/sockets/fanout.py", "game/sockets/frames.py", "game/sockets/memory_layer.py",
    "game/sockets/pubsub_layer.py", "game/sockets/socket_writes.py",
}  # fmt: skip
EMBEDDED_DELIVERY = {
    "game/sockets/memory_layer.py", "game/sockets/fanout.py", "game/sockets/frames.py"
}  # fmt: skip
MOST_FILES = 7

# The lists docs/architecture.md gives, checked against the traces below.
HUMAN_QUICK_SQLITE = {
    "game/sockets/consumers.py", "game/master.py", "game/moves/stores/sqlite.py",
    "game/moves/move.py", "game/moves/rows.py", "game/moves/matches.py", "game/sockets/events.py",
}  # fmt: skip
BOT_QUICK_SQLITE = {
    "game/driver/bot_turns.py", "game/master.py", "game/moves/stores/sqlite.py",
    "game/moves/move.py", "game/moves/rows.py", "game/moves/matches.py", "game/sockets/events.py",
}  # fmt: skip

pytestmark = pytest.mark.django_db(transaction=True)


def delivery_files(paths: set[str]) -> set[str]:
    """The delivery's files among ``paths``."""
    return {p for p in _relative(paths) if p in DELIVERY}


def _relative(paths: set[str]) -> set[str]:
    out = set()
    for path in paths:
        try:
            out.add(Path(path).resolve().relative_to(ROOT).as_posix())
        except ValueError:
            continue
    return out


def server_files(paths: set[str]) -> set[str]:
    out = set()
    for path in paths:
        try:
            name = Path(path).resolve().relative_to(ROOT).as_posix()
        except ValueError:
            continue  # a library's
        if not name.startswith(tuple(f"{p}/" for p in SERVER)) or name.startswith(
            ("game/engine/", TOOLKIT)
        ):
            continue
        if name in LIBRARIES | DELIVERY | INSTRUMENTS or "/management/" in name:
            continue
        out.add(name)
    return out


def in_guard(frame: Any) -> bool:
    """Is this frame a guard's, or called by one?"""
    while frame is not None:
        if frame.f_code.co_filename.endswith(GUARD_ENDINGS):
            return True
        frame = frame.f_back
    return False


GUARD_ENDINGS = tuple(GUARDS)


@contextmanager
def traced() -> Iterator[set[str]]:
    """The files of every Python function this thread runs meanwhile, the
    guards' and those they call aside."""
    seen: set[str] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and not in_guard(frame):
            seen.add(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)


def to_act(table: Any) -> tuple[int, Any, int]:
    table.refresh_from_db()
    match = matches.load_match(table)
    seat = match.round.to_act
    return seat, view_for(match, seat).legal_actions, table.version


async def test_a_players_move_crosses_at_most_seven_server_files(live: InlineScheduler) -> None:
    from tests.support.sockets import connect

    table = await database_sync_to_async(make_table)("HHHH")
    rng = random.Random(3)
    crossed: list[set[str]] = []
    # A process's first move of a table takes the full path; the second builds
    # the quick move's statements (cached for the process); the third is the
    # move every later one is.
    for _ in range(3):
        seat, legal, version = await database_sync_to_async(to_act)(table)
        comm, _ = await connect(table, f"g{seat}")
        act = {"type": "act", "action": _as_frame(rng.choice(legal)), "version": version}
        with traced() as seen:
            await comm.send_to(text_data=json.dumps(act))
            frame = await comm.receive_json_from(timeout=5)
        assert frame["type"] == "state" and frame["version"] == version + 1
        crossed.append(server_files(seen))
        await comm.disconnect()
        delivered = delivery_files(seen)
    full, quick = crossed[0], crossed[-1]
    assert quick == HUMAN_QUICK_SQLITE, " ".join(sorted(quick))
    # On the embedded layer the group message reaches the sockets through these
    # (Redis adds pubsub_layer.py, Daphne socket_writes.py: docs/architecture.md).
    assert delivered == EMBEDDED_DELIVERY, " ".join(sorted(delivered))
    assert len(quick) <= MOST_FILES
    assert "game/moves/stores/django.py" in full  # the full path, once


def test_a_bots_move_crosses_at_most_seven_server_files(
    live: InlineScheduler, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "turn", lambda plan: None)  # the test runs the bot's turns
    table = make_table("HBHH")
    rng = random.Random(5)
    crossed = []
    for _ in range(12):
        seat, legal, version = to_act(table)
        if seat != 1:
            _human(table, seat, rng.choice(legal), version)
            continue
        with traced() as seen:
            moved = bot_turns.take_turn(table.pk, 1, version)
        assert moved == bot_turns.MOVED
        crossed.append(server_files(seen))
    assert crossed, "the bot never moved"
    quick = crossed[-1]
    assert quick == BOT_QUICK_SQLITE, " ".join(sorted(quick))
    assert len(quick) <= MOST_FILES


def _human(table: Any, seat: int, action: Any, version: int) -> None:
    from game import master

    master.submit(table.pk, seat, action, version)


def _as_frame(action: Any) -> dict[str, Any]:
    from game.engine import action_to_dict

    data = action_to_dict(action)
    data.pop("seat", None)
    return data
