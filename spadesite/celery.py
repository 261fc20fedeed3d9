"""The Celery app: bot moves and searches run in workers in production.

Start workers per queue, e.g. `celery -A spadesite worker -Q bots` for fast
moves and `celery -A spadesite worker -Q search` for UCT searches, so a long
search never delays a quick move.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spadesite.settings")

app = Celery("spadesite")
# Every CELERY_* Django setting configures Celery (CELERY_BROKER_URL -> broker_url).
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Celery beat (`celery -A spadesite beat`, one per deployment) sweeps for
# tables whose bot move was lost (game/sweeper.py).
app.conf.beat_schedule = {
    "sweep-overdue-turns": {"task": "game.bot_turns.sweep_overdue", "schedule": 15.0},
}

# A list of (glob, route) pairs is matched in order, first match wins, so the
# narrower search pattern must come before the catch-all for bot tasks.
app.conf.task_routes = (
    [
        ("game.bot_turns.search*", {"queue": "search"}),
        ("game.bot_turns.*", {"queue": "bots"}),
    ],
)
