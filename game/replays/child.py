"""The embedded default's analyses in a child process of their own.

The solver's compiled kernels hold the GIL while they search (seconds, and
minutes for some nil rounds under the points objective), so an analysis on a
thread of the server would stall its event loop, and every table with it.
Each batch of tables is analysed instead by a fresh spawned process at the
lowest priority, which the server waits for on the scheduler's gathering
thread (one batch at a time). The child is a daemon: it ends with the server.
This module imports nothing of Django at import time (the child sets Django
up first).
"""

from __future__ import annotations

import logging
import multiprocessing
import os

log = logging.getLogger(__name__)


def analyse(tables: list[int]) -> None:
    """Analyse the stored rounds of ``tables`` in a child process; wait for it."""
    child = multiprocessing.get_context("spawn").Process(
        target=_run, args=(tables,), name="spades-replay-analysis", daemon=True
    )
    child.start()
    child.join()
    if child.exitcode:
        log.error("analysing the rounds of tables %s: the child exited %s", tables, child.exitcode)


def _run(tables: list[int]) -> None:
    os.nice(19)  # the server and its bots share the machine's cores
    import django

    django.setup()
    from game.replays import tasks

    tasks.analyse_here(tables)
