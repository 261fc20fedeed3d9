"""``manage.py export_study <slug> --out DIR [--with-payments] [--include-pilot]``:
a study's data as CSV files and their codebook (studies.export)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studies.export import export_study
from studies.models import Study


class Command(BaseCommand):
    help = "Write a study's participants, answers, conditions and actions, with a codebook."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the study's slug")
        parser.add_argument("--out", required=True, help="the folder to write (created)")
        parser.add_argument(
            "--with-payments",
            action="store_true",
            help="also payments.csv, the one file with the raw recruitment IDs",
        )
        parser.add_argument(
            "--include-pilot", action="store_true", help="keep the pilot participants"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        study = Study.objects.filter(slug=opts["slug"]).first()
        if study is None:
            raise CommandError(f"no study {opts['slug']!r}")
        paths = export_study(
            study,
            Path(opts["out"]),
            with_payments=opts["with_payments"],
            include_pilot=opts["include_pilot"],
        )
        for path in paths:
            self.stdout.write(str(path))
