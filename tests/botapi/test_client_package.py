"""The reference client package (clients/python, ``spades_bot_client``) on the
site: it plays a whole match with its random legal policy, every frame it
sends passes its schema, and the package and the server never import each
other. The package's own tests are in clients/python/tests; here it plays
through the bot socket (botapi/consumer.py)."""

from __future__ import annotations

import ast
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from game.models import Action, Table
from tests.support import schema_check
from tests.support.bot_protocol import SCHEMAS, bot_table, bot_token, connect_bot, next_frame
from tests.support.code_graph import SITE, modules
from tests.support.inline import InlineScheduler
from tests.support.sockets import close_sync_thread_connections  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "python" / "spades_bot_client"
sys.path.insert(0, str(PACKAGE.parent))
from spades_bot_client import BotSession, random_policy  # noqa: E402


def _imported(path: Path) -> set[str]:
    """The top-level names of every module ``path`` imports, anywhere in it."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names.add((node.module or "").split(".")[0])
    return names


def test_the_package_and_the_server_never_import_each_other() -> None:
    package_imports = set().union(*(_imported(p) for p in PACKAGE.rglob("*.py")))
    assert package_imports & {*SITE, "lab", "django", "tests"} == set()
    assert package_imports - {"spades_bot_client", "__future__"} <= set(
        sys.stdlib_module_names
    ) | {"websockets"}  # the one dependency
    server = [name for name, path in modules().items()
              if name.split(".")[0] in SITE and "spades_bot_client" in _imported(path)]  # fmt: skip
    assert server == []


@pytest.mark.django_db(transaction=True)
async def test_the_package_plays_a_whole_match_at_a_table_of_the_site(
    live: InlineScheduler, machine_speed: None
) -> None:
    token = await sync_to_async(bot_token)("pkgbot")
    table = await sync_to_async(bot_table)("BBXB", {2: "pkgbot"})
    comm, sent = await connect_bot(token), []
    session = BotSession(random_policy(random.Random(2)), matches=1)
    replies: list[dict[str, Any]] = []
    while not session.done:
        for reply in session.handle(await next_frame(comm, sent)):
            assert schema_check.check_frame(reply, SCHEMAS) == [], reply
            replies.append(reply)
            await comm.send_json_to(reply)
    await comm.disconnect()
    await sync_to_async(table.refresh_from_db)()
    assert table.status == Table.Status.FINISHED
    assert session.errors == [] and session.finished == [table.public_id]
    assert session.bot == "pkgbot" and session.stood_in == []
    mine = await sync_to_async(list)(
        Action.objects.filter(table=table, seat=2).values_list("action", "by_stand_in")
    )
    assert len(mine) == sum(r["type"] == "action" for r in replies)
    assert not any(stand_in for _, stand_in in mine)
