"""A client of the Spades site's bot protocol (``spades-bot/1``).

:class:`BotSession` holds the protocol and no I/O; :func:`play` (a
coroutine) and :func:`run` connect it over a websocket; a policy is any
function from a :class:`Decision` to one of its ``legal_actions``
(:func:`random_policy` is one). docs/bot-protocol.md in the site's
repository describes every frame. Nothing here imports the site.
"""

from spades_bot_client.connection import play, run
from spades_bot_client.policies import Policy, random_policy
from spades_bot_client.session import PROTOCOL, BotSession, Decision

__all__ = ["PROTOCOL", "BotSession", "Decision", "Policy", "play", "random_policy", "run"]
