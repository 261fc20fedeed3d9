"""Named bot levels (``settings.SPADES_BOT_LEVELS``): what "Play now" and the
new-table form offer a player, each with the bot kind that plays it and its
rating as people have met it (``game.ratings``)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from bots.registry import DEFAULT_BOT
from game.ratings import boards

LEVEL_PREFIX = "level:"  # a seat choice naming a level, not a bot


class UnknownLevel(ValueError):
    """A level name that is not in the settings' table."""


@dataclass(frozen=True)
class Level:
    name: str
    bot: str
    mu: float | None = None  # None: not rated yet
    sigma: float | None = None
    matches: int = 0

    @property
    def label(self) -> str:
        """How a menu shows it: its name, the bot, and its rating."""
        rated = "not rated yet" if self.mu is None else f"rating {self.mu:.1f} ± {self.sigma:.1f}"
        return f"{self.name} — {self.bot} ({rated})"


def levels(with_ratings: bool = True) -> list[Level]:
    """The levels in the settings' order, with their bots' ratings."""
    table = [Level(name, bot) for name, bot in settings.SPADES_BOT_LEVELS]
    if not with_ratings:
        return table
    found = boards.ratings_of_bots([lv.bot for lv in table])
    return [
        Level(lv.name, lv.bot, r.mu, r.sigma, r.matches) if (r := found.get(lv.bot)) else lv
        for lv in table
    ]


def default_level() -> str:
    """The level of the site's default bot, else the first."""
    table = levels(with_ratings=False)
    return next((lv.name for lv in table if lv.bot == DEFAULT_BOT), table[0].name)


def bot_of(name: str) -> str:
    """The bot kind of level ``name``, or :class:`UnknownLevel`."""
    for lv in levels(with_ratings=False):
        if lv.name == name:
            return lv.bot
    raise UnknownLevel(f"There is no bot level called {name[:40]!r}.")
