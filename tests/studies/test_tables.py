"""From the waiting room to the tables: participants of a condition grouped by
their seat plan, the waiting timeout's stand-in, the table page reached with
the study's guest identity, and the end of play (questionnaire or dropped)."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from game import seating
from game.models import Action, Seat, Table
from game.sockets import frames
from studies import playing, sweep, views, waiting_room
from studies.loading import load_study
from studies.models import DroppedWhy, Participant, Study, StudySeat, StudyTable
from studies.views import SESSION_KEY
from tests.studies.conftest import example_text
from tests.support.helpers import play_humans
from tests.support.live_tables import live as live  # the fixture
from tests.support.sqlite_threads import threads_database
from tests.support.study_tables import CHEAP, ONE, TWO, arrive, poll

Stage = Participant.Stage


@pytest.fixture
def study(own_stand_in_study: Study) -> Study:
    """The example, its stand-in told apart from the seat plans' bots (conftest)."""
    return own_stand_in_study


def seats_of(table: Table) -> list[tuple[int, str, str, str]]:
    return [(s.position, s.kind, s.bot_name, s.guest_id) for s in table.seats.order_by("position")]


@pytest.mark.django_db
def test_two_participants_arriving_one_after_the_other_form_one_table(study: Study) -> None:
    first = arrive(study, TWO, waited=5)
    assert poll(first).stage == Stage.WAITING and not StudyTable.objects.exists()
    second = arrive(study, TWO)
    assert poll(second).stage == Stage.PLAYING
    assert poll(first).stage == Stage.PLAYING
    study_table = StudyTable.objects.get()
    table = study_table.table
    assert table.status == Table.Status.PLAYING and study_table.filled_by_stand_in == 0
    assert study_table.condition.name == "two-humans"
    assert table not in seating.list_open_tables()  # never in the lobby's list
    assert table.turn_seconds == 45 and table.bot_delay == 1.5 and table.stand_in_bots
    assert table.rules["winning_goal"] == 100 and table.rules["blind_nil"] is False
    assert seats_of(table) == [
        (0, "human", "", playing.guest_id_of(first)),  # the longest waiting first
        (1, "bot", "BIS+SRP", ""),
        (2, "human", "", playing.guest_id_of(second)),
        (3, "bot", "BIS+SRP", ""),
    ]
    assert list(StudySeat.objects.values_list("participant", "position")) == [
        (first.pk, 0),
        (second.pk, 2),
    ]
    state = waiting_room.state(poll(first))
    assert state == {"stage": "playing", "waiting": 0, "table": f"/t/{table.public_id}/"}
    assert first.pseudonym not in playing.guest_id_of(first)


@pytest.mark.django_db
def test_a_lone_participant_of_the_one_participant_condition_is_seated_at_once(
    study: Study,
) -> None:
    p = poll(arrive(study, ONE))
    assert p.stage == Stage.PLAYING
    table = StudyTable.objects.get().table
    assert seats_of(table) == [
        (0, "bot", "BIS+SRP", ""),
        (1, "bot", "RB+SRP", ""),
        (2, "human", "", playing.guest_id_of(p)),
        (3, "bot", "RB+SRP", ""),
    ]


@pytest.mark.django_db
def test_a_participant_alone_past_the_timeout_gets_the_stand_in_for_the_other_seat(
    study: Study,
) -> None:
    patient = arrive(study, TWO, waited=30)
    assert poll(patient).stage == Stage.WAITING  # the timeout is 60 seconds
    late = arrive(study, TWO, waited=61)
    assert poll(patient).stage == Stage.PLAYING and poll(late).stage == Stage.PLAYING
    alone = arrive(study, TWO, waited=61)
    assert poll(alone).stage == Stage.PLAYING
    filled = StudyTable.objects.get(seats__participant=alone)
    assert filled.filled_by_stand_in == 1
    assert seats_of(filled.table) == [
        (0, "human", "", playing.guest_id_of(alone)),
        (1, "bot", "BIS+SRP", ""),
        (2, "bot", "RB+SRP", ""),  # the study's stand-in
        (3, "bot", "BIS+SRP", ""),
    ]
    assert StudyTable.objects.get(seats__participant=patient).filled_by_stand_in == 0


@pytest.mark.django_db
def test_a_participant_whose_waiting_page_was_closed_is_dropped_not_seated(
    study: Study,
) -> None:
    gone = arrive(study, TWO, waited=50)
    assert poll(gone).stage == Stage.WAITING and gone.pk  # seen now
    absent = study.definition["timeouts"]["dropout_absent_seconds"]
    assert absent == 120  # the example's
    # Their page stopped asking for news longer ago than the study allows.
    Participant.objects.filter(pk=gone.pk).update(
        last_seen=timezone.now() - timedelta(seconds=absent + 1)
    )
    here = arrive(study, TWO)
    assert poll(here).stage == Stage.WAITING  # not seated with someone who left
    assert not StudyTable.objects.exists()
    assert Participant.objects.get(pk=gone.pk).stage == Stage.DROPPED
    assert waiting_room.state(poll(here))["waiting"] == 1
    # A page that keeps polling is never dropped, however long the wait.
    later = arrive(study, TWO, waited=10)
    assert poll(later).stage == Stage.PLAYING and poll(here).stage == Stage.PLAYING


@pytest.mark.django_db
def test_the_table_page_knows_the_participant_by_the_studys_guest_identity(
    study: Study,
) -> None:
    p = arrive(study, ONE)
    client = Client()
    session = client.session
    session[SESSION_KEY] = {study.slug: p.pseudonym}
    session.save()
    assert client.get(f"/study/{study.slug}/waiting/")["Location"] == f"/study/{study.slug}/table/"
    table = StudyTable.objects.get().table
    state = client.get(f"/study/{study.slug}/state/").json()
    assert state["page"] == f"/study/{study.slug}/table/"
    assert state["table"] == f"/t/{table.public_id}/"
    assert client.get(state["page"])["Location"] == state["table"]
    page = client.get(state["table"])
    assert page.status_code == 200 and page.context["seat"] == 2
    assert page.context["invite_url"] is None  # no invite link to pass around


@pytest.mark.django_db
def test_a_finished_match_moves_the_participant_to_the_questionnaire(study: Study) -> None:
    p = poll(arrive(study, ONE))
    table = StudyTable.objects.get().table
    assert poll(p).stage == Stage.PLAYING
    Table.objects.filter(pk=table.pk).update(status=Table.Status.FINISHED)
    p = poll(p)
    assert p.stage == Stage.QUESTIONNAIRE and Stage.QUESTIONNAIRE in p.stage_times
    assert waiting_room.state(p)["table"] is None
    assert not StudySeat.objects.get(participant=p).dropped


@pytest.mark.django_db(transaction=True)
def test_one_timer_then_the_stand_in_is_not_a_drop_out_but_silence_is(
    cheap_study: Study, live: Any, settings: Any
) -> None:
    """Their timer runs out once and the stand-in plays the match out for them
    (many stand-in moves, one timer): not dropped. Whoever asks at the end
    gets the questionnaire; one whose page stays quiet is dropped by the
    sweep once away for ``absent_seconds``."""
    settings.SPADES_STAND_IN_BOT = CHEAP
    people = [poll(arrive(cheap_study, ONE)) for _ in range(2)]
    tables = [StudySeat.objects.get(participant=p).study_table.table for p in people]
    while any(Table.objects.get(pk=t.pk).status == Table.Status.PLAYING for t in tables):
        assert live.run_timers()  # a timer runs out; away, the stand-in plays on
    for table in tables:
        seat = Seat.objects.get(table=table, position=2)
        assert (seat.most_missed_in_a_row, seat.away) == (1, True)
        assert Action.objects.filter(table=table, seat=2, by_stand_in=True).count() > 3
    back, quiet = people
    assert poll(back).stage == Stage.QUESTIONNAIRE  # their page asked
    absent = cheap_study.definition["timeouts"]["dropout_absent_seconds"]
    Seat.objects.filter(table=tables[1], position=2).update(
        away_since=timezone.now() - timedelta(seconds=absent + 1)
    )
    assert sweep.sweep().moved == 1
    quiet = Participant.objects.get(pk=quiet.pk)
    assert quiet.stage == Stage.DROPPED and quiet.dropped_why == DroppedWhy.AWAY
    assert StudySeat.objects.get(participant=quiet).dropped


@pytest.mark.django_db(transaction=True)
def test_concurrent_polls_never_seat_anyone_twice(
    cheap_study: Study, live: Any, tmp_path: Path
) -> None:
    waiting = [arrive(cheap_study, TWO, waited=n) for n in range(4)]
    start, errors = threading.Barrier(8), []

    def keep_polling(n: int) -> None:
        try:
            start.wait(timeout=10)
            for _ in range(3):
                poll(waiting[n % 4])
        except Exception as error:  # reported below
            errors.append(error)
        finally:
            connection.close()

    with threads_database(tmp_path / "db.sqlite3") as database:
        threads = [threading.Thread(target=keep_polling, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        if database is not None:
            seated = database.execute(
                "SELECT participant_id, study_table_id FROM studies_studyseat"
            ).fetchall()
            tables = database.execute("SELECT COUNT(*) FROM studies_studytable").fetchone()[0]
            stages = {s for (s,) in database.execute("SELECT stage FROM studies_participant")}
        else:
            seated = list(StudySeat.objects.values_list("participant", "study_table"))
            tables = StudyTable.objects.count()
            stages = set(Participant.objects.values_list("stage", flat=True))
    assert tables == 2 and stages == {Stage.PLAYING}
    assert sorted(p for p, _ in seated) == sorted(p.pk for p in waiting)
    assert sorted(t for _, t in seated).count(seated[0][1]) == 2


@pytest.mark.django_db(transaction=True)
def test_in_a_names_condition_no_frame_or_page_shows_the_bots_as_bots(
    cheap_study: Study, live: Any
) -> None:
    first, second = arrive(cheap_study, TWO, waited=1), arrive(cheap_study, TWO)
    poll(first)
    table = StudyTable.objects.get().table
    assert table.bots_as_players
    assert table.talk == Table.Talk.OFF  # a study table is silent unless its file says
    assert list(table.seats.values_list("kind", flat=True)) == ["human", "bot", "human", "bot"]
    client = Client()
    session = client.session
    session[SESSION_KEY] = {cheap_study.slug: second.pseudonym}
    session.save()
    url = client.get(f"/study/{cheap_study.slug}/table/")["Location"]
    texts = [
        client.get(url).content.decode(),
        client.get(f"{url}seating.json").content.decode(),
        frames.state_frame(table.pk, 2)[1],
        frames.state_frame(table.pk, None)[1],
    ]
    assert live.run_timers()  # moves, the stand-in's too, then their frames again
    texts += [frames.state_frame(table.pk, 2)[1], frames.state_frame(table.pk, 0)[1]]
    for text in texts:
        assert CHEAP not in text
        assert '"kind": "bot"' not in text and '"state": "bot"' not in text
    shown = json.loads(client.get(f"{url}seating.json").content)["seats"]
    assert [(s["state"], s["bot"]) for s in shown] == [("human", None)] * 4
    assert [s["name"] for s in shown] == ["Nadia", "Ezra", "Sam", "Wyatt"]


@pytest.mark.django_db
def test_in_a_bots_condition_the_bots_are_shown_as_bots(study: Study) -> None:
    poll(arrive(study, ONE))
    table = StudyTable.objects.get().table
    assert not table.bots_as_players
    text = frames.state_frame(table.pk, 2)[1]
    assert '"kind": "bot"' in text  # what the names condition's check looks for
    frame = json.loads(text)
    shown = [(s["kind"], s["bot_name"]) for s in frame["view"]["table"]["seats"]]
    assert shown == [("bot", "BIS+SRP"), ("bot", "RB+SRP"), ("human", None), ("bot", "RB+SRP")]


@pytest.mark.django_db
def test_a_participant_who_leaves_the_seat_is_dropped_and_the_stand_in_keeps_it(
    study: Study,
) -> None:
    p = poll(arrive(study, ONE))
    table = StudyTable.objects.get().table
    seating.hand_over(table, 2)
    p = poll(p)
    assert p.stage == Stage.DROPPED and StudySeat.objects.get(participant=p).dropped
    assert Seat.objects.get(table=table, position=2).kind == Seat.Kind.BOT
    assert poll(p).stage == Stage.DROPPED  # and stays so


@pytest.mark.django_db
def test_after_the_match_the_table_page_leads_back_to_the_study_not_to_a_rematch(
    study: Study,
) -> None:
    p = arrive(study, ONE)
    client = Client()
    session = client.session
    session[SESSION_KEY] = {study.slug: p.pseudonym}
    session.save()
    back = f"/study/{study.slug}/table/"
    assert client.get(f"/study/{study.slug}/waiting/")["Location"] == back  # seated
    url = client.get(back)["Location"]
    page = client.get(url).content.decode()
    assert f'id="after-match-link" href="{back}"' in page and 'id="rematch-form"' not in page
    table = StudyTable.objects.get().table
    Table.objects.filter(pk=table.pk).update(status=Table.Status.FINISHED)
    assert client.post(f"{url}rematch/")["Location"] == url  # refused
    assert Table.objects.count() == 1
    assert client.get(back)["Location"] == views.page_url(Participant.objects.get(pk=p.pk))
    assert Participant.objects.get(pk=p.pk).stage == Stage.QUESTIONNAIRE


@pytest.mark.django_db
def test_the_admin_shows_the_study_tables(study: Study, admin_client: Client) -> None:
    p = poll(arrive(study, ONE))
    study_table = StudyTable.objects.get()
    listed = admin_client.get("/admin/studies/studytable/")
    assert listed.status_code == 200
    shown = admin_client.get(f"/admin/studies/studytable/{study_table.pk}/change/")
    assert shown.status_code == 200 and p.pseudonym in shown.content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_played_table_reaches_the_export_with_the_partnerships_points(
    cheap_study: Study, live: Any, tmp_path: Path
) -> None:
    import csv
    import random

    from game.models import MatchResult
    from game.moves import matches
    from studies import export
    from studies.models import RecruitmentId

    p = poll(arrive(cheap_study, ONE))
    RecruitmentId.objects.create(participant=p, study=cheap_study, raw_id="R1", key_hash="h1")
    table = StudyTable.objects.get().table
    play_humans(table, random.Random(7))  # the participant (South); the bots play inline
    result = MatchResult.objects.get(table=table)
    assert export.points_won(p) == result.score_ns  # South sits with North
    export.export_study(cheap_study, tmp_path, with_payments=True, include_pilot=True)
    with (tmp_path / "actions.csv").open() as f:
        actions = list(csv.DictReader(f))
    assert len(actions) == Action.objects.filter(table=table).count()
    assert {a["player"] for a in actions if a["seat"] == "S"} == {p.pseudonym}
    assert {a["player_kind"] for a in actions if a["seat"] != "S"} == {"bot"}
    with (tmp_path / "payments.csv").open() as f:
        (paid,) = list(csv.DictReader(f))
    assert paid["points"] == str(result.score_ns)
    with (tmp_path / "rounds.csv").open() as f:
        rounds = list(csv.DictReader(f))
    played = matches.load_match(table)
    assert [int(r["round"]) for r in rounds] == list(range(1, result.rounds + 1))
    assert {r["table"] for r in rounds} == {table.public_id}
    assert {r["condition"] for r in rounds} == {StudyTable.objects.get().condition.name}
    assert {(r["player_kind_s"], r["player_s"], r["actor_s"]) for r in rounds} == {
        ("participant", p.pseudonym, "human")
    }
    assert {r["player_n"] for r in rounds} == {CHEAP}
    for row, state in zip(rounds, played.rounds, strict=True):
        ns, ew = state.result
        assert (int(row["score_ns"]), int(row["score_ew"])) == (ns.score_after, ew.score_after)
        bids = [int(row[f"bid_{s}"]) for s in "nesw"]
        assert bids == list(state.bids)
    assert rounds[-1]["match_winner"] == ("NS" if result.winner == 0 else "EW")
    assert all(r["match_winner"] == "" for r in rounds[:-1])


@pytest.mark.django_db(transaction=True)
def test_a_study_of_rounds_ends_each_match_after_that_many_rounds(
    study_file: Any, live: Any
) -> None:
    import random

    from game.models import MatchResult
    from game.moves import matches

    text = example_text().replace("BIS+SRP", CHEAP).replace("RB+SRP", CHEAP)
    text = text.replace("matches = 1 ", "rounds = 2 ")
    text = text.replace("winning_goal = 100\n", "").replace("losing_goal = -100\n", "")
    rounds_study = load_study(study_file(text))[0]
    assert rounds_study.definition["play"]["rounds"] == 2
    p = poll(arrive(rounds_study, ONE))
    table = StudyTable.objects.get().table
    assert table.rules["round_limit"] == 2
    assert (table.rules["winning_goal"], table.rules["losing_goal"]) == (10_000, -10_000)
    play_humans(table, random.Random(3))  # the participant (South); the bots play inline
    result = MatchResult.objects.get(table=table)
    assert result.rounds >= 2  # two, or more while the scores were tied
    played = matches.load_match(table)
    assert played.is_over and len(played.rounds) == result.rounds
    if result.rounds == 2:
        assert played.scores[0] != played.scores[1]
    assert poll(p).stage == Stage.QUESTIONNAIRE


@pytest.mark.django_db
def test_a_study_that_says_so_keeps_its_tables_out_of_the_ratings(study_file) -> None:
    rated = load_study(study_file(example_text()))[0]
    poll(arrive(rated, ONE))
    assert StudyTable.objects.get().table.rated
    text = example_text().replace("rated = true", "rated = false")
    unrated = load_study(study_file(text.replace('slug = "', 'slug = "x'), "other.toml"))[0]
    poll(arrive(unrated, ONE))
    assert not StudyTable.objects.get(study=unrated).table.rated
    bad = example_text().replace("rated = true", 'rated = "no"')
    with pytest.raises(Exception, match="rated"):
        load_study(study_file(bad, "bad.toml"))


@pytest.mark.django_db(transaction=True)
def test_a_study_of_two_matches_plays_the_second_at_a_new_table_with_the_same_seats(
    study_file: Any, live: Any, tmp_path: Path
) -> None:
    import csv
    import random

    from game.models import MatchResult
    from studies import export
    from studies.models import StudyMatch

    text = example_text().replace("BIS+SRP", CHEAP).replace("RB+SRP", CHEAP)
    two = load_study(study_file(text.replace("matches = 1 ", "matches = 2 ")))[0]
    p = poll(arrive(two, ONE))
    study_table = StudyTable.objects.get()
    first = study_table.table
    rng = random.Random(5)
    play_humans(first, rng)  # the participant (South); the bots play inline
    assert poll(p).stage == Stage.PLAYING  # one match of two: on to the next
    assert poll(p).stage == Stage.PLAYING  # a second poll starts no third
    study_table.refresh_from_db()
    second = study_table.table
    assert second != first and second.status == Table.Status.PLAYING
    assert seats_of(second) == seats_of(first)
    assert (second.study_condition, second.pilot) == (first.study_condition, first.pilot)
    assert list(StudyMatch.objects.values_list("number", "table")) == [
        (1, first.pk),
        (2, second.pk),
    ]
    assert waiting_room.state(poll(p))["table"] == f"/t/{second.public_id}/"
    play_humans(second, rng)
    assert poll(p).stage == Stage.QUESTIONNAIRE
    assert StudyMatch.objects.count() == 2  # no third match
    results = {r.table_id: r for r in MatchResult.objects.all()}
    assert export.points_won(p) == results[first.pk].score_ns + results[second.pk].score_ns
    export.export_study(two, tmp_path, include_pilot=True)
    with (tmp_path / "actions.csv").open() as f:
        tables = {(row["table"], row["match"]) for row in csv.DictReader(f)}
    assert tables == {(first.public_id, "1"), (second.public_id, "2")}
    with (tmp_path / "rounds.csv").open() as f:
        rounds = list(csv.DictReader(f))
    assert len(rounds) == results[first.pk].rounds + results[second.pk].rounds
    assert {(r["table"], r["match"]) for r in rounds} == tables
    assert [r["match_winner"] != "" for r in rounds].count(True) == 2
