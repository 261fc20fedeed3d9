"""An honest turn timer: a stand-in never bids nil for a human, a player whose
timer ran out is marked away and no longer costs the table a whole timer per
move, sees what was played for them, and comes back by acting or saying so."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from channels.db import database_sync_to_async

from bots.registry import make_bot
from game import master, seating
from game.driver import bot_turns
from game.engine import Bid, Match, Rules, view_for
from game.engine.state import Phase
from game.errors import SeatError
from game.models import BOT_PERSONAS, Action, Seat, Table
from game.moves import matches
from tests.support import helpers
from tests.support.helpers import make_table
from tests.support.inline import InlineScheduler
from tests.support.sockets import TIMEOUT, connect, next_state

pytestmark = pytest.mark.django_db(transaction=True)

NO_BLIND = Rules(blind_nil=False)


def _seat(table: Table, position: int) -> Seat:
    return Seat.objects.get(table=table, position=position)


def _legal(table: Table) -> tuple[int, Any]:
    match = matches.load_match(table)
    seat = match.round.to_act
    return seat, view_for(match, seat).legal_actions[-1]


def test_a_stand_in_never_bids_nil_for_a_human() -> None:
    """On 400 deals where BIS+SRP itself bids nil about one time in ten, the
    stand-in's view takes nil and blind nil away: it bids its estimate instead."""
    bot = make_bot("BIS+SRP")
    own_nils = stand_in_nils = 0
    rules = Rules(blind_nil=True, blind_nil_min_deficit=0)
    for i in range(400):
        match = Match(rules, seed=f"away/{i}")
        r = match.round
        rng = random.Random(i)
        while r.phase is Phase.BIDDING:
            view = view_for(match, r.to_act)
            if view.hand is not None:
                own = bot.act(view, random.Random(i))
                own_nils += isinstance(own, Bid) and own.tricks == 0
            action = bot.act(bot_turns.stand_in_view(view), rng)
            assert not (isinstance(action, Bid) and action.tricks == 0), (i, action)
            stand_in_nils += isinstance(action, Bid) and action.tricks == 0
            match.apply(action)
            r = match.round
    assert own_nils >= 20  # the deals do tempt a nil
    assert stand_in_nils == 0


def test_nil_is_left_when_it_is_the_only_bid() -> None:
    """Should a rule set ever leave nil as the only bid, the stand-in keeps it
    rather than have no legal bid at all."""
    match = Match(Rules(blind_nil=False), seed="forced")
    view = view_for(match, match.round.to_act)
    only_nil = replace(view, legal_actions=(Bid(view.seat, 0),))
    assert bot_turns.stand_in_view(only_nil) is only_nil
    assert bot_turns.stand_in_view(view).legal_actions == tuple(
        a for a in view.legal_actions if a != Bid(view.seat, 0)
    )


def test_the_first_time_out_marks_the_player_away(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=NO_BLIND, stand_in_bots=True)
    first = matches.load_match(table).round.to_act
    assert live.run_timers() == 1
    seat = _seat(table, first)
    bid = Action.objects.get(table=table).action
    assert seat.away and bid["type"] == "bid" and bid["tricks"] > 0
    assert seat.played_for == [bid]
    public = seat.to_public_dict()
    assert public["away"] is True and public["played_for"] == [bid]


def test_an_away_player_costs_the_table_no_whole_timer(
    live: InlineScheduler, settings: Any
) -> None:
    table = make_table("HHHH", rules=NO_BLIND, stand_in_bots=True)
    away = matches.load_match(table).round.to_act
    live.run_timers()  # the first player times out
    table.refresh_from_db()
    plan = master.next_turn(table, {away: _seat(table, away)}, away, table.version)
    assert plan is not None and plan.away and plan.delay == master.bot_delay_for(table) < 2
    # The other three act; each time the away seat is due, its stand-in moves
    # at once (no timer is left waiting for it).
    for _ in range(12):
        table.refresh_from_db()
        seat, action = _legal(table)
        assert seat != away
        master.submit(table.pk, seat, action, table.version)
    table.refresh_from_db()
    by_away = Action.objects.filter(table=table, seat=away)
    assert by_away.count() >= 3 and all(a.by_stand_in for a in by_away)
    played = _seat(table, away).played_for
    assert played == [a.action for a in by_away.order_by("version")]


def test_im_back_restores_the_players_own_timer(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=NO_BLIND, stand_in_bots=True)
    away = matches.load_match(table).round.to_act
    live.run_timers()
    assert seating.mark_back(table, away) is True
    seat = _seat(table, away)
    assert not seat.away and seat.played_for == []
    assert seating.mark_back(table, away) is False  # already back
    # A stand-in scheduled while they were away finds them back and does nothing.
    table.refresh_from_db()
    assert bot_turns.play_turn(table.pk, away, table.version, True, True) == bot_turns.NOT_DUE


def test_a_players_own_move_clears_away(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=NO_BLIND, stand_in_bots=True)
    seat, action = _legal(table)
    Seat.objects.filter(table=table, position=seat).update(away=True, played_for=[{"x": 1}])
    master.submit(table.pk, seat, action, table.version)
    back = _seat(table, seat)
    assert not back.away and back.played_for == []
    assert not Action.objects.get(table=table).by_stand_in


def test_the_seat_counts_timers_that_ran_out_not_the_stand_ins_moves(
    live: InlineScheduler,
) -> None:
    """A study's drop-out rule counts timers (studies.playing): one timer, then
    the stand-in's quick moves while the player is away, is one; "I'm back"
    and a second timer make two in a row; their own move ends the run (the
    most in a row is kept)."""
    table = make_table("HHHH", rules=NO_BLIND, stand_in_bots=True)
    away = matches.load_match(table).round.to_act
    live.run_timers()  # their timer runs out: the stand-in bids
    seat = _seat(table, away)
    assert (seat.missed_in_a_row, seat.most_missed_in_a_row) == (1, 1)
    assert seat.away and seat.away_since is not None
    went_away = seat.away_since
    for _ in range(12):  # around the table thrice: the stand-in moves at once for them
        table.refresh_from_db()
        seat_to_act, action = _legal(table)
        master.submit(table.pk, seat_to_act, action, table.version)
    seat = _seat(table, away)
    assert Action.objects.filter(table=table, seat=away, by_stand_in=True).count() >= 3
    assert (seat.missed_in_a_row, seat.away_since) == (1, went_away)
    assert seating.mark_back(table, away)
    assert _seat(table, away).away_since is None
    table.refresh_from_db()
    while matches.load_match(table).round.to_act != away:
        seat_to_act, action = _legal(table)
        master.submit(table.pk, seat_to_act, action, table.version)
        table.refresh_from_db()
    live.run_timers()  # back, but their timer runs out again
    seat = _seat(table, away)
    assert (seat.missed_in_a_row, seat.most_missed_in_a_row) == (2, 2) and seat.away
    assert seating.mark_back(table, away)
    table.refresh_from_db()
    while matches.load_match(table).round.to_act != away:
        seat_to_act, action = _legal(table)
        master.submit(table.pk, seat_to_act, action, table.version)
        table.refresh_from_db()
    seat_to_act, action = _legal(table)
    master.submit(table.pk, away, action, table.version)  # their own move
    seat = _seat(table, away)
    assert (seat.missed_in_a_row, seat.most_missed_in_a_row) == (0, 2)
    assert not seat.away and seat.away_since is None


async def test_the_back_frame(live: InlineScheduler) -> None:
    table = await database_sync_to_async(make_table)("HHHH", rules=NO_BLIND, stand_in_bots=True)
    first = (await database_sync_to_async(matches.load_match)(table)).round.to_act
    comm, state = await connect(table, f"g{first}")
    watcher, _ = await connect(table)
    await database_sync_to_async(live.run_timers)()
    state = await next_state(comm, at_least=1)
    assert state["view"]["table"]["seats"][first]["away"] is True
    await watcher.send_json_to({"type": "back"})
    refused = await watcher.receive_json_from(timeout=TIMEOUT)
    while refused["type"] == "state":  # the stand-in's move reaching the watcher
        refused = await watcher.receive_json_from(timeout=TIMEOUT)
    assert refused["type"] == "error" and refused["code"] == "spectator"
    await comm.send_json_to({"type": "back"})
    while True:
        frame = await comm.receive_json_from(timeout=TIMEOUT)
        if frame["type"] == "state" and not frame["view"]["table"]["seats"][first]["away"]:
            break
    for c in (comm, watcher):
        await c.disconnect()


# ----- names: four bots of one kind are four players you can tell apart ---------------


def test_bots_have_distinct_persona_names_and_say_which_bot(live: InlineScheduler) -> None:
    table = make_table("BBHB", bot="BIS+SRP")
    seats = helpers.table_view(table, 2)["table"]["seats"]
    bots = [s for s in seats if s["kind"] == "bot"]
    assert len({s["name"] for s in bots}) == 3
    assert all(s["bot_name"] == "BIS+SRP" and "+" not in s["name"] for s in bots)
    assert [s["name"] for s in bots] == [BOT_PERSONAS[s["position"]] for s in bots]


def test_the_lobby_names_the_bot_kind(client: Any) -> None:
    table = make_table("BH", start=False, bot="BIS+SRP")
    from lobby.models import TableListing

    TableListing.objects.update_or_create(table=table, defaults={"private": False})
    listed = next(
        t for t in client.get("/tables.json").json()["tables"] if t["id"] == table.public_id
    )
    north = listed["seats"][0]
    assert north == {"position": 0, "state": "bot", "name": "Nora", "bot": "BIS+SRP"}


# ----- leaving a match is explicit: a bot takes the seat -------------------------------


def test_leaving_a_match_hands_the_seat_to_a_bot(client: Any, live: InlineScheduler) -> None:
    client.post("/play/", {"name": "Lea"})
    table = Table.objects.get()
    assert matches.load_match(table).round.to_act == 2  # the bots bid up to her turn
    assert len(client.get("/").context["running"]) == 1
    response = client.post(f"/t/{table.public_id}/seat/", {"op": "leave"})
    assert response.status_code == 200, response.content
    seat = _seat(table, 2)
    assert seat.kind == Seat.Kind.BOT and seat.bot_name and not seat.guest_id
    table.refresh_from_db()
    # The bot that took her seat moved at once, and the match goes on without her.
    assert Action.objects.filter(table=table, seat=2).exists()
    assert client.get("/").context["running"] == []


def test_leaving_is_refused_where_no_bot_may_stand_in(live: InlineScheduler) -> None:
    table = make_table("HHHH", rules=NO_BLIND, stand_in_bots=False)
    with pytest.raises(SeatError, match="stand-in"):
        seating.hand_over(table, 1)
    assert _seat(table, 1).kind == Seat.Kind.HUMAN
