"""A reference client of the Spades bot protocol (``spades-bot/1``): a bot in one file.

It needs Python 3.11 and the ``websockets`` package, nothing of this
repository. Run it with your bot's token (from the site's "Your bots" page):

    SPADES_BOT_TOKEN=sbt_... python spades_bot.py ws://localhost:8000/ws/bot/ [--matches N]

It plays a random legal action at every decision. Write your own policy as a
function ``policy(decision) -> action``: ``decision`` is the server's
``decision`` frame (``view``: your seat's view; ``legal_actions``: what you
may do, each already a valid ``action``), and the action one of those.
:class:`BotSession` holds the protocol and no I/O, so that a test can drive
it over any transport; :func:`play` connects it with ``websockets``.
docs/bot-protocol.md describes every frame.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
from collections.abc import Callable
from typing import Any

PROTOCOL = "spades-bot/1"
Policy = Callable[[dict[str, Any]], dict[str, Any]]


def random_policy(rng: random.Random) -> Policy:
    def choose(decision: dict[str, Any]) -> dict[str, Any]:
        return rng.choice(decision["legal_actions"])

    return choose


class BotSession:
    """The protocol's side of a bot: frames in, frames to send out."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.log: list[dict[str, Any]] = []  # every frame the server sent
        self.finished: list[str] = []  # tables whose match ended
        self.errors: list[dict[str, Any]] = []

    def handle(self, frame: dict[str, Any]) -> list[dict[str, Any]]:
        """What to answer ``frame`` with (often nothing)."""
        self.log.append(frame)
        kind = frame.get("type")
        if kind == "hello":
            return [{"type": "ready", "protocol": PROTOCOL}]
        if kind == "decision":
            action = self.policy(frame)
            return [{"type": "action", "table": frame["table"], "seat": frame["seat"],
                     "version": frame["version"], "action": action}]  # fmt: skip
        if kind == "match_end":
            self.finished.append(frame["table"])
        elif kind == "error":
            self.errors.append(frame)
        return []


async def play(url: str, token: str, policy: Policy, matches: int = 0) -> BotSession:
    """Connect and play; return after ``matches`` matches end (0: never)."""
    import websockets  # the one dependency, here so that BotSession needs none

    session = BotSession(policy)
    headers = {"Authorization": f"Bearer {token}"}
    async with websockets.connect(url, additional_headers=headers) as socket:
        async for text in socket:
            for reply in session.handle(json.loads(text)):
                await socket.send(json.dumps(reply))
            if matches and len(session.finished) >= matches:
                break
    return session


def main() -> None:
    parser = argparse.ArgumentParser(description="A random legal Spades bot (spades-bot/1).")
    parser.add_argument("url", nargs="?", default="ws://localhost:8000/ws/bot/")
    parser.add_argument("--matches", type=int, default=0, help="stop after this many (0: never)")
    parser.add_argument("--seed", type=int, default=None, help="the random policy's seed")
    args = parser.parse_args()
    policy = random_policy(random.Random(args.seed))
    session = asyncio.run(play(args.url, os.environ["SPADES_BOT_TOKEN"], policy, args.matches))
    print(json.dumps({"matches": session.finished, "errors": session.errors}))


if __name__ == "__main__":
    main()
