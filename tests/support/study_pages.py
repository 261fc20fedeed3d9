"""A participant's pages of the worked example over HTTP: the link with its
recruitment parameters, each page's address, the steps to consent and to the
quiz, a quiz answer, all a response says, and a client of a participant's
session."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpResponse
from django.test import Client

from studies.models import Participant, Study
from studies.views import SESSION_KEY

RAW_ID = "5f1a9c3e7b2d4e6f80a1b2c3"
PARAMS = {"PROLIFIC_PID": RAW_ID, "STUDY_ID": "study77aa", "SESSION_ID": "sess42bb"}
SLUG = "partner-trust-pilot"
RIGHT = {"q1": "1", "q2": "1", "q3": "1"}  # the example's answers, by option number
# Four participant seats: a study file's condition whose participants wait.
ALL_PARTICIPANTS = (
    'seats = { N = "participant", E = "participant", S = "participant", W = "participant" }'
)


def link(params: dict[str, str] | None = None, slug: str = SLUG) -> str:
    return f"/study/{slug}/?{urlencode(PARAMS if params is None else params)}"


def page(name: str, slug: str = SLUG) -> str:
    return f"/study/{slug}/{name}/"


def consented(client: Client) -> Participant:
    response = client.post(link(), {"choice": "agree"})
    assert response.status_code == 302 and response["Location"] == page("instructions")
    return Participant.objects.get()


def at_quiz(client: Client) -> Participant:
    consented(client)
    client.get(page("instructions"))
    assert client.post(page("instructions"))["Location"] == page("quiz")
    return Participant.objects.get()


def answer(client: Client, answers: dict[str, str], attempt: int) -> HttpResponse:
    return client.post(page("quiz"), {**answers, "attempt": str(attempt)})


def everything_said(response: HttpResponse) -> str:
    """A response's headers, cookies and body, for a search of what it gave away."""
    headers = "\n".join(f"{k}: {v}" for k, v in response.items())
    return f"{headers}\n{response.cookies.output()}\n{response.content.decode()}"


def client_of(study: Study, participant: Participant) -> Client:
    """A browser whose session is ``participant``'s in ``study``."""
    client = Client()
    session = client.session
    session[SESSION_KEY] = {study.slug: participant.pseudonym}
    session.save()
    return client
