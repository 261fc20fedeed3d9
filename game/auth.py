"""Channels' AuthMiddleware, with its database work where the consumers' goes.

Channels resolves ``scope["user"]`` (which loads the session) with
``database_sync_to_async``, which opens a database connection for every
socket's handshake and closes it again (``CONN_MAX_AGE`` is 0). Here the
same lookup goes through ``game.db.db_call``, so it reuses the connections
the consumers keep: the event loop's with SQLite, the bounded thread pool's
with PostgreSQL.
"""

from __future__ import annotations

from typing import Any

from channels.auth import AuthMiddleware, get_user
from channels.sessions import CookieMiddleware, SessionMiddleware

from game.db import db_call


class PooledAuthMiddleware(AuthMiddleware):
    async def resolve_scope(self, scope: dict[str, Any]) -> None:
        # ``get_user`` is a database_sync_to_async wrapper: call its plain function.
        scope["user"]._wrapped = await db_call(get_user.func)(scope)


def auth_stack(inner: Any) -> Any:
    """Cookies, the session and the user, as Channels' ``AuthMiddlewareStack``."""
    return CookieMiddleware(SessionMiddleware(PooledAuthMiddleware(inner)))
