"""The staff's study monitor: the counts by stage and condition, the waiting
room and the tables by pseudonym (never a raw recruitment ID), staff only;
the export's zip, payments only with ``studies.view_payments``; a staff
watcher of a study table sees no hand."""

from __future__ import annotations

import io
import random
import zipfile
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from game.models import Table
from studies import participants, playing
from studies.models import Participant, Study, StudyTable
from tests.support.inline import InlineScheduler
from tests.support.live_tables import live as live  # the fixture
from tests.support.sockets import (
    cards_in,
    connect,
    connect_through_the_site,
    held_at,
    play_match,
)
from tests.support.sockets import (
    close_sync_thread_connections as close_sync_thread_connections,
)
from tests.support.study_tables import RAW, TWO, person, seated

Stage = Participant.Stage


@pytest.fixture(autouse=True)
def bots_inline(live: InlineScheduler) -> InlineScheduler:
    """Bots move inline as a table starts: no thread of theirs holds the database."""
    return live


def populate(study: Study) -> dict[str, Participant]:
    participants.decline(study)
    participants.decline(study)
    return {
        "instructions": person(study, 1, Stage.INSTRUCTIONS),
        "quiz": person(study, 2, Stage.QUIZ, TWO),
        "failed": person(study, 3, Stage.FAILED_QUIZ, TWO),
        "waiting": person(study, 4, Stage.WAITING, TWO),
        "dropped": person(study, 5, Stage.DROPPED),
        "completed": person(study, 6, Stage.COMPLETED),
        "playing": seated(study, 7),
    }


def staff_client(*perms: str) -> Client:
    user = get_user_model().objects.create_user("boss", password="pw-boss-123", is_staff=True)
    for codename in perms:
        user.user_permissions.add(Permission.objects.get(codename=codename))
    client = Client()
    client.force_login(user)
    return client


def urls(slug: str) -> list[str]:
    return [
        reverse("study_monitor:list"),
        reverse("study_monitor:study", args=[slug]),
        reverse("study_monitor:state", args=[slug]),
        reverse("study_monitor:export", args=[slug]),
        reverse("study_monitor:export_payments", args=[slug]),
    ]


@pytest.mark.django_db
def test_the_monitor_counts_the_participants_by_stage_and_condition(study: Study) -> None:
    people = populate(study)
    assert people["playing"].stage == Stage.PLAYING
    client = staff_client()
    data = client.get(reverse("study_monitor:state", args=[study.slug])).json()
    assert data["conditions"] == ["human-with-bot-partner", "two-humans"]
    stages = {row["stage"]: (row["count"], row["by_condition"]) for row in data["stages"]}
    assert stages["instructions"] == (1, [1, 0])
    assert stages["quiz"] == (1, [0, 1])
    assert stages["failed_quiz"] == (1, [0, 1])
    assert stages["waiting"] == (1, [0, 1])
    assert stages["playing"] == (1, [1, 0])
    assert stages["consented"] == (0, [0, 0])
    assert sum(a["count"] for a in data["assigned"]) == 7
    assert (data["declined"], data["completed"], data["failed_quiz"]) == (2, 1, 1)
    assert data["pilots"] == 7  # the example is a pilot study
    assert [w["pseudonym"] for w in data["waiting"]] == [people["waiting"].pseudonym]
    assert data["waiting"][0]["condition"] == "two-humans"
    assert data["waiting"][0]["seconds"] is not None
    assert [d["pseudonym"] for d in data["dropped"]] == [people["dropped"].pseudonym]
    [table] = data["tables"]
    study_table = StudyTable.objects.get()
    assert table["table"] == study_table.table.public_id
    assert table["condition"] == "human-with-bot-partner" and table["status"] == "playing"
    assert table["seats"] == [
        {"seat": "S", "pseudonym": people["playing"].pseudonym, "pilot": True, "dropped": False}
    ]
    assert (table["stand_ins"], table["score_ns"], table["score_ew"], table["round"]) == (
        0,
        0,
        0,
        1,
    )
    page = client.get(reverse("study_monitor:study", args=[study.slug]))
    assert page.status_code == 200
    html = page.content.decode()
    for shown in ("waiting", "playing", "dropped"):
        assert people[shown].pseudonym in html
    watch = reverse("lobby:table", args=[table["table"]]) + "?silent=1"
    assert watch in html  # the watch link: staff open the table page, unseen
    watched = client.get(watch)
    assert watched.status_code == 200 and watched.context["silent"] is True
    assert 'id="silent-note"' in watched.content.decode()
    assert 'id="chat-form"' not in watched.content.decode()
    assert "Download export (zip)" in html
    assert "with payments" not in html  # no permission, no link
    listing = client.get(reverse("study_monitor:list")).content.decode()
    assert reverse("study_monitor:study", args=[study.slug]) in listing


@pytest.mark.django_db
def test_no_raw_recruitment_id_in_the_page_or_its_json(study: Study) -> None:
    populate(study)
    client = staff_client()
    for url in urls(study.slug)[:3]:
        response = client.get(url)
        assert response.status_code == 200
        assert RAW not in response.content.decode(), url


@pytest.mark.django_db
def test_only_staff_see_the_monitor(study: Study, client: Client) -> None:
    for url in urls(study.slug):
        assert client.get(url).status_code == 302  # to log in
    user = get_user_model().objects.create_user("player", password="pw-player-123")
    client.force_login(user)
    for url in urls(study.slug):
        assert client.get(url).status_code == 403, url


def zip_names(response: Any) -> dict[str, str]:
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    return {name.split("/")[-1]: archive.read(name).decode() for name in archive.namelist()}


@pytest.mark.django_db
def test_the_zip_holds_the_export_without_payments(study: Study) -> None:
    populate(study)
    url = reverse("study_monitor:export", args=[study.slug])
    response = staff_client().get(url + "?pilot=1")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert "attachment" in response["Content-Disposition"]
    files = zip_names(response)
    assert sorted(files) == [
        "actions.csv",
        "answers.csv",
        "audit.csv",
        "codebook.md",
        "conditions.csv",
        "participants.csv",
        "rounds.csv",
        "study.toml",
    ]
    assert all(RAW not in text for text in files.values())
    assert files["participants.csv"].count("\n") == 8  # the header and 7 participants


@pytest.mark.django_db
def test_payments_only_with_the_permission(study: Study) -> None:
    populate(study)
    url = reverse("study_monitor:export_payments", args=[study.slug])
    assert staff_client().get(url).status_code == 403
    get_user_model().objects.all().delete()
    client = staff_client("view_payments")
    page = client.get(reverse("study_monitor:study", args=[study.slug])).content.decode()
    assert url in page
    assert client.get(url).status_code == 200
    response = client.get(url + "?pilot=1")  # the example's participants are pilots
    assert response.status_code == 200
    files = zip_names(response)
    assert "payments.csv" in files and f"{RAW}0006" in files["payments.csv"]
    assert all(RAW not in text for name, text in files.items() if name != "payments.csv")


@pytest.mark.django_db(transaction=True)
async def test_a_staff_watcher_of_a_study_table_gets_no_hand(
    cheap_study: Study, live: InlineScheduler
) -> None:
    def setup() -> tuple[Table, str, str]:
        p = seated(cheap_study, 1)
        assert p.stage == Stage.PLAYING
        user = get_user_model().objects.create_user("boss", password="pw", is_staff=True)
        client = Client()
        client.force_login(user)
        table = StudyTable.objects.get().table
        return table, client.cookies["sessionid"].value, playing.guest_id_of(p)

    table, key, guest = await database_sync_to_async(setup)()
    socks: dict[Any, Any] = {}
    states: dict[Any, dict[str, Any]] = {}
    socks[2], states[2] = await connect(table, guest, "South")  # the participant, seat S
    socks["staff"], states["staff"] = await connect_through_the_site(table, key)
    frames = {k: [state] for k, state in states.items()}
    await play_match(table, {2: socks[2]}, states, socks, frames, random.Random(3), 1)

    def check() -> int:
        for frame in frames["staff"]:
            view = frame["view"]
            assert view["seat"] is None and view["hand"] is None and view["legal_actions"] == []
            assert cards_in(frame) & set().union(*held_at(table, frame["version"])) == set()
        return len(frames["staff"])

    assert await database_sync_to_async(check)() > 5
    for comm in socks.values():
        await comm.disconnect()


@pytest.mark.django_db
def test_the_monitor_costs_the_same_queries_with_a_crowd_and_pages_its_lists(
    cheap_study: Study,
) -> None:
    """Counts for everyone, lists one page long: a launch of hundreds costs the
    monitor what a handful does."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from studies import monitor

    for n in range(3):
        person(cheap_study, n, Stage.DROPPED, TWO)
    with CaptureQueriesContext(connection) as few:
        monitor.snapshot(cheap_study)
    for n in range(3, 3 + monitor.PAGE_SIZE + 40):
        person(cheap_study, n, random.Random(n).choice([Stage.DROPPED, Stage.QUIZ]), TWO)
    with CaptureQueriesContext(connection) as many:
        data = monitor.snapshot(cheap_study, page=7)
    assert len(many) == len(few)
    assert data["participants"] == 3 + monitor.PAGE_SIZE + 40
    assert len(data["dropped"]) == monitor.PAGE_SIZE < data["dropped_total"]
    assert data["page"] == 1 == data["pages"]  # no table: page 7 is page 1
    assert sum(row["count"] for row in data["stages"]) == data["participants"]


@pytest.mark.django_db
def test_the_monitor_page_takes_a_page_number_and_ignores_nonsense(
    cheap_study: Study, client: Client
) -> None:
    staff = get_user_model().objects.create_user("staff", password="x", is_staff=True)
    client.force_login(staff)
    url = reverse("study_monitor:study", args=[cheap_study.slug])
    for page in ("2", "-1", "abc", "9" * 40):
        assert client.get(url, {"page": page}).status_code == 200
    assert client.get(
        reverse("study_monitor:state", args=[cheap_study.slug]), {"page": "x"}
    ).json()["page"] == 1
