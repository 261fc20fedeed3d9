"""``manage.py tournament``: full matches between two bots, with win rates and 95% CIs.

    python manage.py tournament --ns BIS+SRP --ew RB+SRP --games 10000 \\
        --goal 200 --lose -100 --seed 1 --workers 2 [--duplicate] [--output results.json]
        [--celery [--broker redis://host:6379/2]]   # on Celery workers instead

A side may be an external bot, ``--ns ext:<name>``: its games are tables of the
site served by this process (``--bot-port``), which the bot's program joins
through the bot protocol (docs/bot-protocol.md; ``lab.tournaments.external``).

The work is done by :mod:`lab.tournaments.tournament` (no Django needed there); with
``--output`` the finished games are logged beside it and a stopped run
resumes when started again with the same options.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.tournaments.celery_run import add_celery_arguments, remote_from_options
from lab.tournaments.external import add_external_arguments, external_from_options
from lab.tournaments.storage import add_store_option, store_if_asked
from lab.tournaments.tournament import (
    TournamentError,
    add_arguments,
    format_summary,
    run_from_options,
)


class Command(BaseCommand):
    help = (
        "Play full matches between two bots (A North/South, B East/West; --duplicate "
        "swaps seats on every second game) and report win rates with 95% CIs."
    )

    def add_arguments(self, parser: Any) -> None:
        add_arguments(parser)
        add_store_option(parser)
        add_celery_arguments(parser)
        add_external_arguments(parser)

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            # The raw stream: OutputWrapper would end every progress redraw with a newline.
            remote = external_from_options(opts) or remote_from_options(opts)
            summary = run_from_options(opts, getattr(self.stderr, "_out", self.stderr), remote)
        except TournamentError as e:
            raise CommandError(str(e)) from None
        except OSError as e:
            raise CommandError(f"cannot write the results: {e}") from None
        self.stdout.write(format_summary(summary))
        if opts.get("output") and not opts.get("report"):
            self.stdout.write(f"summary written to {opts['output']}")
        store_if_asked(opts, self.stdout)
