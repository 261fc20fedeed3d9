"""``manage.py rebuild_tallies [--check]``: recompute the dashboard's tallies from the stored rows.

The tallies (``RoundTally``) count every stored round and match once (a live
round shortly after its move, ``game.research.tally_flush``); rebuild them after rows
were changed or deleted another way (the admin, a shell, a restore), or after
the site's time zone changed (a round counts on its day in that zone).
``--check`` adds the rounds still pending, as the dashboard does before it
reads, then compares the tallies with the stored rows and fails if they differ.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from game.research import round_rows, tallies, tally_flush


class Command(BaseCommand):
    help = "Recompute the dashboard's tallies (RoundTally) from the stored rounds and matches."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="compare only; fail if the tallies differ"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        t0 = time.perf_counter()
        written = round_rows.record_pending()  # rounds whose rows a flush would write
        if written:
            self.stdout.write(f"wrote the record rows of {written} pending round(s) first")
        if opts["check"]:
            flushed = tally_flush.flush_pending()
            if flushed:
                self.stdout.write(f"added {flushed} pending round(s) to the tallies first")
            want, have = tallies.scan(), tallies.stored()
            wrong = {k for k in want.keys() | have.keys() if want.get(k) != have.get(k)}
            if wrong:
                raise CommandError(
                    f"{len(wrong)} of {len(want)} tallies differ from the stored rows; "
                    "run manage.py rebuild_tallies"
                )
            self.stdout.write(f"the {len(want)} tallies match the stored rows")
            return
        cells = tallies.rebuild()
        self.stdout.write(f"rebuilt {cells} tallies in {time.perf_counter() - t0:.1f} s")
