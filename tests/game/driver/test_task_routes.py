"""Bot tasks go to the right Celery queues: fast moves apart from searches;
each task is named after its module and answers to its former name."""

import pytest

from game.driver import tasks
from game.research import tally_flush
from spadesite.celery import app

# Each task of the driver, by its attribute's name, and its queue.
MOVES_AND_SEARCHES = [
    ("act", "bots"), ("submit_fallback", "bots"), ("search", "search"), ("sweep_overdue", "bots"),
]


@pytest.mark.parametrize(("task", "queue"), MOVES_AND_SEARCHES)
def test_bot_tasks_are_routed_to_their_queue(task: str, queue: str) -> None:
    name = getattr(tasks, task).name
    assert app.amqp.router.route({}, name)["queue"].name == queue


@pytest.mark.parametrize(("task", "queue"), MOVES_AND_SEARCHES)
def test_bot_tasks_are_named_after_their_module_and_answer_to_their_former_names(
    task: str, queue: str
) -> None:
    """Renamed after game/driver/tasks.py (they were named after
    game/bot_turns.py, a module that moved); a message queued under the name
    from before still finds the same work, on the same queue."""
    name = getattr(tasks, task).name
    assert name == f"{tasks.__name__}.{task}"
    former = tasks.FORMER_NAMES[name]
    assert former.startswith("game.bot_turns.")
    now, before = app.tasks[name], app.tasks[former]
    # the function itself (Celery wraps it in its retry where autoretry_for is set)
    assert now is not before and unwrapped(now) is unwrapped(before) is getattr(tasks, f"_{task}")
    assert app.amqp.router.route({}, former)["queue"].name == queue
    for option in ("acks_late", "ignore_result", "autoretry_for", "retry_kwargs"):
        assert getattr(before, option, None) == getattr(now, option, None), option


def unwrapped(task: object) -> object:
    return getattr(task, "_orig_run", getattr(task, "run", None))


def test_the_schedulers_and_beat_send_the_new_names() -> None:
    assert app.conf.beat_schedule["sweep-overdue-turns"]["task"] == tasks.SWEEP_TASK


def test_other_tasks_use_the_default_queue() -> None:
    route = app.amqp.router.route({}, "game.exports.export")
    assert route["queue"].name == app.conf.task_default_queue


def test_the_tally_flush_task_is_named_after_its_module_and_answers_to_its_former_name() -> None:
    """Renamed after game/research/tally_flush.py; a message queued under the
    name from before the move still finds the same work."""
    assert f"{tally_flush.__name__}.flush_tables" == tally_flush.FLUSH_TASK
    now, before = app.tasks[tally_flush.FLUSH_TASK], app.tasks[tally_flush.FORMER_FLUSH_TASK]
    assert now is not before and now.run is before.run
