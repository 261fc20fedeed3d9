"""An external bot in a study's condition (issue 60, item 3): the seat plan
may name ``ext:<name>``, checked when the study is read (a registered bot
with a live token, else a refusal at its line); the waiting room seats it;
and where the condition showed its bots under players' names, the debrief
names it as a bot whatever the researcher's text says."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from botapi import accounts
from botapi.models import BotAccount
from game.models import RoundRecordRow, Table
from studies import export, stages, stand_in
from studies.definition import StudyFileError, parse
from studies.export_rounds import round_rows_of
from studies.loading import load_study
from studies.models import Participant, Study, StudyTable
from tests.studies.conftest import example_text, line_of, study_file  # noqa: F401
from tests.support.study_export import round_rows_of_fake
from tests.support.study_pages import client_of
from tests.support.study_tables import ONE, TWO, arrive, poll

pytestmark = pytest.mark.django_db
Stage = Participant.Stage
NAMES_PLAN = 'seats = { N = "participant", E = "BIS+SRP", S = "participant", W = "BIS+SRP" }'
BOTS_PLAN = 'seats = { N = "BIS+SRP", E = "RB+SRP", S = "participant", W = "RB+SRP" }'


def _register(name: str = "studybot") -> BotAccount:
    owner, _ = User.objects.get_or_create(username="author")
    accounts.register(owner, name, "", "author@example.org")
    return BotAccount.objects.get(name=name)


def test_a_seat_plan_may_name_a_registered_external_bot() -> None:
    _register()
    text = example_text().replace(NAMES_PLAN, NAMES_PLAN.replace('W = "BIS+SRP"',
                                                                 'W = "ext:studybot"'))  # fmt: skip
    definition = parse(text, "s.toml")
    assert definition.conditions[TWO].seat_plan.seats[3] == "ext:studybot"


@pytest.mark.parametrize("case", ["unknown", "revoked", "malformed"])
def test_an_external_bot_that_cannot_play_is_refused_at_its_line(case: str) -> None:
    bot = "ext:studybot"
    if case == "revoked":
        accounts.revoke(_register())
    elif case == "malformed":
        bot = "ext:Not A Name"
    text = example_text().replace(NAMES_PLAN, NAMES_PLAN.replace('W = "BIS+SRP"', f'W = "{bot}"'))
    with pytest.raises(StudyFileError) as caught:
        parse(text, "s.toml")
    line = line_of(text, bot)
    assert caught.value.problems == [
        f"s.toml:{line}: seat W: {bot!r} is neither 'participant' nor a known bot "
        "(BIDDER+PLAYER names of bots/registry.py, e.g. BIS+SRP, or ext:<name>, a "
        "registered external bot with a live token)"
    ]
    assert not Study.objects.exists()


def test_the_stand_in_may_not_be_an_external_bot() -> None:
    _register()
    text = example_text().replace('stand_in_bot = "BIS+SRP"', 'stand_in_bot = "ext:studybot"')
    with pytest.raises(StudyFileError) as caught:
        parse(text, "s.toml")
    assert "unknown bot 'ext:studybot'" in caught.value.problems[0]


def _names_study(study_file) -> Study:  # type: ignore[no-untyped-def]  # noqa: F811
    _register()
    text = example_text().replace(NAMES_PLAN, NAMES_PLAN.replace('W = "BIS+SRP"',
                                                                 'W = "ext:studybot"'))  # fmt: skip
    return load_study(study_file(text))[0]


def test_a_hidden_external_bot_is_seated_and_named_a_bot_in_the_debrief(
    study_file,  # noqa: F811
) -> None:
    study = _names_study(study_file)
    first, second = arrive(study, TWO, waited=5), arrive(study, TWO)
    poll(first)
    second = poll(second)
    assert second.stage == Stage.PLAYING
    table = StudyTable.objects.get().table
    assert table.bots_as_players
    assert [(s.position, s.bot_name) for s in table.seats.filter(kind="bot")] == [
        (1, "BIS+SRP"), (3, "ext:studybot")]  # fmt: skip
    Table.objects.filter(pk=table.pk).update(status=Table.Status.FINISHED)
    second = poll(second)
    second = stages.answer_questionnaire(
        second, {"partner_trust": "3", "partner_skill": "3", "enjoyment": "3", "comments": ""}
    )
    assert second.stage == Stage.DEBRIEF
    told = stand_in.debrief_of(second)
    assert "your two opponents were computer programs" in told  # the researcher's text, kept
    assert "West was the bot 'studybot': a computer program, not a person" in told
    page = client_of(study, second).get(f"/study/{study.slug}/debrief/").content.decode()
    assert "West was the bot &#x27;studybot&#x27;" in page or "West was the bot 'studybot'" in page


def test_an_external_bot_shown_as_a_bot_needs_no_more_debrief(study_file) -> None:  # noqa: F811
    _register()
    text = example_text().replace(BOTS_PLAN, BOTS_PLAN.replace('E = "RB+SRP"',
                                                               'E = "ext:studybot"'))  # fmt: skip
    study = load_study(study_file(text))[0]
    p = poll(arrive(study, ONE))
    assert p.stage == Stage.PLAYING
    table = StudyTable.objects.get().table
    assert not table.bots_as_players
    assert table.seats.get(position=1).bot_name == "ext:studybot"
    assert "studybot" not in stand_in.debrief_of(p)
    row = RoundRecordRow(table=table, round_number=1, finished_at=table.created_at, dealer=0,
                         seat_kinds="BBHB", stand_in_bids="0000", blind_nils="0000")  # fmt: skip
    (exported,) = round_rows_of_fake(round_rows_of, export.study_tables(study)[0], row)
    assert (exported["player_e"], exported["protocol_e"]) == ("ext:studybot", "spades-bot/1")
    assert (exported["player_n"], exported["protocol_n"]) == ("BIS+SRP", "")
    assert exported["player_kind_s"] == "participant" and exported["protocol_s"] == ""
