"""The latest bidding league for the staff dashboard: the JSON file ``manage.py
league`` writes beside this module (``league.json``; its page is
``docs/league.md``), committed with them; ``SPADES_LEAGUE_FILE`` to read
another. A file and not a model: the league runs in ``bots/`` without the
database, and the table is an artefact of a commit, reproduced by its seed,
like the page it goes with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings


def league_file() -> Path:
    path = getattr(settings, "SPADES_LEAGUE_FILE", None)
    return Path(path) if path else Path(__file__).with_name("league.json")


def latest() -> dict[str, Any] | None:
    """The league's summary, or None when there is none (or it cannot be read)."""
    try:
        data = json.loads(league_file().read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("bidders"), list):
        return None
    short = [
        f"{me} - {them}: {c['games']}"
        for me, row in sorted(data.get("cross", {}).items())
        for them, c in sorted(row.items())
        if me < them and c.get("games", 0) < data["config"].get("games_per_pair", 0)
    ]
    return {**data, "short_pairs": short}
