"""External bots: seats played by a program elsewhere, through the bot protocol.

A bot seat whose ``bot_name`` is ``ext:<name>`` is an external bot: the site
does not compute its moves; the program holding the registered bot account
``<name>`` does, over its websocket (the ``botapi`` app, docs/bot-protocol.md).
To everything else it is a bot kind like ``BIS+SRP``: shown as a bot, rated
as ``b:ext:<name>``, named in the round rows and exports.

``botapi`` sits above this layer and names its accounts here through
:func:`register` (its app config), so that nothing in ``game`` imports it.
Without it (a site without the app) no external bot may be seated.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from game.errors import SeatError

EXTERNAL_PREFIX = "ext:"
# A bot account's name: short, lower case, safe in a URL, a seat's bot_name
# (40 characters) and a channel group's name.
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{1,31}$")

_known: list[Callable[[str], bool]] = []
_listed: list[Callable[[], list[str]]] = []


def register(known: Callable[[str], bool], listed: Callable[[], list[str]]) -> None:
    """``known(name)``: an account that may be seated (registered, token not
    revoked); ``listed()``: the names a table's form offers."""
    _known[:] = [known]
    _listed[:] = [listed]


def is_external(bot_name: str) -> bool:
    return bot_name.startswith(EXTERNAL_PREFIX)


def seat_name(account_name: str) -> str:
    return EXTERNAL_PREFIX + account_name


def account_of(bot_name: str) -> str:
    return bot_name.removeprefix(EXTERNAL_PREFIX)


def check(bot_name: str) -> None:
    """Refuse (``SeatError``) an external bot that cannot be seated."""
    name = account_of(bot_name)
    if not NAME_RE.match(name) or not _known or not _known[0](name):
        raise SeatError(f"there is no external bot called {name[:32]!r} that can play")


def choices() -> list[str]:
    """The seat names (``ext:<name>``) of the external bots a table may seat."""
    return [seat_name(n) for n in _listed[0]()] if _listed else []
