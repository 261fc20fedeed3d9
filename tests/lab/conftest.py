"""The lab's tests start as the server's do: no request counted against the rate
limits, nobody watching (the benchmark's and the success curves' tests came from
tests/server)."""

from tests.server.conftest import fresh_rate_limits  # noqa: F401  (autouse)
