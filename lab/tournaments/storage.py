"""A tournament's games stored as ordinary matches (``manage.py tournament --store``):
dashboard data. Each game is played again as the tournament plays it and saved
by the site's ``game.research.storage.store_match``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bots.registry import make_bot
from game.research.storage import store_match
from lab.tournaments.tournament import TournamentConfig, config_from_options, play_match


def store_tournament(
    config: TournamentConfig, progress: Callable[[int, int], None] | None = None
) -> int:
    """Play a tournament's games again and store each as a match; returns how many.

    Game ``g`` is played by ``lab.tournaments.tournament.play_match``, as
    ``play_game`` plays it (same match seed, same seats, same bot random
    stream), so with deterministic bots the stored
    matches are the tournament's games. A game stopped unfinished (a draw
    after ``MAX_ROUNDS``) is not stored.
    """
    config.validate()
    bot_a, bot_b = make_bot(config.ns), make_bot(config.ew)
    stored = 0
    for index in range(config.games):
        match, _, swapped = play_match(config, index, bot_a, bot_b)
        names = [config.ew, config.ns] * 2 if swapped else [config.ns, config.ew] * 2
        if match.is_over:
            store_match(match, names)
            stored += 1
        if progress is not None:
            progress(index + 1, config.games)
    return stored


# ----- `manage.py tournament ... --store` ----------------------------------------------


def add_store_option(parser: Any) -> None:
    """Add ``--store`` to the tournament command's options."""
    parser.add_argument(
        "--store",
        action="store_true",
        help="also save every finished game as an ordinary stored match (dashboard data)",
    )


def store_if_asked(opts: dict[str, Any], stdout: Any) -> int:
    """With ``--store``: play the tournament's games again and store them; returns how many."""
    if not opts.get("store"):
        return 0
    stored = store_tournament(config_from_options(opts))
    stdout.write(f"stored {stored} matches (tables with their rounds and results)")
    return stored
