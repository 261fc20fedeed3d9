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

from game.errors import SeatError, TooManyTables

EXTERNAL_PREFIX = "ext:"
# The bot protocol this server speaks (docs/bot-protocol.md); a bot naming
# another in its ``ready`` is refused, so every external seat's moves came
# through this one: the exports name it beside the bot.
PROTOCOL = "spades-bot/1"
# A bot account's name: short, lower case, safe in a URL, a seat's bot_name
# (40 characters) and a channel group's name.
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{1,31}$")

# A seat offered to any external bot that accepts open challenges: a choice of
# the table form and the seat commands, never a seat's bot_name.
ANY_BOT = "ext:*"

_known: list[Callable[[str], bool]] = []
_listed: list[Callable[[], list[str]]] = []
_room: list[Callable[[str, int], int | None]] = []
_offer: list[Callable[[int, int], None]] = []
_offered: list[Callable[[int], list[int]]] = []


def register(known: Callable[[str], bool], listed: Callable[[], list[str]],
             room: Callable[[str, int], int | None] | None = None,
             offer: Callable[[int, int], None] | None = None,
             offered: Callable[[int], list[int]] | None = None) -> None:  # fmt: skip
    """``known(name)``: an account that may be seated (registered, token not
    revoked); ``listed()``: the names a table's form offers; ``room(name,
    table_pk)``: None if the bot may sit at one more table than ``table_pk``,
    else its cap of tables; ``offer(table_pk, position)``: offer the seat to
    the bots that accept open challenges (in the caller's transaction);
    ``offered(table_pk)``: the positions offered there and not taken."""
    _known[:] = [known]
    _listed[:] = [listed]
    _room[:] = [room] if room is not None else []
    _offer[:] = [offer] if offer is not None else []
    _offered[:] = [offered] if offered is not None else []


def is_external(bot_name: str) -> bool:
    return bot_name.startswith(EXTERNAL_PREFIX) and bot_name != ANY_BOT


def protocol_of(bot_name: str | None) -> str:
    """The protocol a seat's bot played through ("" for a house bot or a person)."""
    return PROTOCOL if bot_name and is_external(bot_name) else ""


def seat_name(account_name: str) -> str:
    return EXTERNAL_PREFIX + account_name


def account_of(bot_name: str) -> str:
    return bot_name.removeprefix(EXTERNAL_PREFIX)


def check(bot_name: str) -> None:
    """Refuse (``SeatError``) an external bot that cannot be seated."""
    name = account_of(bot_name)
    if not NAME_RE.match(name) or not _known or not _known[0](name):
        raise SeatError(f"there is no external bot called {name[:32]!r} that can play")


def check_room(bot_name: str, table_pk: int) -> None:
    """Refuse (``TooManyTables``) a bot already at its cap of live tables
    (``table_pk`` aside); run inside the seating's transaction."""
    cap = _room[0](account_of(bot_name), table_pk) if _room else None
    if cap is not None:
        raise TooManyTables(f"the bot {bot_name} already plays at its {cap} tables")


def offer(table_pk: int, position: int) -> None:
    """Offer the seat to any bot accepting open challenges (``SeatError`` where
    the site has no bot accounts)."""
    if not _offer:
        raise SeatError("this site takes no external bots")
    _offer[0](table_pk, position)


def offered(table_pk: int) -> list[int]:
    """The seats of ``table_pk`` offered to the bots and not yet taken."""
    return _offered[0](table_pk) if _offered else []


def choices() -> list[str]:
    """The seat names (``ext:<name>``) of the external bots a table may seat,
    after :data:`ANY_BOT` where seats may be offered (none without a bot)."""
    names = [seat_name(n) for n in _listed[0]()] if _listed else []
    return [ANY_BOT] * bool(_offer and names) + names
