"""The stand-in fill told truly: a participant whose partner seat the waiting
room's stand-in took under a name reads a debrief that says so (the file's
``stand_in_debrief`` or the site's text naming the seats), also when dropped;
the fill is flagged per table, round and seat in the export and counts as a
stand-in round there; the file's key is checked at its line."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from game.models import Action, RoundRecordRow, Table
from studies import export, stages, stand_in
from studies.definition import StudyFileError, parse
from studies.loading import load_study
from studies.models import Participant, Study, StudyTable
from tests.studies.conftest import example_text, line_of
from tests.support.study_export import round_rows_of_fake
from tests.support.study_pages import client_of
from tests.support.study_tables import ONE, TWO, arrive, poll

pytestmark = pytest.mark.django_db
Stage = Participant.Stage


@pytest.fixture
def study(study_file) -> Study:
    text = example_text().replace('stand_in_bot = "BIS+SRP"', 'stand_in_bot = "RB+SRP"')
    return load_study(study_file(text))[0]


@pytest.fixture
def plain_study(study_file) -> Study:
    """The example without its stand_in_debrief: the site's text applies."""
    text = example_text()
    start = text.index("# Optional: the debrief of one who waited alone")
    end = text.index("[consent]")
    return load_study(study_file(text[:start] + text[end:]))[0]


def alone(study: Study) -> Participant:
    """A participant of the two-participant "names" condition seated with the stand-in."""
    return poll(arrive(study, TWO, waited=61))


def test_a_lone_participant_gets_the_stand_in_and_a_true_debrief(plain_study: Study) -> None:
    p = alone(plain_study)
    assert p.stage == Stage.PLAYING
    study_table = StudyTable.objects.get()
    assert stand_in.fill_positions(study_table) == (2,)  # they sit N, the stand-in S
    assert stand_in.shown_under_a_name(p) == (2,) and stages.needs_debrief(p)
    Table.objects.filter(pk=study_table.table_id).update(status=Table.Status.FINISHED)
    p = poll(p)
    assert p.stage == Stage.QUESTIONNAIRE
    p = stages.answer_questionnaire(
        p, {"partner_trust": "3", "partner_skill": "3", "enjoyment": "3", "comments": "ok"}
    )
    assert p.stage == Stage.DEBRIEF
    text = client_of(plain_study, p).get(f"/study/{plain_study.slug}/debrief/").content.decode()
    assert "your partner (South) and your opponents (East and West) were computer programs" in (
        text
    )
    assert "The seat at South was meant for another participant" in text
    assert "Your partner was another participant" not in text  # the condition's, untrue here
    assert p.pseudonym in text  # their reference, for a withdrawal


def test_the_files_stand_in_debrief_is_shown_where_it_applies(study: Study) -> None:
    p = alone(study)
    text = stand_in.debrief_of(p)
    assert text.startswith("Thank you for taking part. One thing") and "all three" in text
    paired_first = poll(arrive(study, TWO, waited=5))
    paired = poll(arrive(study, TWO))
    assert poll(paired_first).stage == paired.stage == Stage.PLAYING
    assert stand_in.debrief_for(paired) is None
    assert "Your partner was another participant" in stand_in.debrief_of(paired)
    lone_bots = poll(arrive(study, ONE))  # one participant seat: the stand-in never fills
    assert stand_in.debrief_for(lone_bots) is None and not stages.needs_debrief(lone_bots)


def test_a_dropped_participant_shown_the_stand_in_is_debriefed_on_the_end_page(
    plain_study: Study,
) -> None:
    p = alone(plain_study)
    Table.objects.filter(pk=StudyTable.objects.get().table_id).update(
        status=Table.Status.ABANDONED
    )
    p = poll(p)
    assert p.stage == Stage.DROPPED
    page = client_of(plain_study, p).get(f"/study/{plain_study.slug}/end/")
    text = page.content.decode()
    assert "your partner (South)" in text and p.pseudonym in text
    gone = arrive(plain_study, TWO)  # dropped from the waiting room: saw nothing to tell
    gone.move_to(Stage.DROPPED)
    gone.save()
    text = client_of(plain_study, gone).get(f"/study/{plain_study.slug}/end/").content.decode()
    assert "About this study" not in text and "This session has ended" in text


def test_the_default_text_counts_its_seats_rightly() -> None:
    plan = ["participant", "participant", "participant", "BIS+SRP"]
    text = stand_in.default_debrief(0, [2], plan)
    assert "your partner (South) and your opponent (West) were computer programs" in text
    assert "The other seats meant for participants had participants in them." in text
    one = stand_in.default_debrief(0, [2], ["participant", "participant"] * 2)
    assert "your partner (South) was a computer program (a bot), not a person" in one


def test_the_fill_is_flagged_per_table_round_and_seat_in_the_export(
    plain_study: Study, tmp_path: Path
) -> None:
    p = alone(plain_study)
    Participant.objects.update(pilot=False)
    table = StudyTable.objects.get().table
    Action.objects.create(table=table, version=1, round_number=1, seat=2, action={"bid": 3})
    export.export_study(plain_study, tmp_path, include_pilot=True)
    people = list(csv.DictReader((tmp_path / "participants.csv").open()))
    assert [(r["pseudonym"], r["stand_in_seats"]) for r in people] == [(p.pseudonym, "S")]
    (action,) = list(csv.DictReader((tmp_path / "actions.csv").open()))
    assert action["player_kind"] == "stand-in" and action["player"] == "BIS+SRP"
    assert action["stand_in_fill"] == "true"
    entry = export.study_tables(plain_study)[0]
    assert entry.stand_in == frozenset({2})
    row = RoundRecordRow(
        table=table,
        round_number=1,
        finished_at=table.created_at,
        dealer=0,
        seat_kinds="HBBB",
        stand_in_bids="0000",
        blind_nils="0000",
        stand_in_round=False,
    )
    from studies.export_rounds import round_rows_of

    rows = list(round_rows_of_fake(round_rows_of, entry, row))
    assert rows[0]["player_kind_s"] == "stand-in" and rows[0]["actor_s"] == "stand-in"
    assert rows[0]["player_kind_n"] == "participant" and rows[0]["player_kind_e"] == "bot"
    assert rows[0]["stand_in_fill"] is True and rows[0]["stand_in_round"] is True


def test_stand_in_debrief_is_checked_at_its_line() -> None:
    text = example_text()
    bots = text.replace(
        'disclosure = "bots"\n', 'disclosure = "bots"\nstand_in_debrief = "Told."\n', 1
    )
    with pytest.raises(StudyFileError) as error:
        parse(bots)
    (problem,) = error.value.problems
    line = line_of(bots, 'stand_in_debrief = "Told."')
    assert problem.startswith(f"study.toml:{line}: ") and "shows its bots as bots" in problem
    one_seat = bots.replace(
        'disclosure = "bots"\nstand_in_debrief', 'disclosure = "names"\ndebrief = "D."\n'
        "stand_in_debrief",
    )
    with pytest.raises(StudyFileError) as error:
        parse(one_seat)
    assert "has one participant seat" in error.value.problems[0]
    empty = text.replace('stand_in_debrief = """', 'stand_in_debrief = "  "\nx = """', 1)
    with pytest.raises(StudyFileError) as error:
        parse(empty)
    assert any("stand_in_debrief must be a non-empty text" in p for p in error.value.problems)
    assert parse(text).conditions[1].stand_in_debrief.strip().startswith("Thank you")
