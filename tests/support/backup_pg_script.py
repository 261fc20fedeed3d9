"""Run in a manage.py shell on a scratch PostgreSQL database (test_backup_restore).

``FILL`` (the first argument's mode, set by the test): the analyses' fixed rounds
(tests/support/analytics_fixtures.py), two rated matches played through the
move path by accounts (actions, round rows, ratings, tallies), a staff account,
and a study's participants with their assignments. Then (both modes) prints
one JSON line: every model's row count and a digest of its rows, the
dashboard's figures, and what the site answers for the dashboard and a replay.
"""

from __future__ import annotations

import hashlib
import json
import random
import re

from django.apps import apps
from django.contrib.auth import get_user_model
from django.test import Client

from game import master, seating
from game.engine import Rules, view_for
from game.models import RoundRecordRow, Table
from game.moves import matches
from game.research import analytics, tally_flush
from game.research.analytics_filters import Filters

FILL = False  # the test prepends "FILL = True" for the database it backs up
PASSWORD = "restore-test-password"


def fill() -> None:
    from studies import participants
    from studies.models import Study
    from tests.support import analytics_fixtures

    analytics_fixtures.build()
    users = get_user_model()
    users.objects.create_superuser("operator", "op@example.org", PASSWORD)
    players = [users.objects.create_user(f"player{n}", password=PASSWORD) for n in range(4)]
    rng = random.Random(59)
    rules = Rules(winning_goal=100, losing_goal=-100).to_dict()
    for _ in range(2):
        table = seating.create_table(rules=rules, stand_in_bots=False)
        for position, user in enumerate(players):
            seating.take_seat(table, position, user=user)
        seating.start_table(table)
        table.refresh_from_db()
        while table.status == Table.Status.PLAYING:
            match = matches.load_match(table)
            seat = match.round.to_act
            action = rng.choice(view_for(match, seat).legal_actions)
            master.submit(table.pk, seat, action, table.version)
            table.refresh_from_db()
    tally_flush.flush_pending()
    study = Study.objects.get()
    for n in range(5):
        participants.consent(study, {"PROLIFIC_PID": f"6{n:023d}", "STUDY_ID": "s1"})


def digest(model: type) -> str:
    """A hash of every row's every column, in primary key order (but an account's
    last_login, which signing in to look at the dashboard moves)."""
    fields = [f.attname for f in model._meta.concrete_fields if f.name != "last_login"]
    rows = model._default_manager.order_by("pk").values_list(*fields)
    text = json.dumps([list(r) for r in rows], default=str, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def served() -> dict[str, object]:
    client = Client()
    assert client.login(username="operator", password=PASSWORD)
    page = client.get("/dashboard/")
    # The page's figures, without what changes from one request to the next.
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page.content.decode())
    round_id = RoundRecordRow.objects.order_by("pk").values_list("pk", flat=True).last()
    return {
        "dashboard": page.status_code,
        "dashboard_digest": hashlib.sha256(html.encode()).hexdigest()[:16],
        "replay": client.get(f"/rounds/{round_id}/").status_code,
        "round_id": round_id,
    }


if FILL:
    fill()
tally_flush.flush_pending()
ours = ("game", "replays", "studies", "lobby", "auth", "ratings")
models = [m for m in apps.get_models() if m._meta.app_label in ours]
print(json.dumps({
    "rows": {m._meta.label: m._default_manager.count() for m in models},
    "digests": {m._meta.label: digest(m) for m in models},
    "figures": json.loads(json.dumps(analytics.all_analyses(Filters()), default=str)),
    "served": served(),
}, sort_keys=True))  # fmt: skip
