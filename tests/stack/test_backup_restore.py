"""Backups that restore (issue 59, docs/deploy.md "Backups"): the backup script's
dump of a database with rounds, actions, ratings, tallies and a study, restored
with the documented pg_restore into a fresh database, holds every row, and the
site serves it: the dashboard's figures and page equal before and after, the
tallies check out, and a Daphne on the restored database answers /healthz and a
replay."""

from __future__ import annotations

import hashlib
import http.cookiejar
import json
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from lab.stack import stackprocs
from tests.support import ROOT, SUPPORT, services

pytestmark = pytest.mark.stack

SCRIPT = SUPPORT / "backup_pg_script.py"
BACKUP = ROOT / "deploy" / "spades-backup.sh"
STUDY = ROOT / "docs" / "examples" / "study.toml"
PASSWORD = "restore-test-password"  # backup_pg_script.py's operator


def snapshot(env: dict[str, str], fill: bool = False) -> dict[str, object]:
    code = SCRIPT.read_text()
    if fill:
        code = code.replace("FILL = False", "FILL = True", 1)
    out = stackprocs.manage(env, "shell", "-c", code, timeout=300)
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


def test_a_dump_restores_every_row_and_the_site_serves_it(tmp_path: Path) -> None:
    for tool in ("pg_dump", "pg_restore"):
        if shutil.which(tool) is None:
            services.unavailable(f"{tool} not found: install Debian's postgresql-client")
    extra = {"SPADES_REPLAY_ANALYSIS": "0", "DJANGO_SETTINGS_MODULE": "spadesite.settings"}
    with services.scratch_postgres("spades_backup") as source:
        env = stackprocs.stack_env(source, None, **extra)
        env["PYTHONPATH"] = str(ROOT)  # the shell script imports tests.support's fixtures
        stackprocs.manage(env, "migrate", "-v0")
        stackprocs.manage(env, "load_study", str(STUDY))
        before = snapshot(env, fill=True)
        # The backup as the timer runs it (deploy/spades-backup.sh).
        backups = tmp_path / "backups"
        run = subprocess.run(
            ["sh", str(BACKUP)], capture_output=True, text=True, timeout=120,
            env={**os.environ, "DATABASE_URL": source, "BACKUP_DIR": str(backups)},
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        dumps = sorted(backups.glob("spades-*.dump"))
        assert len(dumps) == 1 and not list(backups.glob(".*partial"))
    # The source is dropped: the dump alone must hold the site.
    with services.scratch_postgres("spades_restored") as target:
        restored = subprocess.run(
            ["pg_restore", "--no-owner", "--exit-on-error", "--dbname",
             stackprocs._psycopg_url(target), str(dumps[0])],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert restored.returncode == 0, restored.stderr
        env = stackprocs.stack_env(target, None, **extra)
        env["PYTHONPATH"] = str(ROOT)
        assert "No migrations to apply" in stackprocs.manage(env, "migrate")
        after = snapshot(env)
        stackprocs.manage(env, "rebuild_tallies", "--check")
        served = before["served"]
        assert isinstance(served, dict)
        served_after = after["served"]
        assert isinstance(served_after, dict)
        served_by_daphne = _served_by_daphne(env, tmp_path, int(served["round_id"]))
    rows = before["rows"]
    assert isinstance(rows, dict)
    for label in ("game.Action", "game.RoundRecordRow", "game.MatchResult", "game.RoundTally",
                  "game.Rating", "studies.Participant", "studies.Assignment",
                  "studies.RecruitmentId"):  # fmt: skip
        assert rows.get(label, 0) > 0, f"the source has no {label} rows to restore"
    assert after["rows"] == rows
    assert after["digests"] == before["digests"]
    assert after["figures"] == before["figures"]
    assert served["dashboard"] == 200 and served["replay"] == 200
    assert served_after == served  # the same page, the same figures
    assert served_by_daphne == served  # and over HTTP, from a Daphne on the restored database


def _served_by_daphne(env: dict[str, str], tmp_path: Path, round_id: int) -> dict[str, object]:
    """What a Daphne on the restored database serves the operator (signed in
    through the admin's form): /healthz, the dashboard, a replay."""
    port = stackprocs.free_port()
    log = tmp_path / "daphne.log"
    with log.open("w") as out:
        process = stackprocs.start(stackprocs.daphne_command(port), env, out)
    try:
        stackprocs.wait_for_port(port, process, timeout=60)
        base = f"http://127.0.0.1:{port}"
        browser = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        with browser.open(f"{base}/healthz", timeout=10) as health:
            assert health.status == 200 and json.load(health)["status"] == "ok"
        with browser.open(f"{base}/admin/login/", timeout=30) as login:
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.read().decode())
        assert token is not None
        form = {"username": "operator", "password": PASSWORD,
                "csrfmiddlewaretoken": token.group(1), "next": "/admin/"}  # fmt: skip
        browser.open(f"{base}/admin/login/", urllib.parse.urlencode(form).encode(), timeout=30)
        with browser.open(f"{base}/dashboard/", timeout=60) as page:
            status, text = page.status, page.read().decode()
        html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", text)
        with browser.open(f"{base}/rounds/{round_id}/", timeout=30) as replay:
            replay_status = replay.status
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{error.url}: {error.code}\n{stackprocs.tail(log)}") from error
    finally:
        stackprocs.stop(process)
    return {
        "dashboard": status,
        "dashboard_digest": hashlib.sha256(html.encode()).hexdigest()[:16],
        "replay": replay_status,
        "round_id": round_id,
    }
