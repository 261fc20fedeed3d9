"""``python -m spades_bot_client URL`` (or ``spades-bot URL``): a random legal bot.

The token comes from ``SPADES_BOT_TOKEN``. Prints, at the end, one JSON line:
the matches played and the errors the server sent.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys

from spades_bot_client.connection import Stopped, run
from spades_bot_client.policies import random_policy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="spades-bot", description=__doc__.split("\n")[0])
    parser.add_argument("url", nargs="?", default="ws://localhost:8000/ws/bot/")
    parser.add_argument("--matches", type=int, default=0, help="stop after this many (0: never)")
    parser.add_argument("--seed", type=int, default=None, help="the random policy's seed")
    args = parser.parse_args(argv)
    token = os.environ.get("SPADES_BOT_TOKEN", "")
    if not token:
        parser.error("set SPADES_BOT_TOKEN to your bot's token")
    try:
        session = run(args.url, token, random_policy(random.Random(args.seed)),
                      matches=args.matches)  # fmt: skip
    except Stopped as e:
        print(json.dumps({"stopped": e.code, "reason": e.reason, "errors": e.session.errors}))
        return 1
    print(json.dumps({"bot": session.bot, "matches": session.finished, "errors": session.errors}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
