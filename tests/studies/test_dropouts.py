"""Drop-outs and returns by one rule (studies.playing.dropped_why), judged over
all of a participant's matches, and moved on by the study's sweep
(studies.sweep) when their page has gone quiet; the server's own outage never
counts as anyone's absence. The move path's count of timers is tested in
tests/game/test_away_players.py."""

from __future__ import annotations

import csv
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from game.models import Action, Seat, Table
from studies import clock, export, playing, stages, sweep
from studies.models import (
    DroppedWhy,
    Participant,
    Study,
    StudyClock,
    StudyMatch,
    StudyOutage,
    StudySeat,
)
from studies.views import SESSION_KEY
from tests.support.live_tables import live as live  # the fixture
from tests.support.study_tables import CHEAP, ONE, arrive, poll

pytestmark = pytest.mark.django_db
Stage = Participant.Stage


@pytest.fixture
def study(own_stand_in_study: Study) -> Study:
    """The example, its stand-in told apart from the seat plans' bots (conftest)."""
    return own_stand_in_study


def seated(study: Study) -> tuple[Participant, StudySeat]:
    p = poll(arrive(study, ONE))
    assert p.stage == Stage.PLAYING
    return p, StudySeat.objects.select_related("study_table__table").get(participant=p)


def own_seat(seat: StudySeat, table: Table | None = None):  # type: ignore[no-untyped-def]
    return Seat.objects.filter(table=table or seat.study_table.table, position=seat.position)


def now_of(p: Participant) -> Participant:
    return Participant.objects.get(pk=p.pk)


def test_one_timer_and_the_stand_ins_quick_moves_do_not_drop_anyone(study: Study) -> None:
    p, seat = seated(study)
    table = seat.study_table.table
    # One timer ran out, then the stand-in made five quick moves while they were away.
    for version in range(1, 7):
        Action.objects.create(
            table=table, version=version, round_number=1, seat=seat.position, action={},
            by_stand_in=True,
        )  # fmt: skip
    own_seat(seat).update(missed_in_a_row=1, most_missed_in_a_row=1)
    assert poll(p).stage == Stage.PLAYING
    own_seat(seat).update(missed_in_a_row=0, most_missed_in_a_row=2)  # came back after two
    assert poll(p).stage == Stage.PLAYING
    own_seat(seat).update(most_missed_in_a_row=3)  # three timers in a row at some point
    dropped = poll(p)
    assert dropped.stage == Stage.DROPPED and dropped.dropped_why == DroppedWhy.TIMERS
    assert StudySeat.objects.get(pk=seat.pk).dropped


def test_a_returner_who_finishes_gets_the_questionnaire(study: Study) -> None:
    p, seat = seated(study)
    own_seat(seat).update(missed_in_a_row=0, most_missed_in_a_row=2, away=False)
    Table.objects.filter(pk=seat.study_table.table_id).update(status=Table.Status.FINISHED)
    assert poll(p).stage == Stage.QUESTIONNAIRE


def test_dropping_is_decided_over_all_their_matches(study: Study) -> None:
    """Another participant's Continue started the next match before this one's
    page asked: the timers of the first match still count."""
    p, seat = seated(study)
    first = seat.study_table.table
    own_seat(seat).update(most_missed_in_a_row=3)
    Table.objects.filter(pk=first.pk).update(status=Table.Status.FINISHED)
    assert playing.next_match(seat.study_table, matches=2)  # another's poll
    assert StudyMatch.objects.filter(study_table=seat.study_table).count() == 2
    seat = StudySeat.objects.select_related("study_table__table").get(pk=seat.pk)
    assert seat.study_table.table != first and not own_seat(seat).get().most_missed_in_a_row
    assert [s.table_id for s in playing.match_seats(seat)] == [first.pk, seat.study_table.table_id]
    dropped = poll(p)
    assert dropped.stage == Stage.DROPPED and dropped.dropped_why == DroppedWhy.TIMERS


def test_the_sweep_drops_a_participant_away_too_long_and_no_one_sooner(
    study: Study, tmp_path: Path
) -> None:
    p, seat = seated(study)
    absent = study.definition["timeouts"]["dropout_absent_seconds"]
    own_seat(seat).update(
        away=True, missed_in_a_row=1, most_missed_in_a_row=1,
        away_since=timezone.now() - timedelta(seconds=absent - 20),
    )  # fmt: skip
    assert sweep.sweep().moved == 0 and now_of(p).stage == Stage.PLAYING
    own_seat(seat).update(away_since=timezone.now() - timedelta(seconds=absent + 5))
    swept = sweep.sweep()
    assert (swept.playing, swept.moved) == (1, 1)
    dropped = now_of(p)
    assert dropped.stage == Stage.DROPPED and dropped.dropped_why == DroppedWhy.AWAY
    assert sweep.sweep().moved == 0  # nothing twice
    export.export_study(study, tmp_path)
    with (tmp_path / "participants.csv").open() as f:
        [row] = list(csv.DictReader(f))
    assert (row["outcome"], row["dropped_why"]) == ("dropped", "away")


def test_an_outage_does_not_count_as_time_away(study: Study) -> None:
    p, seat = seated(study)
    absent = study.definition["timeouts"]["dropout_absent_seconds"]
    now = timezone.now()
    own_seat(seat).update(away=True, missed_in_a_row=1, away_since=now - timedelta(seconds=400))
    # The site was down for 350 of those 400 s (as the clock credited it).
    StudyOutage.objects.create(
        started_at=now - timedelta(seconds=380), ended_at=now - timedelta(seconds=30)
    )
    assert clock.absent_for(now - timedelta(seconds=400), now) == pytest.approx(50, abs=1)
    assert clock.absent_for(now - timedelta(seconds=10), now) == pytest.approx(10, abs=1)
    assert absent > 50
    sweep.sweep()
    assert now_of(p).stage == Stage.PLAYING


def test_a_finished_match_waits_for_one_still_away_until_they_ask_or_are_dropped(
    study: Study,
) -> None:
    p, seat = seated(study)
    own_seat(seat).update(away=True, missed_in_a_row=1, away_since=timezone.now())
    Table.objects.filter(pk=seat.study_table.table_id).update(status=Table.Status.FINISHED)
    sweep.sweep()
    assert now_of(p).stage == Stage.PLAYING  # they may come back for their questionnaire
    assert poll(p).stage == Stage.QUESTIONNAIRE  # their own page asked: they are back


def test_the_sweep_drops_a_waiter_whose_page_never_polled(study: Study) -> None:
    absent = study.definition["timeouts"]["dropout_absent_seconds"]
    p = arrive(study, 1, waited=absent + 10)  # the two-person condition: alone, waiting
    Participant.objects.filter(pk=p.pk).update(updated_at=timezone.now() - timedelta(hours=1))
    swept = sweep.sweep()
    assert swept.rooms == 1 and swept.moved == 1
    gone = now_of(p)
    assert gone.stage == Stage.DROPPED and gone.dropped_why == DroppedWhy.WAITING


def test_the_command_and_beat_sweep_the_studies(study: Study, capsys) -> None:  # type: ignore[no-untyped-def]
    from spadesite.celery import app

    seated(study)
    call_command("sweep_studies")
    assert "1 playing participant(s) looked at; 0 moved on" in capsys.readouterr().out
    entry = app.conf.beat_schedule["sweep-studies"]
    assert entry["task"] == "studies.sweep" and entry["schedule"] <= 30
    from studies import tasks

    assert tasks.sweep_studies.name == entry["task"]
    assert tasks.sweep_studies() == 0


def test_the_embedded_server_sweeps_the_studies_with_its_tables() -> None:
    from game.driver import sweeper

    assert sweep.sweep in sweeper._others  # registered by studies.apps


@pytest.mark.parametrize(
    ("why", "said"),
    [
        (DroppedWhy.WAITING, "page was closed for more than 2 minutes"),
        (DroppedWhy.TIMERS, "ran out 3 times in a row"),
        (DroppedWhy.AWAY, "away from the table for more than 2 minutes"),
        (DroppedWhy.LEFT, "You stopped taking part"),
        (DroppedWhy.RESEARCHER, "The researchers ended your session"),
    ],
)
def test_the_end_page_says_why_their_session_ended(study: Study, why: str, said: str) -> None:
    p = arrive(study, 1)
    stages.move(p, Stage.WAITING, Stage.DROPPED, why=why)
    client = Client()
    session = client.session
    session[SESSION_KEY] = {study.slug: p.pseudonym}
    session.save()
    text = client.get(f"/study/{study.slug}/end/").content.decode()
    assert 'id="why-ended"' in text and said in text and "what this means for your payment" in text


def test_the_table_page_tells_one_who_is_away_the_rule(study: Study) -> None:
    p, seat = seated(study)
    client = Client()
    session = client.session
    session[SESSION_KEY] = {study.slug: p.pseudonym}
    session.save()
    url = client.get(f"/study/{study.slug}/table/")["Location"]
    page = client.get(url).content.decode()
    assert 'id="away-rule"' in page and "stay away for 2 minutes" in page
    assert "runs out 3 times in a row" in page and "a computer player is playing" in page


@pytest.mark.django_db(transaction=True)
def test_a_server_stop_longer_than_absent_and_turn_seconds_drops_no_one(
    cheap_study: Study, live: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every server process stopped for 200 s (absent_seconds 120, turn_seconds
    45) with one participant waiting and two at their tables, one of them on
    turn. Back up: the game's sweep and the seat's socket resume the tables,
    the study's sweep and the waiter's poll run, and no one is dropped, no
    seat changes hands and no stand-in moves for the player on turn: their
    timer starts again."""
    from game.driver import sweeper

    settings.SPADES_STAND_IN_BOT = CHEAP
    waiter = arrive(cheap_study, 1)  # the two-person condition: waits alone
    people = [poll(arrive(cheap_study, ONE)) for _ in range(2)]
    seats = [StudySeat.objects.select_related("study_table__table").get(participant=p)
             for p in people]  # fmt: skip
    tables = [s.study_table.table for s in seats]
    on_turn = tables[0]
    assert live.pending_timers() == 2  # both on turn, their timers running
    live.timers.clear()  # the processes died, and their timers with them
    down = timezone.now() - timedelta(seconds=200)
    Table.objects.filter(pk__in=[t.pk for t in tables]).update(turn_started_at=down)
    Participant.objects.filter(pk=waiter.pk).update(last_seen=down)
    StudyClock.objects.update_or_create(pk=1, defaults={"alive_at": down})
    restarted = timezone.now() - timedelta(seconds=1)
    monkeypatch.setattr(clock, "_STARTED_AT", restarted)
    monkeypatch.setattr(sweeper, "STARTED_AT", restarted)
    actions = Action.objects.count()
    assert sweeper.sweep() == []  # nothing overdue: the server is a second up
    assert sweeper.resume_table(on_turn)  # their socket reconnects: the timer again
    [(delay, _, _)] = live.timers
    assert delay > on_turn.turn_seconds - 5
    sweep.sweep()
    poll(waiter)
    assert Action.objects.count() == actions  # no stand-in moved
    stages_now = dict(Participant.objects.values_list("pk", "stage"))
    assert Stage.DROPPED not in stages_now.values(), stages_now
    for seat in seats:
        assert playing.held_guest_id(seat) is not None
        assert not Seat.objects.get(table=seat.study_table.table, position=seat.position).away
    assert StudyClock.objects.get().outage_seconds == pytest.approx(200, abs=3)
