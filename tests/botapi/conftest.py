"""The live-table fixtures of tests/server, for the bot protocol's tests."""

from tests.server.conftest import fresh_rate_limits, live, machine_speed  # noqa: F401
