"""The websocket's session and user: Channels' middleware, cheaper per socket and per frame.

Channels resolves ``scope["user"]`` (which loads the session) with
``database_sync_to_async``, which opens a database connection for every
socket's handshake and closes it again (``CONN_MAX_AGE`` is 0). Here the
same lookup goes through ``game.moves.db.db_call``, so it reuses the connections
the consumers keep: the event loop's with SQLite, the bounded thread pool's
with PostgreSQL.

Channels' ``SessionMiddleware`` also wraps ``send`` to save the session and
set its cookie on an HTTP response's start, which a websocket never sends:
for a table socket the wrapper only checked the session at every frame sent
(a twentieth of a move's CPU in ``bench_server``, four frames a move).
"""

from __future__ import annotations

from typing import Any

from channels.auth import AuthMiddleware, get_user
from channels.sessions import CookieMiddleware, InstanceSessionWrapper, SessionMiddleware

from game.moves.db import db_call


class PooledAuthMiddleware(AuthMiddleware):
    async def resolve_scope(self, scope: dict[str, Any]) -> None:
        # ``get_user`` is a database_sync_to_async wrapper: call its plain function.
        scope["user"]._wrapped = await db_call(get_user.func)(scope)


class SocketSessionMiddleware(SessionMiddleware):
    """The session in the scope, and ``send`` left as it is (websockets only:
    a socket that changed the session would save it itself; ours only read it)."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        wrapper = InstanceSessionWrapper(scope, send)
        await wrapper.resolve_session()
        return await self.inner(wrapper.scope, receive, send)


def auth_stack(inner: Any) -> Any:
    """Cookies, the session and the user for the websockets, as Channels'
    ``AuthMiddlewareStack``."""
    return CookieMiddleware(SocketSessionMiddleware(PooledAuthMiddleware(inner)))
