"""What the tests share (no test module imports another: the layout test): tables
and bots (``helpers``), the inline scheduler (``inline``), the live-table
fixtures (``live_tables``, taken in by the conftest files), stacks of a test's
own (``cluster``, ``stack_checks``), stored rounds (``analytics_fixtures``,
``replay_rounds``), the scripts the PostgreSQL tests run in a ``manage.py
shell`` (``*_pg_script.py``), the test database for other threads
(``sqlite_threads``); the bot protocol's means (``bot_protocol``); a study's
participants, pages and export (``study_tables``, ``study_pages``,
``study_export``); the bots' positions and views (``positions``,
``solver_positions``, ``srp_positions``, ``learned_views``, ``qp_rounds``);
the browser's checks and steps (``browser_checks``, ``table_steps``,
``study_browser``); and the project's modules (``code_graph``)."""

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
ROOT = SUPPORT.parents[1]  # the repository
