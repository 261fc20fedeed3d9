"""``manage.py import_rounds FILE.jsonl``: import a JSON Lines export, all or nothing.

Every line is checked and its round record replayed through the engine
(``game.engine.replay``) before anything is written; one bad line and
nothing is imported, with each bad line named and why.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from game.research import imports


class Command(BaseCommand):
    help = "Import rounds from a JSON Lines export (validated by replay; all or nothing)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="a .jsonl file written by export_rounds")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            with open(opts["file"], encoding="utf-8") as f:
                counts = imports.import_jsonl(f)
        except OSError as e:
            raise CommandError(f"cannot read {opts['file']}: {e}") from None
        except UnicodeDecodeError as e:
            raise CommandError(f"{opts['file']} is not UTF-8 text: {e}") from None
        except imports.ImportFailed as e:
            lines = "\n".join("  " + err for err in e.errors)
            raise CommandError(
                f"nothing imported: {len(e.errors)} problem(s) in {opts['file']}:\n{lines}"
            ) from None
        self.stdout.write(
            f"imported {counts['rounds']} rounds of {counts['tables']} tables "
            f"({counts['match_results']} finished matches)"
        )
