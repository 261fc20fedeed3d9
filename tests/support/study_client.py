"""A participant's browser for the stack tests of a study: its own cookies,
redirects followed, forms posted with the CSRF token, every answer's status
noted (tests/studies/test_launch_postgres.py, test_launch_outage.py)."""

from __future__ import annotations

import http.cookiejar
import json
import tomllib
import urllib.error
import urllib.parse
import urllib.request

from tests.studies.conftest import example_text

CHEAP = "Random+Random"
SLUG = "partner-trust-pilot"


def study_text() -> str:
    """The example with bots that cost nothing, so the server's core serves pages."""
    return example_text().replace("BIS+SRP", CHEAP).replace("RB+SRP", CHEAP)


def right_answers(text: str | None = None) -> dict[str, str]:
    quiz = tomllib.loads(text or study_text())["quiz"]["questions"]
    return {f"q{n}": str(q["options"].index(q["answer"])) for n, q in enumerate(quiz, 1)}


class Participant:
    """One person's browser: its own cookies, redirects followed, forms posted
    with the CSRF token, every answer's status noted."""

    def __init__(self, base: str, raw_id: str) -> None:
        self.base = base
        self.raw_id = raw_id
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.statuses: list[tuple[str, int]] = []
        self.last_503 = ""

    def _csrf(self) -> str:
        return next((c.value for c in self.jar if c.name == "csrftoken"), "")

    def call(self, path: str, form: dict[str, str] | None = None) -> tuple[int, str]:
        data = None
        if form is not None:
            data = urllib.parse.urlencode({**form, "csrfmiddlewaretoken": self._csrf()}).encode()
        req = urllib.request.Request(self.base + path, data=data)
        try:
            with self.opener.open(req, timeout=60) as answer:
                status, body = answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            status, body = error.code, error.read().decode(errors="replace")
        except (urllib.error.URLError, OSError):  # no answer at all: counted as 0
            status, body = 0, ""
        self.statuses.append((path.split("?")[0], status))
        if status == 503:
            self.last_503 = body
        return status, body

    def arrive(self) -> None:
        link = f"/study/{SLUG}/?PROLIFIC_PID={self.raw_id}&STUDY_ID=s1&SESSION_ID=x{self.raw_id}"
        self.call(link)
        self.call(link, {"choice": "agree"})
        self.call(f"/study/{SLUG}/instructions/")
        self.call(f"/study/{SLUG}/instructions/", {})
        self.call(f"/study/{SLUG}/quiz/", {"attempt": "0", **right_answers()})

    def poll(self) -> dict[str, object]:
        status, body = self.call(f"/study/{SLUG}/state/")
        return json.loads(body) if status == 200 else {}

    def session_cookie(self) -> str:
        """The ``Cookie`` header of the session (for the table's websocket)."""
        return "; ".join(f"{c.name}={c.value}" for c in self.jar if c.name == "sessionid")
