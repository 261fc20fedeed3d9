"""The live-table fixtures (tests/support/live_tables.py), for the bot protocol's tests."""

from tests.support.live_tables import fresh_rate_limits, live, machine_speed  # noqa: F401
