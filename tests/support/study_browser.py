"""The worked example study in Chromium over Daphne (tests/browser): its slug,
seed, quiz answers and questionnaire, the site's ``manage.py`` and database
beside the browser, a participant's way to the quiz and on to a table, and the
example with participant seats only (nobody is seated)."""

from __future__ import annotations

import contextlib
import csv
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import Page, expect

from studies.loading import load_study
from studies.models import Study
from tests.support import ROOT
from tests.support.study_pages import ALL_PARTICIPANTS

EXAMPLE = ROOT / "docs" / "examples" / "study.toml"
SLUG = "partner-trust-pilot"
SEED = 20250611
WAIT_SECONDS = 5  # the smallest waiting-room timeout a study file may have
# The quiz's right answers (by label), and the questionnaire's answers.
RIGHT = ("The player across the table", "Spades", "50 points")
LIKERT = {"partner_trust": "4", "partner_skill": "3", "enjoyment": "5"}


def manage(server, *args: str) -> str:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{server.database}",
        "DJANGO_SETTINGS_MODULE": "spadesite.settings",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    )
    return done.stdout


def query(server, sql: str, *params: object) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(server.database)) as db:
        return db.execute(sql, params).fetchall()


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def heading(page: Page, text: str) -> None:
    expect(page.get_by_role("heading", level=1)).to_have_text(text)


def way_in(page: Page, server: str, raw_id: str) -> None:
    """Consent and the instructions: the participant is at the quiz."""
    page.goto(f"{server}/study/{SLUG}/?PROLIFIC_PID={raw_id}&STUDY_ID=st1&SESSION_ID=se-{raw_id}")
    heading(page, "Information and consent")
    page.get_by_role("button", name="I agree").click()
    heading(page, "Instructions")
    page.get_by_role("button", name="Continue").click()
    heading(page, "A few questions about the game")


def reach_table(page: Page) -> None:
    """The waiting room sends the participant on to their table."""
    expect(page).to_have_url(re.compile(r"/t/[\w-]+/$"), timeout=(WAIT_SECONDS + 15) * 1000)


def waiting_study(tmp_path: Path) -> Study:
    """The example with four participant seats in each condition: nobody here is
    seated (tests/studies/test_tables.py has the tables)."""
    text = EXAMPLE.read_text()
    for line in [line for line in text.splitlines() if line.startswith("seats = ")]:
        text = text.replace(line, ALL_PARTICIPANTS)
    (tmp_path / "study.toml").write_text(text)
    return load_study(tmp_path / "study.toml")[0]

