"""What the server's tests share: tables and bots (``helpers``), the inline
scheduler (``inline``), the live-table fixtures (``live_tables``, taken in by
the conftest files), stacks of a test's own (``cluster``, ``stack_checks``),
stored rounds (``analytics_fixtures``, ``replay_rounds``) and the scripts the
PostgreSQL tests run in a ``manage.py shell`` (``*_pg_script.py``)."""

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
ROOT = SUPPORT.parents[1]  # the repository
