"""What a run of the websocket load benchmark measured (``lab.bench.loadtest``'s
clients fill :class:`Figures`), and the CPU counters ``manage.py bench_server``
and ``bench_workers`` read beside it."""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from typing import Any

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Figures:
    """What one run measured (milliseconds for latencies)."""

    acting: list[float] = field(default_factory=list)  # own move back to the acting socket
    timeline: list[tuple[float, float]] = field(default_factory=list)  # (sent at, ms)
    others: list[float] = field(default_factory=list)  # the move reaching the other three
    sent: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    gaps: int = 0
    gaps_recovered: int = 0
    undelivered: int = 0  # (action, socket) pairs whose state never came
    skipped_ticks: int = 0  # a table's turn came while its last move was still on its way
    finished_tables: int = 0
    connect_failures: int = 0

    def summary(self) -> dict[str, Any]:
        both = self.acting + self.others
        seconds = self.by_second()
        return {
            "actions_sent": self.sent,
            "deliveries": len(both),
            "p50_ms": percentile(both, 50),
            "p99_ms": percentile(both, 99),
            "max_ms": max(both) if both else None,
            "acting_p50_ms": percentile(self.acting, 50),
            "acting_p99_ms": percentile(self.acting, 99),
            "others_p50_ms": percentile(self.others, 50),
            "others_p99_ms": percentile(self.others, 99),
            "gaps": self.gaps,
            "gaps_recovered": self.gaps_recovered,
            "undelivered": self.undelivered,
            "skipped_ticks": self.skipped_ticks,
            "errors": dict(self.errors),
            "finished_tables": self.finished_tables,
            "connect_failures": self.connect_failures,
            # A steadier reading than the run's p99, which one stall of the
            # machine in one second can move on its own.
            "p99_median_of_seconds_ms": (
                statistics.median(b["p99_ms"] for b in seconds) if seconds else None
            ),
            "by_second": seconds,
        }

    def by_second(self) -> list[dict[str, Any]]:
        """Per second of the run (by when the action was sent): deliveries, p50,
        p99 and max, to tell a steady load from bursts (e.g. every table's
        round ending in the same second)."""
        if not self.timeline:
            return []
        start = min(t for t, _ in self.timeline)
        buckets: dict[int, list[float]] = {}
        for t, ms in self.timeline:
            buckets.setdefault(int(t - start), []).append(ms)
        return [
            {
                "second": second,
                "deliveries": len(values),
                "p50_ms": percentile(values, 50),
                "p99_ms": percentile(values, 99),
                "max_ms": max(values),
            }
            for second, values in sorted(buckets.items())
        ]


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def machine_cpu() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine since boot."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return sum(values) - idle, sum(values)
