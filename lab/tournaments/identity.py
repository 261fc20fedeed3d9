"""What decides a research run's games, as a checkable fingerprint.

A game of a tournament or of the league is a function of its seed and of the
code that plays it: the commit, the bots' and the engine's sources as they
are on disk (uncommitted changes included), the bots' data files (weights,
tables) and the bot settings read from the environment (a search's playouts
or samples). A Celery research task carries the fingerprint of the machine
that sent it; a worker whose own differs refuses the task
(``lab.tournaments.celery_jobs``), since its games could differ.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parents[2]
# The code a game runs through: its sources are hashed as they are on disk.
CODE_DIRS = ("bots", "game/engine", "lab/tournaments")
DATA_DIR = "bots/data"
# Every environment variable a bot reads (tests/lab/test_celery_runs.py checks
# that bots/ reads no other): a worker with other playouts plays other games.
BOT_SETTINGS = (
    "SPADES_PIMC_SAMPLES",
    "SPADES_SIM_DEALS",
    "SPADES_SIM_PLAYOUT",
    "SPADES_UCT_BUDGET",
    "SPADES_UCT_ITERATIONS",
)


def _commit() -> str:
    """The checkout's commit; SPADES_COMMIT on a machine with the code but no git."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=BASE_DIR, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return os.environ.get("SPADES_COMMIT", "")


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(path.relative_to(BASE_DIR).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


@cache
def code_identity() -> dict[str, Any]:
    """The fingerprint of this checkout's code and data (computed once a process)."""
    sources = sorted(p for d in CODE_DIRS for p in (BASE_DIR / d).rglob("*.py"))
    data = sorted(p for p in (BASE_DIR / DATA_DIR).iterdir() if p.is_file())
    return {
        "commit": _commit(),
        "code": _digest(sources),
        "weights": {p.name: _digest([p]) for p in data},
    }


def identity() -> dict[str, Any]:
    """This process's fingerprint: its code and data, and its bot settings."""
    settings = {k: os.environ[k] for k in BOT_SETTINGS if os.environ.get(k)}
    return {**code_identity(), "settings": settings}


def differences(theirs: dict[str, Any], mine: dict[str, Any]) -> list[str]:
    """What differs between two fingerprints, readable ("commit abc != def")."""
    out = []
    for key in sorted(set(theirs) | set(mine)):
        a, b = theirs.get(key), mine.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{key} {k}: {a.get(k)!r} != {b.get(k)!r}"
                    for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]  # fmt: skip
        else:
            out.append(f"{key}: {a!r} != {b!r}")
    return out
