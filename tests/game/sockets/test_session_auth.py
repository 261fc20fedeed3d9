"""The websocket's session and user middleware (game/sockets/auth.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore

from game.sockets.auth import auth_stack

pytestmark = pytest.mark.django_db(transaction=True)


async def test_the_socket_gets_its_session_and_user_and_sends_unwrapped() -> None:
    store = SessionStore()
    store["guest_id"] = "g-42"
    await store.asave()
    seen: dict[str, Any] = {}

    async def inner(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen["guest"] = scope["session"].get("guest_id")
        seen["user"] = scope["user"].is_authenticated
        seen["send"] = send

    async def send(message: dict[str, Any]) -> None:
        raise AssertionError("nothing is sent here")

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    cookie = f"{settings.SESSION_COOKIE_NAME}={store.session_key}".encode()
    scope = {"type": "websocket", "path": "/ws/table/x/", "headers": [(b"cookie", cookie)]}
    await auth_stack(inner)(scope, receive, send)
    assert seen == {"guest": "g-42", "user": False, "send": send}
