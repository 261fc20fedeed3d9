"""``manage.py load_study FILE``: load a study file (docs/examples/study.toml),
print its slug; every problem of the file as FILE:LINE, changing nothing."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from studies.definition import StudyFileError
from studies.loading import StudyLoadError, load_study


class Command(BaseCommand):
    help = "Load (or, while it has no participants, update) a study from its TOML file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the study file (TOML), e.g. docs/examples/study.toml")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            study, created = load_study(opts["file"])
        except StudyFileError as error:
            for problem in error.problems:
                self.stderr.write(problem)
            count = len(error.problems)
            raise CommandError(f"{count} problem(s) in the study file; nothing changed") from None
        except StudyLoadError as error:
            raise CommandError(str(error)) from None
        if opts["verbosity"] > 1:
            self.stderr.write("created" if created else "updated")
        self.stdout.write(study.slug)
