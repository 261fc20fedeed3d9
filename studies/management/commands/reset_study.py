"""``manage.py reset_study <slug> --pilot [--reason TEXT] [--by NAME]``: clear a
pilot run's participant data, the study file and its hash unchanged
(studies.withdrawal); refused, changing nothing, when any of it is not pilot data."""

from __future__ import annotations

import getpass
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studies import withdrawal
from studies.models import Study


class Command(BaseCommand):
    help = "Clear a study's pilot data (participants, answers, tables' links), keeping its file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the study's slug")
        parser.add_argument(
            "--pilot",
            action="store_true",
            help="required: only pilot data is ever cleared, and saying so is the safeguard",
        )
        parser.add_argument("--reason", default="pilot run over", help="kept in the audit log")
        parser.add_argument("--by", default="", help="who resets it (default: your login)")

    def handle(self, *args: Any, **opts: Any) -> None:
        if not opts["pilot"]:
            raise CommandError(
                "reset_study clears pilot data only: give --pilot to say so; nothing changed"
            )
        study = Study.objects.filter(slug=opts["slug"]).first()
        if study is None:
            raise CommandError(f"no study {opts['slug']!r}; nothing changed")
        try:
            cleared = withdrawal.reset_pilot(
                study, reason=opts["reason"], by=opts["by"] or getpass.getuser()
            )
        except withdrawal.Refused as error:
            raise CommandError(f"{error}; nothing changed") from None
        self.stdout.write(f"cleared {cleared} pilot participant(s) of {study.slug}")
