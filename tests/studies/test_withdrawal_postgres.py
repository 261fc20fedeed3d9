"""``withdraw_participant`` and ``reset_study --pilot`` on PostgreSQL (their
locks: NO KEY UPDATE on the study and conditions, the participant rows, the
game's rows updated after), on a scratch database through ``manage.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.stack import stackprocs
from tests.studies.conftest import example_text
from tests.support import services

pytestmark = pytest.mark.stack

SLUG = "partner-trust-pilot"
# Two pilot participants who consented; one of them then dropped out.
SETUP = """
from studies import participants
from studies.models import Participant, Study
study = Study.objects.get(slug="partner-trust-pilot")
a = participants.consent(study, {"PROLIFIC_PID": "PGRAW1"})
b = participants.consent(study, {"PROLIFIC_PID": "PGRAW2"})
Participant.objects.filter(pk=a.pk).update(stage="dropped")
print(a.pseudonym, b.pseudonym)
"""
COUNT = """
from studies.models import AuditEntry, Participant, RecruitmentId
print(Participant.objects.count(), RecruitmentId.objects.count(), AuditEntry.objects.count())
"""


def shell(env: dict[str, str], code: str) -> list[str]:
    """The last line ``manage.py shell -c`` printed (Django's shell may say more first)."""
    return stackprocs.manage(env, "shell", "-c", code).strip().splitlines()[-1].split()


def test_withdrawal_and_pilot_reset_on_postgres(tmp_path: Path) -> None:
    with services.scratch_postgres("spades_withdraw") as database_url:
        env = stackprocs.stack_env(database_url, None, SPADES_REPLAY_ANALYSIS="0")
        stackprocs.manage(env, "migrate", "-v0")
        study_file = tmp_path / "study.toml"
        study_file.write_text(example_text())
        stackprocs.manage(env, "load_study", str(study_file))
        dropped, busy = shell(env, SETUP)
        said = stackprocs.manage(env, "withdraw_participant", SLUG, dropped, "--by", "ci")
        assert said.strip() == f"withdrew {dropped} from {SLUG}"
        assert shell(env, COUNT) == ["2", "1", "1"]
        with pytest.raises(stackprocs.StackError, match="still taking part"):
            stackprocs.manage(env, "withdraw_participant", SLUG, busy)
        said = stackprocs.manage(env, "reset_study", SLUG, "--pilot", "--by", "ci")
        assert said.strip() == f"cleared 2 pilot participant(s) of {SLUG}"
        assert shell(env, COUNT) == ["0", "0", "2"]
        with pytest.raises(stackprocs.StackError, match="no pilot data to clear"):
            stackprocs.manage(env, "reset_study", SLUG, "--pilot")
