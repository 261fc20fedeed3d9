"""A tournament's games with an external bot (``ext:<name>``) through the bot protocol.

The games are played as the site plays them: each is a table of the site's
database, dealt by the game's match seed (so the deals are the in-process
tournament's, duplicate pairs included), with the house bots seated by name
and ``ext:<name>`` at the other side's seats, unrated. This process serves
the site itself (Daphne on a thread, ``--bot-port``) so that the house bots'
moves (this process's master and scheduler) and the bot's socket share one
channel layer; the bot's program connects to ``ws://<host>:<port>/ws/bot/``
with its token, and the run waits for it (``--bot-wait``). A game's record
is the in-process tournament's (``tournament.game_record``) from the table's
finished match, so the summary, the intervals and the duplicate sign test
are the same code's. The run's stats say how many of the bot's decisions the
stand-in made (its time ran out): the result is the bot's only when that is 0.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from botapi import consumer, offers
from botapi.models import BotAccount
from game import external_bots, seating
from game.errors import SeatError
from game.models import Action, Table
from game.moves.matches import load_match
from lab.tournaments.tournament import (
    TournamentConfig,
    TournamentError,
    config_from_options,
    game_record,
)

POLL_SECONDS = 0.02


@dataclass
class ExternalStats:
    tables: int = 0
    bot_decisions: int = 0
    stand_in_decisions: int = 0  # the bot's decisions its stand-in made (out of time)
    table_ids: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"external_bot_decisions": self.bot_decisions,
                "external_stand_in_decisions": self.stand_in_decisions,
                "tables": self.tables}  # fmt: skip


def external_side(config: TournamentConfig) -> str | None:
    """The account name of the tournament's external bot, if a side is one."""
    names = [n for n in (config.ns, config.ew) if external_bots.is_external(n)]
    if len(names) == 2 and names[0] != names[1]:
        raise TournamentError("one external bot per tournament (both sides may be the same)")
    return external_bots.account_of(names[0]) if names else None


_served: dict[int, threading.Thread] = {}


def serve(port: int) -> None:
    """The site's ASGI application on ``127.0.0.1:port``, on a thread of this process."""
    if port in _served:
        return
    from daphne.server import Server

    from spadesite.asgi import application

    ready = threading.Event()
    server = Server(application, endpoints=[f"tcp:port={port}:interface=127.0.0.1"],
                    signal_handlers=False, ready_callable=ready.set, verbosity=0)  # fmt: skip
    thread = threading.Thread(target=server.run, name="bot-protocol-server", daemon=True)
    thread.start()
    if not ready.wait(30):
        raise TournamentError(f"the bot protocol's server did not start on port {port}")
    _served[port] = thread


class ExternalRun:
    """The tournament's ``remote``: plays its units as tables of the site."""

    label = "external"

    def __init__(self, config: TournamentConfig, port: int, wait: float, tables: int,
                 turn_seconds: int) -> None:  # fmt: skip
        name = external_side(config)
        if name is None:
            raise TournamentError("no side of this tournament is an external bot (ext:<name>)")
        self.config, self.name, self.port, self.wait = config, name, port, wait
        self.tables, self.turn_seconds = max(1, tables), turn_seconds
        self.stats = ExternalStats()

    def play(self, units: list[tuple[int, list[int]]], bar: Any) -> Iterator[tuple[int, dict]]:
        serve(self.port)
        self._await_bot()
        todo = [g for _, games in units for g in games]
        running: dict[int, tuple[int, str, bool]] = {}  # table pk -> (game, seed, swapped)
        while todo or running:
            while todo and len(running) < self.tables:
                game = todo.pop(0)
                table, seed, swapped = self._start(game)
                running[table] = (game, seed, swapped)
            finished = Table.objects.filter(pk__in=running, status=Table.Status.FINISHED)
            for table in finished:
                game, seed, swapped = running.pop(table.pk)
                yield 0, self._record(table, game, seed, swapped)
            if not finished:
                time.sleep(POLL_SECONDS)

    def _await_bot(self) -> None:
        deadline = time.monotonic() + self.wait
        url = f"ws://127.0.0.1:{self.port}/ws/bot/"
        print(f"waiting for ext:{self.name} at {url}", flush=True)
        while not consumer.ready_here(self.name):
            if time.monotonic() > deadline:
                raise TournamentError(f"ext:{self.name} did not connect to {url} within "
                                      f"{self.wait:.0f} s")  # fmt: skip
            time.sleep(0.1)

    def _start(self, game: int) -> tuple[int, str, bool]:
        seed, swapped = self.config.game_plan(game)
        a, b = self.config.ns, self.config.ew
        names = (b, a, b, a) if swapped else (a, b, a, b)
        table = seating.create_table(rules=self.config.rules(), turn_seconds=self.turn_seconds,
                                     bot_delay=0.0)  # fmt: skip
        Table.objects.filter(pk=table.pk).update(seed=seed, rated=False)
        for position, name in enumerate(names):
            seating.add_bot(table, position, name)
        seating.start_table(table)
        self.stats.tables += 1
        self.stats.table_ids.append(table.pk)
        return table.pk, seed, swapped

    def _record(self, table: Table, game: int, seed: str, swapped: bool) -> dict[str, Any]:
        seats = [s.position for s in table.seats.all() if external_bots.is_external(s.bot_name)]
        moves = Action.objects.filter(table=table, seat__in=seats)
        self.stats.bot_decisions += moves.count()
        self.stats.stand_in_decisions += moves.filter(by_stand_in=True).count()
        return game_record(game, load_match(table), seed, swapped)

    def close(self) -> None:
        """Nothing held: the server thread serves on until the process ends."""


def add_external_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bot-port",
        type=int,
        default=8765,
        help="with an ext:<name> side: serve the bot protocol on this port",
    )
    parser.add_argument(
        "--bot-wait",
        type=float,
        default=300.0,
        help="seconds to wait for the external bot to connect (default 300)",
    )
    parser.add_argument(
        "--bot-tables",
        type=int,
        default=4,
        help="tables the external bot plays at once (default 4)",
    )
    parser.add_argument(
        "--bot-turn-seconds",
        type=int,
        default=30,
        help="the external bot's time per decision, then the stand-in (5-600)",
    )
    # fmt: skip


def external_from_options(opts: dict[str, Any]) -> Callable[[list[TournamentConfig]], Any] | None:
    """With an ``ext:<name>`` side: what makes the run of its games (the tournament's remote)."""
    config = config_from_options(opts)
    name = external_side(config)
    if name is None:
        return None
    if opts.get("celery") or opts.get("store"):
        raise TournamentError("an external bot's games are played here: no --celery, no --store")
    maker = external_runs(name, opts)
    return None if maker is None else lambda configs: maker(configs[0])


def external_runs(name: str, opts: dict[str, Any]) -> Callable[[TournamentConfig], Any] | None:
    """What plays a tournament of the external bot ``name`` (an account's name)
    through the protocol, with the command's ``--bot-*`` options, once the bot
    and its cap are checked; None with ``--report`` (reading a log plays nothing)."""
    try:
        external_bots.check(external_bots.seat_name(name))
    except SeatError as e:
        raise TournamentError(e.message) from None
    if opts.get("report"):
        return None
    port, wait = int(opts.get("bot_port") or 8765), float(opts.get("bot_wait") or 300.0)
    tables, turn = int(opts.get("bot_tables") or 4), int(opts.get("bot_turn_seconds") or 30)
    cap = BotAccount.objects.filter(name=name).values_list("max_tables", flat=True).first() or 0
    if tables + offers.live_tables(name) > cap:
        raise TournamentError(
            f"the bot ext:{name} sits at no more than {cap} tables at once (its page's "
            f"setting) and holds {offers.live_tables(name)}: lower --bot-tables ({tables}) "
            "or raise its cap"
        )
    return lambda config: ExternalRun(config, port, wait, tables, turn)
