"""Who may open a table's websocket: the same rule as the table page.

A public table may be watched by anyone; a private one only by its host,
its seated players and the browsers that opened its invite link
(``lobby.players.may_see``). :class:`TableAccess` wraps the websocket
routes (``spadesite/asgi.py``, inside the session and auth middleware) and
refuses any other handshake before the consumer runs: the socket is closed
with code :data:`CLOSE_PRIVATE` before it is accepted (Daphne answers the
handshake with HTTP 403; an ASGI test client sees the code).
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import AnonymousUser

from game import identity
from game.models import Table
from game.moves.db import db_call
from lobby.players import listing_of, may_see, player_of

CLOSE_PRIVATE = 4403
TABLE_PATH = re.compile(r"^/ws/table/(?P<table_id>[^/]+)/$")


class SocketRequest:
    """What ``lobby.players`` reads of a request (its user and session), from a socket."""

    def __init__(self, scope: dict[str, Any]) -> None:
        self.user = scope.get("user") or AnonymousUser()
        self.session = scope.get("session") or {}


def may_watch(scope: dict[str, Any], public_id: str) -> bool:
    """May this socket watch the table? An unknown table passes (the consumer says 4404);
    a session bound to another table (a study participant's) may watch none but its own."""
    if identity.bound_elsewhere(scope.get("session"), public_id):
        return False
    table = Table.objects.filter(public_id=public_id).first()
    if table is None:
        return True
    listing = listing_of(table)
    if not listing.private:
        return True
    request: Any = SocketRequest(scope)
    return may_see(request, table, listing, player_of(request))


class TableAccess:
    """ASGI middleware: refuse the handshake of a socket that may not watch its table."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        found = TABLE_PATH.match(scope.get("path", ""))
        if (
            scope["type"] == "websocket"
            and found is not None
            and not await db_call(may_watch)(scope, found["table_id"])
        ):
            message = await receive()
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.close", "code": CLOSE_PRIVATE})
            return None
        return await self.inner(scope, receive, send)
