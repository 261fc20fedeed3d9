"""A seated participant plays at their study table only: another table's page,
seats, socket and invite link, a new table and a second study table are all
refused with a clear message, and nothing changes."""

from __future__ import annotations

import pytest
from django.test import Client

from game import identity, seating
from game.models import Seat, Table
from lobby.access import may_watch
from lobby.models import TableListing
from studies import waiting_room
from studies.models import Participant, Study, StudySeat, StudyTable
from studies.views import SESSION_KEY
from tests.support.live_tables import live as live  # the fixture
from tests.support.study_tables import ONE, arrive, poll

# Inline bots (``live``): no bot or flush thread outlives the test.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("live")]


@pytest.fixture
def study(own_stand_in_study: Study) -> Study:
    """The example, its stand-in told apart from the seat plans' bots (conftest)."""
    return own_stand_in_study


def _seated_client(study: Study) -> tuple[Client, Participant, Table]:
    p = arrive(study, ONE)
    client = Client()
    session = client.session
    session[SESSION_KEY] = {study.slug: p.pseudonym}
    session.save()
    back = f"/study/{study.slug}/table/"
    assert client.get(f"/study/{study.slug}/waiting/")["Location"] == back  # seated
    own = StudyTable.objects.get(seats__participant=p).table
    assert client.get(back)["Location"] == f"/t/{own.public_id}/"
    assert client.get(f"/t/{own.public_id}/").status_code == 200  # their own table
    return client, Participant.objects.get(pk=p.pk), own


def _other_table() -> Table:
    table = seating.create_table()
    TableListing.objects.create(table=table, host_name="Host")
    seating.add_bot(table, 1, "Random+Random")
    return table


def _snapshot() -> tuple[object, ...]:
    return (
        list(Table.objects.order_by("pk").values_list("pk", "status", "version")),
        list(Seat.objects.order_by("pk").values_list("table", "position", "kind", "guest_id")),
        list(StudySeat.objects.values_list("participant", "study_table")),
        list(TableListing.objects.order_by("pk").values_list("table", "reserved")),
    )


def test_a_seated_participant_is_refused_every_other_table(study: Study) -> None:
    client, p, own = _seated_client(study)
    other = _other_table()
    before = _snapshot()
    page = client.get(f"/t/{other.public_id}/")
    assert page.status_code == 403
    assert identity.BOUND_MESSAGE in page.content.decode()
    assert f'href="/t/{own.public_id}/"' in page.content.decode()  # the way back
    sit = client.post(f"/t/{other.public_id}/seat/", {"op": "sit", "position": "0"})
    assert sit.status_code == 403 and sit.json() == {"error": identity.BOUND_MESSAGE}
    assert client.get(f"/t/{other.public_id}/seating.json").status_code == 403
    assert client.get(f"/join/{other.invite_token}/").status_code == 403
    for new in (client.post("/play/"), client.get("/tables/new/"), client.post("/tables/new/", {})):
        assert new.status_code == 403 and identity.BOUND_MESSAGE in new.content.decode()
    assert _snapshot() == before  # nothing changed
    # The socket of another table is refused too; the own table's is not.
    scope = {"session": dict(client.session.items())}
    assert not may_watch(scope, other.public_id)
    assert may_watch(scope, own.public_id)
    # A second study table: the waiting room will not seat them again.
    with pytest.raises(ValueError, match=f"already at a study table: {p.pseudonym}"):
        waiting_room.form_table(p.condition, [p])
    assert _snapshot() == before
    assert poll(p).stage == Participant.Stage.PLAYING


def test_the_binding_ends_with_the_study(study: Study) -> None:
    client, p, own = _seated_client(study)
    Participant.objects.filter(pk=p.pk).update(stage=Participant.Stage.COMPLETED)
    assert client.get(f"/study/{study.slug}/completed/").status_code == 200
    other = _other_table()
    assert client.get(f"/t/{other.public_id}/").status_code == 200
