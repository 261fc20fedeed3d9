"""``manage.py withdraw_participant <slug> <reference> [--reason TEXT] [--by NAME]
[--payments-done]``: withdraw a participant at their request (studies.withdrawal).

The reference is the participant's pseudonym, which their completion,
debrief and end pages show them; a shared outcome code is refused with what to give instead."""

from __future__ import annotations

import getpass
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studies import withdrawal
from studies.models import Study


class Command(BaseCommand):
    help = (
        "Withdraw a study participant: delete their answers, think times and recruitment "
        "ID, mark them withdrawn (left out of the export), with an audit entry."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the study's slug")
        parser.add_argument(
            "reference", help="the participant's pseudonym (their reference for the study)"
        )
        parser.add_argument(
            "--reason", default="at the participant's request", help="kept in the audit log"
        )
        parser.add_argument("--by", default="", help="who withdraws them (default: your login)")
        parser.add_argument(
            "--payments-done",
            action="store_true",
            help="they were paid: their recruitment ID may go although their outcome is paid",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        study = Study.objects.filter(slug=opts["slug"]).first()
        if study is None:
            raise CommandError(f"no study {opts['slug']!r}; nothing changed")
        try:
            participant = withdrawal.withdraw(
                study,
                opts["reference"],
                reason=opts["reason"],
                by=opts["by"] or getpass.getuser(),
                payments_done=opts["payments_done"],
            )
        except withdrawal.Refused as error:
            raise CommandError(f"{error}; nothing changed") from None
        self.stdout.write(f"withdrew {participant.pseudonym} from {study.slug}")
