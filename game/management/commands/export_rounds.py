"""``manage.py export_rounds --format csv|jsonl [filters] [--output FILE]``: the round log.

Pilot data (a pilot study's tables, or a pilot participant's) is left out
unless ``--include-pilot``, as on the dashboard; ``--study SLUG`` keeps a
study's tables only.

Writes to stdout unless ``--output``; streams (memory stays flat). The
columns and the line format are in docs/exports.md.
"""

from __future__ import annotations

import sys
from datetime import date
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from game.research import exports, study_keys
from game.research.analytics import Filters
from game.research.round_columns import MAKEUPS


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"{text!r} is not a date like 2026-01-31") from None


class Command(BaseCommand):
    help = "Export stored rounds as CSV (one row per round) or JSON Lines (full records)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", choices=["csv", "jsonl"], required=True)
        parser.add_argument("--output", help="write here instead of stdout")
        parser.add_argument("--from", dest="date_from", help="first day (YYYY-MM-DD)")
        parser.add_argument("--to", dest="date_to", help="last day, inclusive (YYYY-MM-DD)")
        parser.add_argument("--rules", default="", help="a rule set key (the dashboard's list)")
        parser.add_argument(
            "--bot", default="", help="rounds with a partnership of this bot key (BIS+SRP)"
        )
        parser.add_argument(
            "--makeup",
            action="append",
            default=[],
            choices=list(MAKEUPS),
            help="rounds with a measured partnership that is BB, HB or HH (repeatable)",
        )
        parser.add_argument(
            "--against",
            action="append",
            default=[],
            choices=list(MAKEUPS),
            help="... whose opponents are BB, HB or HH (repeatable)",
        )
        parser.add_argument(
            "--stand-ins",
            action="store_true",
            help="include stand-in rounds (left out by default, as on the dashboard)",
        )
        parser.add_argument(
            "--study", default="", help="only the rounds of this study's tables (its slug)"
        )
        parser.add_argument(
            "--include-pilot",
            action="store_true",
            help="include pilot data (a pilot study's or pilot participant's tables; "
            "left out by default, as on the dashboard)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        conditions: tuple[int, ...] = ()
        if opts["study"]:
            found = study_keys.conditions_of(opts["study"])
            if found is None:
                raise CommandError(f"there is no study {opts['study']!r}")
            conditions = tuple(pk for pk, _ in found) or (-1,)
        filters = Filters(
            date_from=_day(opts["date_from"]) if opts["date_from"] else None,
            date_to=_day(opts["date_to"]) if opts["date_to"] else None,
            rules_key=opts["rules"],
            bot=opts["bot"],
            makeups=tuple(opts["makeup"]),
            against=tuple(opts["against"]),
            stand_ins=opts["stand_ins"],
            conditions=conditions,
            pilot=opts["include_pilot"],
        )
        chunks = exports.iter_csv(filters) if opts["format"] == "csv" else exports.iter_jsonl(
            filters)  # fmt: skip
        if opts["output"]:
            try:
                with open(opts["output"], "w", newline="", encoding="utf-8") as f:
                    for chunk in chunks:
                        f.write(chunk)
            except OSError as e:
                raise CommandError(f"cannot write {opts['output']}: {e}") from None
        else:
            out = getattr(self.stdout, "_out", sys.stdout)
            for chunk in chunks:
                out.write(chunk)
            out.flush()
