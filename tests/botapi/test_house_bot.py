"""The bot protocol (botapi/consumer.py) adds nothing to the play: BIS+SRP wrapped
by the example client (docs/examples/house_bot.py) at a table of the site plays
exactly the match that BIS+SRP plays in-process on the same deal, action by
action."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from bots.registry import make_bot
from game import seating
from game.engine import Match, Rules, action_to_dict, view_for
from game.models import Action, Table
from tests.support.bot_protocol import bot_token, connect_bot, play_session
from tests.support.inline import InlineScheduler
from tests.support.sockets import close_sync_thread_connections  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)
RULES = Rules(winning_goal=150, losing_goal=-150)

_path = Path(__file__).resolve().parents[2] / "docs" / "examples" / "house_bot.py"
_spec = importlib.util.spec_from_file_location("house_bot_example", _path)
assert _spec is not None and _spec.loader is not None
house = importlib.util.module_from_spec(_spec)
sys.modules["house_bot_example"] = house
_spec.loader.exec_module(house)
from spades_bot_client import BotSession  # noqa: E402  (on the path the example set)


def in_process(seed: str) -> list[dict[str, Any]]:
    """Every action of BIS+SRP at all four seats of the match dealt by ``seed``."""
    match, bot, rng, out = Match(RULES, seed), make_bot("BIS+SRP"), random.Random(0), []
    while not match.is_over:
        action = bot.act(view_for(match, match.round.to_act), rng)
        out.append(action_to_dict(action))
        match.apply(action)
    return out


def _table(kinds: str, seed: str) -> Table:
    table = seating.create_table(rules=RULES)
    Table.objects.filter(pk=table.pk).update(seed=seed)  # the in-process match's deal
    for p, kind in enumerate(kinds):
        seating.add_bot(table, p, "ext:randy" if kind == "X" else "BIS+SRP")
    seating.start_table(table)
    return Table.objects.get(pk=table.pk)


@pytest.mark.parametrize(("kinds", "seed"), [("XBXB", "same-deal/1"), ("XXXX", "same-deal/2")])
async def test_the_wrapped_house_bot_plays_the_in_process_match(
    live: InlineScheduler, machine_speed: None, kinds: str, seed: str
) -> None:
    token = await sync_to_async(bot_token)()
    table = await sync_to_async(_table)(kinds, seed)
    comm, sent = await connect_bot(token), []
    session = BotSession(house.house_policy("BIS+SRP"))
    await play_session(comm, session, sent)
    await comm.disconnect()
    played = await sync_to_async(list)(
        Action.objects.filter(table=table).order_by("version").values_list("action", "by_stand_in")
    )
    assert not any(stand_in for _, stand_in in played)
    assert [a for a, _ in played] == in_process(seed)
    assert sum(f["type"] == "decision" for f in sent) == sum(
        kinds[a["seat"]] == "X" for a, _ in played
    )
