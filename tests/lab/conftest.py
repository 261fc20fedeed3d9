"""The lab's tests start as the server's do: no request counted against the rate
limits, nobody watching (the benchmark's and the success curves' tests came from
the server's tests), and ``torch_installed`` skips a test where PyTorch is not."""

import pytest

from tests.support import services
from tests.support.live_tables import fresh_rate_limits  # noqa: F401  (autouse)


@pytest.fixture
def torch_installed() -> None:
    try:
        import torch  # noqa: F401
    except ImportError:
        services.unavailable("PyTorch is not installed: pip install -e '.[train]'")
