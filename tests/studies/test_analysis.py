"""``docs/examples/analyse_study.py`` on a real export of played study tables.

Seven participants play three-round matches with cheap bots (no browser): one
alone in the one-participant condition, two partners in the two-participant
condition, one there alone past the timeout (the stand-in takes the partner's
seat), a pilot, one the researcher excludes and one who then withdraws. The
script runs as a researcher runs it (a subprocess, pandas, no Django) on
``export_study``'s folder; its figures must equal a count made here from the
CSV files, and what it leaves out (pilot, excluded, stand-in, withdrawn) must
be exactly those participants' rounds.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from game.models import Action, RoundRecordRow, Table
from studies import export, intake, withdrawal
from studies.loading import load_study
from studies.models import Participant, Study, StudyTable
from tests.studies.conftest import example_text
from tests.support.analysis_check import agrees, direct_count, read, run
from tests.support.helpers import play_humans
from tests.support.live_tables import live as live  # the fixture
from tests.support.study_tables import CHEAP, ONE, TWO, arrive, poll

Stage = Participant.Stage


def play(p: Participant, rng: random.Random) -> Table:
    """The participant's table played out; every participant decision timed as a
    page would time it (the service's submit takes no think time)."""
    table = StudyTable.objects.get(seats__participant=p).table
    play_humans(table, rng)
    humans = set(table.seats.filter(kind="human").values_list("position", flat=True))
    for action in Action.objects.filter(table=table, seat__in=humans, by_stand_in=False):
        action.think_ms = rng.randint(300, 25_000)
        action.think_bound_ms = action.think_ms + 40
        action.save(update_fields=["think_ms", "think_bound_ms"])
    return table


@pytest.fixture
def played(study_file: Any, live: Any, tmp_path: Path) -> dict[str, Any]:
    text = example_text().replace("BIS+SRP", CHEAP).replace("RB+SRP", CHEAP)
    text = text.replace("pilot = true ", "pilot = false").replace("matches = 1 ", "rounds = 3 ")
    text = text.replace("winning_goal = 100\n", "").replace("losing_goal = -100\n", "")
    study: Study = load_study(study_file(text))[0]
    assert not study.pilot and study.definition["play"]["rounds"] == 3
    rng = random.Random(57)
    alone = poll(arrive(study, ONE))
    first = arrive(study, TWO, waited=5)
    assert poll(first).stage == Stage.WAITING
    second = poll(arrive(study, TWO))
    filled = poll(arrive(study, TWO, waited=61))  # alone past the timeout: a stand-in partner
    pilot = arrive(study, ONE)
    Participant.objects.filter(pk=pilot.pk).update(pilot=True)  # before seating, as the docs say
    pilot = poll(pilot)
    leaver = poll(arrive(study, ONE))
    excluded = poll(arrive(study, ONE))
    tables = {
        "alone": play(alone, rng),
        "partners": play(first, rng),
        "filled": play(filled, rng),
        "pilot": play(pilot, rng),
        "withdrawn": play(leaver, rng),
        "excluded": play(excluded, rng),
    }
    assert StudyTable.objects.get(seats__participant=filled).filled_by_stand_in == 1
    for p in (alone, first, second, filled, pilot, leaver, excluded):
        assert poll(p).stage == Stage.QUESTIONNAIRE
    leaver = Participant.objects.get(pk=leaver.pk)
    leaver.move_to(Stage.COMPLETED)
    leaver.save()
    withdrawal.withdraw(study, leaver.pseudonym, reason="asked", by="test", payments_done=True)
    intake.exclude(study, excluded.pseudonym, "test", "played at random")
    out = tmp_path / "export"
    export.export_study(study, out, include_pilot=True)  # the script leaves them out itself
    rounds = {k: RoundRecordRow.objects.filter(table=t).count() for k, t in tables.items()}
    assert all(n >= 3 for n in rounds.values())
    return {"out": out, "rounds": rounds, "leaver": leaver.pseudonym, "tmp": tmp_path}


@pytest.mark.django_db(transaction=True)
def test_the_analysis_script_equals_a_direct_count_of_the_export(played: dict[str, Any]) -> None:
    out, rounds, tmp = played["out"], played["rounds"], played["tmp"]
    people = {r["pseudonym"] for r in read(out / "participants.csv")}
    assert played["leaver"] not in people and len(people) == 6

    printed, figures = run(out, tmp)
    counted = direct_count(out, include_pilot=False, include_stand_in=False)
    agrees(out, figures, counted)
    # Left out: the pilot's table, the stand-in-filled table and the withdrawn
    # participant's; kept: the lone participant's and the two partners' (one
    # partnership-round per round, not one per participant).
    assert figures["partnership_rounds"] == {
        "human-with-bot-partner": rounds["alone"],
        "two-humans": rounds["partners"],
    }
    assert figures["left_out"]["partnership_rounds"] == {
        "pilot": rounds["pilot"],
        "excluded": rounds["excluded"],
        "stand_in": rounds["filled"],
    }
    assert all(n > 0 for n in figures["left_out"]["decisions"].values())
    decisions = {(t["condition"], t["decision"]): t["n"] for t in figures["think_times"]}
    assert decisions[("two-humans", "bid")] == 2 * rounds["partners"]  # both partners bid
    assert decisions[("human-with-bot-partner", "card")] == 13 * rounds["alone"]
    for name in ("== human-with-bot-partner", "== two-humans", "own nil", "partner's nil",
                 "nil against nil", "Think times by decision", "95% Wilson"):  # fmt: skip
        assert name in printed, name

    # Asked for: the pilot's and the stand-in's data come back; the withdrawn never.
    _, everything = run(out, tmp, "--include-pilot", "--include-excluded", "--include-stand-in")
    agrees(out, everything, direct_count(out, True, True, include_excluded=True))
    assert everything["partnership_rounds"] == {
        "human-with-bot-partner": rounds["alone"] + rounds["pilot"] + rounds["excluded"],
        "two-humans": rounds["partners"] + rounds["filled"],
    }
    assert set(everything["left_out"]["partnership_rounds"].values()) == {0}
    _, pilots = run(out, tmp, "--include-pilot")
    agrees(out, pilots, direct_count(out, include_pilot=True, include_stand_in=False))
