"""Who a connection is: a signed-in user, a guest, or nobody (a spectator).

A guest is a random id kept in the Django session (``guest_id``) with the
name they chose (``guest_name``). The lobby will offer a form for the name;
:func:`ensure_guest` is what it calls. The id is never shown to anyone else:
it is what proves, on the websocket, that this browser holds the seat.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

GUEST_ID_KEY = "guest_id"
GUEST_NAME_KEY = "guest_name"
GUEST_NAME_MAX = 40
# {table public id: URL}: where the player goes when that table's match is
# over, instead of a rematch (a study's next page, set by the study).
AFTER_MATCH_KEY = "after_match"
# What happens to the session's player if they stay away, by table public id
# (a study's rule, set by the study): the table page says it when they are away.
AWAY_NOTE_KEY = "away_note"
# The public id of the one table this session may play at (a study
# participant's, set by the study): every other table's page, seats and
# socket, and new tables, are refused it (``lobby``), with BOUND_MESSAGE.
BOUND_TABLE_KEY = "bound_table"
BOUND_MESSAGE = (
    "You are taking part in a study: this browser plays at your study table only, "
    "and cannot open or take another table."
)
# The tables whose invite (share) link this browser opened: the lobby lets it
# see a private table, and the replays its finished rounds.
INVITES_KEY = "invited_tables"


def clean_guest_name(name: str) -> str:
    """Collapse whitespace and trim to the allowed length ('' if nothing is left)."""
    return " ".join(str(name).split())[:GUEST_NAME_MAX]


def ensure_guest(session: Any, name: str | None = None) -> str:
    """The session's guest id, made if missing; sets the guest name when given."""
    guest_id = session.get(GUEST_ID_KEY)
    if not guest_id:
        guest_id = secrets.token_urlsafe(18)
        session[GUEST_ID_KEY] = guest_id
    if name is not None:
        session[GUEST_NAME_KEY] = clean_guest_name(name)
    return str(guest_id)


def after_match_url(session: Mapping[str, Any] | None, public_id: str) -> str:
    """Where the session's player goes after this table's match ('': the lobby's way)."""
    if session is None:
        return ""
    return str((session.get(AFTER_MATCH_KEY) or {}).get(public_id) or "")


def away_note(session: Mapping[str, Any] | None, public_id: str) -> str:
    """What the flow that seated the session says of staying away ('': nothing)."""
    if session is None:
        return ""
    return str((session.get(AWAY_NOTE_KEY) or {}).get(public_id) or "")


def bound_table(session: Mapping[str, Any] | None) -> str:
    """The public id of the one table the session may play at ('': any)."""
    if session is None:
        return ""
    return str(session.get(BOUND_TABLE_KEY) or "")


def bound_elsewhere(session: Mapping[str, Any] | None, public_id: str = "") -> bool:
    """Whether the session is bound to a table other than ``public_id`` ('': a new one)."""
    bound = bound_table(session)
    return bool(bound) and bound != public_id


def guest_of(session: Mapping[str, Any] | None) -> tuple[str, str]:
    """(guest id, guest name) from a session; empty strings when there is none."""
    if session is None:
        return "", ""
    return str(session.get(GUEST_ID_KEY) or ""), str(session.get(GUEST_NAME_KEY) or "")
