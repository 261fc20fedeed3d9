"""The launch's guards that need no PostgreSQL: a database out of reach is a
503 with a retry (page or JSON), a conflict is retried inside the server, and
a waiting room's poll costs the same queries whatever the crowd.

The crowd itself on PostgreSQL: tests/studies/test_launch_postgres.py."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import psycopg
import pytest
from django.db import OperationalError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from spadesite import busy
from studies import clock, transactions, waiting_room
from studies.loading import load_study
from studies.models import Participant, Study, StudyClock
from studies.views import SESSION_KEY
from tests.studies.conftest import example_text
from tests.support.study_pages import ALL_PARTICIPANTS, PARAMS, RIGHT, link, page

pytestmark = pytest.mark.django_db
Stage = Participant.Stage


@pytest.fixture
def study(study_file) -> Study:
    """Four participant seats a table in each condition: the waiting wait."""
    text = example_text()
    for line in [line for line in text.splitlines() if line.startswith("seats = ")]:
        text = text.replace(line, ALL_PARTICIPANTS)
    return load_study(study_file(text))[0]


def waiting_client(study: Study) -> Client:
    client = Client()
    client.post(link(), {"choice": "agree"})
    client.get(page("instructions"))
    client.post(page("instructions"))
    client.post(page("quiz"), {"attempt": "0", **RIGHT})
    pseudonym = client.session[SESSION_KEY][study.slug]
    assert Participant.objects.get(pseudonym=pseudonym).stage == Stage.WAITING
    return client


def pool_timeout() -> OperationalError:
    """What Django raises when psycopg's pool had no connection in time."""
    error = OperationalError("couldn't get a connection after 5.00 sec")
    error.__cause__ = psycopg.OperationalError("couldn't get a connection after 5.00 sec")
    return error


def test_a_database_error_in_a_view_is_a_503_page_that_retries(study: Study) -> None:
    client = Client(raise_request_exception=False)
    with mock.patch("studies.participants.enter", side_effect=pool_timeout()):
        answer = client.get(link())
    assert answer.status_code == 503
    assert answer["Retry-After"] == str(busy.RETRY_AFTER_SECONDS)
    text = answer.content.decode()
    assert "very busy" in text and "js/busy_retry.js" in text and "Try again now" in text
    assert PARAMS["PROLIFIC_PID"] not in text
    assert "Lobby" not in text  # the study's plain layout, no site links


def test_the_waiting_rooms_poll_gets_a_503_in_json(study: Study) -> None:
    client = waiting_client(study)
    with mock.patch("studies.waiting_room.advance", side_effect=pool_timeout()):
        answer = client.get(page("state"))
    assert answer.status_code == 503
    assert answer.json()["error"] == "busy" and answer["Retry-After"]
    assert client.get(page("state")).status_code == 200  # and the next poll is answered


def test_a_database_error_outside_a_view_is_a_503_too(study: Study) -> None:
    """A middleware's error (the session saved after the view) goes to handler500."""
    client = Client(raise_request_exception=False)
    with mock.patch(
        "django.contrib.sessions.backends.db.SessionStore.save", side_effect=pool_timeout()
    ):
        answer = client.post(link(), {"choice": "agree"})
    assert answer.status_code == 503


def test_other_errors_stay_500s(study: Study) -> None:
    client = Client(raise_request_exception=False)
    with mock.patch("studies.participants.enter", side_effect=KeyError("x")):
        assert client.get(link()).status_code == 500


def conflict(state: str) -> OperationalError:
    error = OperationalError("deadlock detected")
    cause = psycopg.errors.lookup(state)("deadlock detected")
    error.__cause__ = cause
    return error


@pytest.mark.django_db(transaction=True)  # no test transaction around it
def test_a_deadlock_is_retried_and_the_participant_never_sees_it() -> None:
    calls = []

    @transactions.retried
    def work() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise conflict("40P01")
        return "done"

    assert work() == "done" and len(calls) == 3


@pytest.mark.django_db(transaction=True)  # no test transaction around it
def test_a_conflict_retried_to_the_limit_is_raised_and_other_errors_at_once() -> None:
    calls = []

    @transactions.retried
    def always(state: str) -> None:
        calls.append(state)
        raise conflict(state)

    with pytest.raises(OperationalError):
        always("40001")
    assert len(calls) == transactions.ATTEMPTS
    calls.clear()
    with pytest.raises(OperationalError):
        always("08006")  # connection failure: not a conflict
    assert len(calls) == 1


def test_inside_a_callers_transaction_it_runs_once() -> None:
    calls = []

    @transactions.retried
    def work() -> None:
        calls.append(1)
        raise conflict("40P01")

    with pytest.raises(OperationalError), transaction.atomic():
        work()
    assert len(calls) == 1


def arrive_waiting(study: Study, condition: int, count: int) -> None:
    now = timezone.now()
    Participant.objects.bulk_create(
        Participant(
            study=study,
            condition=study.conditions.get(position=condition),
            stage=Stage.WAITING,
            waiting_since=now - timedelta(seconds=1),
            last_seen=now,
        )
        for _ in range(count)
    )


def poll_queries(client: Client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(page("state")).status_code == 200
    return len(queries)


def test_a_poll_costs_the_same_queries_with_1_and_with_200_waiting(
    study: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock.tick(force=True)
    monkeypatch.setattr(clock, "TICK_SECONDS", 3600.0)  # no tick in the polls measured
    client = waiting_client(study)
    me = Participant.objects.get(stage=Stage.WAITING)
    alone = poll_queries(client)
    # 200 more wait: in the other condition, and 2 (a table needs 4) in mine.
    other = 1 - me.condition.position
    arrive_waiting(study, other, 198)
    arrive_waiting(study, me.condition.position, 2)
    assert Participant.objects.filter(stage=Stage.WAITING).count() == 201
    assert poll_queries(client) == alone
    assert waiting_room.census(me.condition, timezone.now()).present == 3


def test_the_census_tells_present_absent_and_the_longest_wait(study: Study) -> None:
    condition = study.conditions.get(position=0)
    now = timezone.now()
    long_ago = now - timedelta(seconds=3600)
    Participant.objects.bulk_create(
        [
            Participant(study=study, condition=condition, stage=Stage.WAITING,
                        waiting_since=now - timedelta(seconds=30), last_seen=now),
            # Never polled since arriving an hour ago: gone.
            Participant(study=study, condition=condition, stage=Stage.WAITING,
                        waiting_since=long_ago, last_seen=None),
            Participant(study=study, condition=condition, stage=Stage.PLAYING,
                        waiting_since=long_ago, last_seen=now),
        ]
    )  # fmt: skip
    seen = waiting_room.census(condition, now)
    assert (seen.present, seen.absent) == (1, 1)
    assert seen.oldest == now - timedelta(seconds=30)


@pytest.fixture(autouse=True)
def fresh_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """No tick of another test's keeps this test's first poll from ticking."""
    monkeypatch.setattr(clock, "_last_tick", 0.0)
    monkeypatch.setattr(clock, "_last_failure", None)


def gone_for(study: Study, seconds: float) -> Participant:
    """A waiting participant last heard of ``seconds`` ago, alone in a
    condition whose tables need four."""
    heard = timezone.now() - timedelta(seconds=seconds)
    return Participant.objects.create(
        study=study, condition=study.conditions.get(position=0), stage=Stage.WAITING,
        waiting_since=heard - timedelta(seconds=5), last_seen=heard,
    )  # fmt: skip


def site_last_alive(seconds_ago: float) -> None:
    alive = timezone.now() - timedelta(seconds=seconds_ago)
    StudyClock.objects.update_or_create(pk=1, defaults={"alive_at": alive})


def test_an_outage_longer_than_absent_seconds_drops_no_one(
    study: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every server process restarted after 200 s down (absent_seconds is 120):
    the first poll credits the outage, and nobody who waited is dropped."""
    waiter = gone_for(study, 200)
    other = gone_for(study, 201)
    site_last_alive(200)
    monkeypatch.setattr(clock, "_STARTED_AT", timezone.now() - timedelta(seconds=1))
    waiting_room.advance(Participant.objects.get(pk=waiter.pk))
    stages = set(Participant.objects.filter(pk__in=[waiter.pk, other.pk]).values_list(
        "stage", flat=True))  # fmt: skip
    assert Stage.DROPPED not in stages  # waiting still, or seated (their wait timed out)
    assert StudyClock.objects.get().outage_seconds == pytest.approx(200, abs=2)
    # The other one's absence resumes where the outage stopped it: 1 s, not 201.
    other.refresh_from_db()
    assert (timezone.now() - other.last_seen).total_seconds() < 5


def test_a_database_outage_seen_by_a_running_process_is_credited_too(
    study: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clock, "_STARTED_AT", timezone.now() - timedelta(days=1))
    waiter = gone_for(study, 300)
    site_last_alive(300)
    clock.database_failed(timezone.now() - timedelta(seconds=100))  # a 503 during it
    assert clock.tick(force=True) == pytest.approx(300, abs=2)
    waiting_room.group_waiting(waiter.condition)
    waiter.refresh_from_db()
    assert waiter.stage != Stage.DROPPED


def test_a_quiet_site_is_no_outage_and_the_absent_are_dropped(
    study: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nobody polled for 300 s while the process ran without an error: the
    waiter who closed their page then has left, and is dropped."""
    monkeypatch.setattr(clock, "_STARTED_AT", timezone.now() - timedelta(days=1))
    gone = gone_for(study, 300)
    site_last_alive(300)
    newcomer = gone_for(study, 0)
    waiting_room.advance(Participant.objects.get(pk=newcomer.pk))
    gone.refresh_from_db()
    assert gone.stage == Stage.DROPPED
    assert StudyClock.objects.get().outage_seconds == 0
