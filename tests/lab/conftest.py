"""The lab's tests start as the server's do: no request counted against the rate
limits, nobody watching (the benchmark's and the success curves' tests came from
the server's tests)."""

from tests.support.live_tables import fresh_rate_limits  # noqa: F401  (autouse)
