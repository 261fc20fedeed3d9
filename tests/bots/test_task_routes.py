"""Bot tasks go to the right Celery queues: fast moves apart from searches."""

import pytest

from spadesite.celery import app


@pytest.mark.parametrize(
    ("task_name", "queue"),
    [
        ("bots.tasks.act", "bots"),
        ("bots.tasks.search_endgame", "search"),
        ("bots.tasks.search", "search"),
    ],
)
def test_bot_tasks_are_routed_to_their_queue(task_name: str, queue: str) -> None:
    route = app.amqp.router.route({}, task_name)
    assert route["queue"].name == queue


def test_other_tasks_use_the_default_queue() -> None:
    route = app.amqp.router.route({}, "game.tasks.export")
    assert route["queue"].name == app.conf.task_default_queue
