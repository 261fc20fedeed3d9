"""The session over a websocket (the ``websockets`` package), connecting again
after a lost connection: the server then resumes the bot's seats."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from spades_bot_client.policies import Policy
from spades_bot_client.session import BotSession

log = logging.getLogger(__name__)

# Close codes after which connecting again cannot help (docs/bot-protocol.md):
# another protocol, no valid token, the token withdrawn, too many sockets.
FINAL_CLOSE_CODES = frozenset({4400, 4401, 4403, 4429})
PAUSES = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)  # seconds before connecting again


class Stopped(RuntimeError):
    """The server closed the connection for good (``code``, ``reason``)."""

    def __init__(self, code: int, reason: str, session: BotSession) -> None:
        super().__init__(f"closed by the server: {code} {reason}".strip())
        self.code, self.reason, self.session = code, reason, session


async def play(url: str, token: str, policy: Policy | None = None, *, matches: int = 0,
               session: BotSession | None = None, reconnect: bool = True,
               **connect_options: Any) -> BotSession:  # fmt: skip
    """Play until ``matches`` matches ended (0: until stopped). Raises
    :class:`Stopped` when the server refuses the bot for good."""
    import websockets

    if session is None:
        if policy is None:
            raise ValueError("give a policy or a session")
        session = BotSession(policy, matches=matches)
    headers = {"Authorization": f"Bearer {token}"}
    failures = 0
    while not session.done:
        try:
            async with websockets.connect(url, additional_headers=headers,
                                          **connect_options) as socket:  # fmt: skip
                failures = 0
                async for text in socket:
                    for reply in session.handle(json.loads(text)):
                        await socket.send(json.dumps(reply))
                    if session.done:
                        return session
                code, reason = socket.close_code or 1000, socket.close_reason or ""
        except websockets.ConnectionClosed as e:
            code = e.rcvd.code if e.rcvd is not None else 1006
            reason = e.rcvd.reason if e.rcvd is not None else ""
        except OSError as e:  # refused, reset, unreachable
            code, reason = 1006, str(e)
        if code in FINAL_CLOSE_CODES:
            raise Stopped(code, reason, session)
        if not reconnect:
            return session
        pause = PAUSES[min(failures, len(PAUSES) - 1)]
        failures += 1
        log.warning("connection lost (%s %s): again in %.1f s", code, reason, pause)
        await asyncio.sleep(pause)
    return session


def run(url: str, token: str, policy: Policy, *, matches: int = 0, **options: Any) -> BotSession:
    """:func:`play` on a new event loop."""
    return asyncio.run(play(url, token, policy, matches=matches, **options))
