"""``manage.py league``: the bidding league, every bidder against every other with SRP play.

    python manage.py league [--games 1000] [--seed 1] [--workers N | --celery]
        [--bidders BIS,BIS*,RB,...] [--logs artifacts/league]
        [--markdown docs/league.md] [--json game/research/league.json] [--report]
        [--bot-port 8765 --bot-tables 4 ...]

An entrant may be an external bot, ``ext:<name>`` among ``--bidders``: it bids
and plays as its program does (the others bid with SRP's play). Its pairs are
tables of the site, served by this process through the bot protocol, after the
other pairs (``lab.tournaments.external``; the options as ``tournament``'s).

A seeded, resumable round robin of duplicate matches (:mod:`lab.tournaments.league`):
each pair's games are logged under ``--logs`` and a stopped league started
again with the same settings plays only what is missing. It writes the page
(``--markdown``) and the table as JSON (``--json``), which the staff dashboard
shows. ``--report`` plays nothing and writes the tables of the games logged.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.tournaments.celery_run import add_celery_arguments, remote_from_options
from lab.tournaments.external import add_external_arguments, external_runs
from lab.tournaments.league import (
    LeagueConfig,
    default_bidders,
    format_markdown,
    read_league,
    run_league,
    write_json,
)
from lab.tournaments.tournament import TournamentError


def _commit() -> str:
    """The checkout's commit, marked when files of the code differ from it."""
    base = Path(__file__).resolve().parents[3]
    try:
        git = {"cwd": base, "capture_output": True, "text": True, "check": True}
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], **git).stdout.strip()
        paths = ["bots", "game/engine"]
        dirty = subprocess.run(["git", "status", "--porcelain", "--", *paths], **git).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""
    return head + (" (with uncommitted changes to bots/ or game/engine/)" if dirty.strip() else "")


class Command(BaseCommand):
    help = "Round robin of duplicate matches between every bidder (SRP play); docs/league.md."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--games", type=int, default=1000, help="games per pair (even)")
        parser.add_argument("--seed", default="1", help="league seed (default 1)")
        parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                            help="worker processes (default: every core)")  # fmt: skip
        parser.add_argument("--bidders", help="comma-separated (default: "
                            + ",".join(default_bidders()) + ")")  # fmt: skip
        parser.add_argument("--logs", default="artifacts/league", help="the pairs' game logs")
        parser.add_argument("--markdown", default="docs/league.md")
        parser.add_argument("--json", default="game/research/league.json")
        parser.add_argument("--goal", type=int, default=200)
        parser.add_argument("--lose", type=int, default=-100)
        parser.add_argument("--report", action="store_true", help="play nothing: tables only")
        parser.add_argument("--no-progress", action="store_true")
        add_celery_arguments(parser)
        add_external_arguments(parser)

    def handle(self, *args: Any, **opts: Any) -> None:
        bidders = tuple(opts["bidders"].split(",")) if opts["bidders"] else tuple(default_bidders())
        seed = opts["seed"]
        config = LeagueConfig(
            bidders=bidders, games=opts["games"], goal=opts["goal"], lose=opts["lose"],
            seed=int(seed) if seed.lstrip("-").isdigit() else seed,
        )  # fmt: skip
        if opts["games"] < 2 or opts["games"] % 2:
            raise CommandError("--games: an even number of games per pair (duplicate pairs)")
        try:
            config.validate()
            name = config.external()
            if opts["report"]:
                summary = read_league(config, opts["logs"])
            else:
                progress = None if opts["no_progress"] else getattr(self.stderr, "_out", sys.stderr)
                external = external_runs(name, opts) if name else None
                summary = run_league(config, opts["logs"], opts["workers"], progress,
                                     remote=remote_from_options(opts),
                                     external=external)  # fmt: skip
        except TournamentError as e:
            raise CommandError(str(e)) from None
        # The command as it reproduces the tables (the worker count does not change them).
        command = "python manage.py league " + shlex.join(
            ["--games", str(config.games), "--seed", str(config.seed),
             "--bidders", ",".join(bidders), "--goal", str(config.goal),
             "--lose", str(config.lose)]
        )  # fmt: skip
        commit = _commit()
        summary["command"], summary["commit"] = command, commit
        if opts["json"]:
            write_json(summary, opts["json"])
        if opts["markdown"]:
            Path(opts["markdown"]).write_text(format_markdown(summary, command, commit))
        for b in summary["bidders"]:
            self.stdout.write(
                f"{b['bidder']:<10} rating {b['rating']:+6.0f} ± {b['rating_ci95']:3.0f}  "
                f"win rate {100 * (b['win_rate'] or 0):5.1f}%  games {b['games']}"
            )
        run = summary.get("run", {})
        if "external_bot_decisions" in run:
            # The external bot's results are its own only when its stand-in made none.
            self.stdout.write(
                f"{name and 'ext:' + name}: {run['external_bot_decisions']} decisions through "
                f"the bot protocol, {run['external_stand_in_decisions']} by its stand-in"
            )
