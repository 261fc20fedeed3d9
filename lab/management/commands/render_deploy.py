"""``manage.py render_deploy --domain DOMAIN [--daphnes N] --out DIR``: the
deployment's systemd units, nginx sites and environment template
(``lab/stack/deploy.py``; docs/deploy.md installs them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.stack.deploy import Deployment, write


class Command(BaseCommand):
    help = "Write the systemd units, nginx sites and environment template of a deployment."

    def add_arguments(self, parser: CommandParser) -> None:
        defaults = Deployment(domain="example.org")
        parser.add_argument("--domain", required=True, help="the site's host name")
        parser.add_argument("--out", required=True, type=Path, help="directory to write into")
        parser.add_argument("--daphnes", type=int, default=defaults.daphnes)
        parser.add_argument("--first-port", type=int, default=defaults.first_port)
        parser.add_argument("--project", type=Path, default=defaults.project,
                            help="the checkout on the server")  # fmt: skip
        parser.add_argument("--venv", type=Path, default=defaults.venv)
        parser.add_argument("--user", default=defaults.user)
        parser.add_argument("--env-file", type=Path, default=defaults.env_file)
        parser.add_argument("--static-root", type=Path, default=None,
                            help="default: PROJECT/staticfiles (STATIC_ROOT)")  # fmt: skip
        parser.add_argument("--acme-root", type=Path, default=defaults.acme_root)
        parser.add_argument("--log-dir", type=Path, default=defaults.log_dir)
        parser.add_argument("--cert", type=Path, default=None,
                            help="default: certbot's live/DOMAIN/fullchain.pem")  # fmt: skip
        parser.add_argument("--key", type=Path, default=None)
        parser.add_argument("--bot-workers", type=int, default=defaults.bot_workers)
        parser.add_argument("--search-workers", type=int, default=defaults.search_workers)
        parser.add_argument("--replay-workers", type=int, default=defaults.replay_workers)

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["daphnes"] < 1:
            raise CommandError("--daphnes must be 1 or more")
        deployment = Deployment(
            domain=opts["domain"],
            daphnes=opts["daphnes"],
            first_port=opts["first_port"],
            project=opts["project"],
            venv=opts["venv"],
            user=opts["user"],
            env_file=opts["env_file"],
            static_root=opts["static_root"] or opts["project"] / "staticfiles",
            acme_root=opts["acme_root"],
            log_dir=opts["log_dir"],
            certificate=opts["cert"],
            certificate_key=opts["key"],
            bot_workers=opts["bot_workers"],
            search_workers=opts["search_workers"],
            replay_workers=opts["replay_workers"],
        )
        for path in write(deployment, opts["out"]):
            self.stdout.write(str(path))
