"""The live-table fixtures (tests/support/live_tables.py) for every test below:
no request counted against the rate limits, nobody watching; ``live`` and
``machine_speed`` on request."""

from tests.support.live_tables import fresh_rate_limits, live, machine_speed  # noqa: F401
