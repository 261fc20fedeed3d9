"""The run-time switches of a move, read once by ``game.builder`` and handed in here.

The builder reads them from the settings (and the environment) at start-up
and again when a test changes one of them (Django's ``setting_changed``),
and installs them with :func:`install`; the master's pacing, seating and
the bot driver read ``switches.current``, never the settings, so no move
reads the configuration (``tests/game/test_master.py`` holds it). An
attribute, not a function, so that a move's traced files stay the ones
``docs/architecture.md`` counts; read it through the module, since
``install`` rebinds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from bots.registry import DEFAULT_BOT


@dataclass(frozen=True)
class Switches:
    bot_delay: float = 0.6  # SPADES_BOT_DELAY: a bot's pause, where its table sets none
    stand_in_bot: str = DEFAULT_BOT  # SPADES_STAND_IN_BOT: who moves for a human out of time
    bot_budget: float = 1.0  # SPADES_BOT_BUDGET: a search's seconds, where its table sets none


current = Switches()


def install(switches: Switches) -> None:
    """The builder's: the switches every move reads from now on."""
    global current
    current = switches
