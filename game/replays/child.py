"""The embedded default's analyses in a child process of their own.

The solver's compiled kernels hold the GIL while they search (seconds, and
minutes for some nil rounds under the points objective), so an analysis on a
thread of the server would stall its event loop, and every table with it.
Each batch of tables is analysed instead by a fresh spawned process at the
lowest priority, which the server waits for on the scheduler's gathering
thread (one batch at a time). The child is a daemon: it ends with the server.

The analyses are the site's own work, and they yield to the people using it:
a batch waits while the server process itself is busy (:func:`wait_until_quiet`:
more than half a core of its own CPU, a study's launch or a full room), and
catches up once it is not. Measured under a study launch of 120 participants,
the spawned analyses had taken more CPU than Daphne itself (71 s to 51 s).
This module imports nothing of Django at import time (the child sets Django
up first).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

# The server process's own CPU, as a share of one core, above which it is busy.
BUSY_SHARE = 0.5
SAMPLE_SECONDS = 2.0
# However busy the server stays, a batch goes after this long: the backlog
# must not grow without end on a site that is never quiet.
LONGEST_WAIT_SECONDS = 600.0


def server_share(seconds: float) -> float:
    """This process's CPU over the next ``seconds``, as a share of one core."""
    cpu, wall = time.process_time(), time.monotonic()
    time.sleep(seconds)
    return (time.process_time() - cpu) / max(time.monotonic() - wall, 1e-9)


def wait_until_quiet(
    sample: float = SAMPLE_SECONDS,
    longest: float = LONGEST_WAIT_SECONDS,
    share: Callable[[float], float] = server_share,
) -> int:
    """Wait while this server process is busy (``share`` of a core over each
    ``sample`` seconds), at most about ``longest`` seconds; the busy samples
    seen. Every batch pays one sample: analyses are not urgent."""
    start, busy = time.monotonic(), 0
    while share(sample) >= BUSY_SHARE and time.monotonic() - start < longest:
        busy += 1
    return busy


def analyse(tables: list[int]) -> None:
    """Analyse the stored rounds of ``tables`` in a child process, once the
    server is quiet; wait for it."""
    if busy := wait_until_quiet():
        log.info("replay analysis of %d tables waited %.0f s for a quiet server", len(tables),
                 busy * SAMPLE_SECONDS)  # fmt: skip
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
