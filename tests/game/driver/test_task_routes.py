"""Bot tasks go to the right Celery queues: fast moves apart from searches."""

import pytest

from game.driver import bot_turns
from game.research import tally_flush
from spadesite.celery import app


@pytest.mark.parametrize(
    ("task", "queue"),
    [
        (bot_turns.act, "bots"),
        (bot_turns.submit_fallback, "bots"),
        (bot_turns.search, "search"),
    ],
)
def test_bot_tasks_are_routed_to_their_queue(task: object, queue: str) -> None:
    name = task.name  # type: ignore[attr-defined]
    # The tasks keep their names from before game/driver/: a name is what a
    # queued message carries, so a deploy must not change it.
    assert name.startswith("game.bot_turns.")
    assert app.amqp.router.route({}, name)["queue"].name == queue


def test_other_tasks_use_the_default_queue() -> None:
    route = app.amqp.router.route({}, "game.exports.export")
    assert route["queue"].name == app.conf.task_default_queue


def test_the_tally_flush_task_is_named_after_its_module_and_answers_to_its_former_name() -> None:
    """Renamed after game/research/tally_flush.py; a message queued under the
    name from before the move still finds the same work."""
    assert f"{tally_flush.__name__}.flush_tables" == tally_flush.FLUSH_TASK
    now, before = app.tasks[tally_flush.FLUSH_TASK], app.tasks[tally_flush.FORMER_FLUSH_TASK]
    assert now is not before and now.run is before.run
