"""A house bot (``BIS+SRP`` by default) playing through the bot protocol, on
the reference client package (``clients/python``, ``spades_bot_client``).

The same code that plays inside the site (``bots/``, against
``game.engine.view.SeatView``) here plays from outside it: each decision's
``view`` becomes a ``SeatView`` (``SeatView.from_dict``, the inverse of what
the server sends) and the bot's action goes back as the answer. The package
does the protocol; this file is only the policy. Run it from a checkout of
this repository with the registry's name of a bot:

    SPADES_BOT_TOKEN=sbt_... python docs/examples/house_bot.py ws://localhost:8000/ws/bot/ \\
        --bot BIS+SRP [--matches N]

A bot deterministic given its view (BIS+SRP is) plays exactly as it would
at the same table inside the site: the protocol adds nothing to the play
(tests/botapi/test_house_bot.py).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(_ROOT), str(_ROOT / "clients" / "python")]

from spades_bot_client import Decision, Policy, run  # noqa: E402

from bots.registry import make_bot  # noqa: E402
from game.engine import action_to_dict  # noqa: E402
from game.engine.view import SeatView  # noqa: E402


def house_policy(name: str) -> Policy:
    """The registry's bot ``name`` answering every decision."""
    bot = make_bot(name)

    def choose(decision: Decision) -> dict[str, Any]:
        # A random source per decision, as the site's driver gives its bots one.
        rng = random.Random(f"{decision.table}/{decision.version}/{decision.seat}")
        return action_to_dict(bot.act(SeatView.from_dict(decision.view), rng))

    return choose


def main() -> None:
    parser = argparse.ArgumentParser(description="A house bot through the bot protocol.")
    parser.add_argument("url", nargs="?", default="ws://localhost:8000/ws/bot/")
    parser.add_argument("--bot", default="BIS+SRP", help="a name of bots/registry.py")
    parser.add_argument("--matches", type=int, default=0, help="stop after this many (0: never)")
    args = parser.parse_args()
    token = os.environ["SPADES_BOT_TOKEN"]
    session = run(args.url, token, house_policy(args.bot), matches=args.matches)
    print(json.dumps({"matches": session.finished, "errors": session.errors}))


if __name__ == "__main__":
    main()
