"""Engine benchmark: full random rounds per second.

A round is a seeded deal, four random bids, 52 random legal plays and the
scoring. Two paths are timed: the fast path (what simulations and
tournaments use) and the checked ``RoundState.apply`` path (what a live
table uses). Each figure is the median of several runs.
"""

from __future__ import annotations

import platform
import random
import statistics
import time
from collections.abc import Callable

from .actions import Bid, Play
from .cards import cards_of, left_of
from .deal import deal_hands
from .fast import play_random
from .rules import Rules
from .scoring import score_round
from .state import RoundState


def fast_rounds(n: int, seed: int) -> int:
    """Play ``n`` random rounds on the fast path; returns a checksum of the points."""
    rules = Rules()
    rng = random.Random(seed)
    rand = rng.random
    total = 0
    for i in range(n):
        hands = list(deal_hands(f"{seed}/{i}"))
        dealer = i & 3
        bids = [1 + int(rand() * 4) for _ in range(4)]
        won = play_random(hands, left_of(dealer), rand)
        ns, ew = score_round(rules, bids, (False,) * 4, won, (0, 0), (0, 0))
        total += ns.points - ew.points
    return total


def checked_rounds(n: int, seed: int) -> int:
    """Play ``n`` random rounds through ``RoundState.apply`` (every action checked)."""
    rules = Rules(blind_nil=False)
    rng = random.Random(seed)
    total = 0
    for i in range(n):
        r = RoundState(rules, dealer=i & 3, hands=deal_hands(f"{seed}/{i}"))
        for _ in range(4):
            r.apply(Bid(r.to_act, 1 + rng.randrange(4)))
        while r.result is None:
            r.apply(Play(r.to_act, rng.choice(cards_of(r.legal_play_mask()))))
        total += r.result[0].points - r.result[1].points
    return total


def _median_rate(fn: Callable[[int, int], int], n: int, runs: int, seed: int) -> list[float]:
    rates = []
    for k in range(runs):
        t0 = time.perf_counter()
        fn(n, seed + k)
        rates.append(n / (time.perf_counter() - t0))
    return rates


def run(
    rounds: int = 20_000, runs: int = 5, seed: int = 1, out: Callable[[str], None] = print
) -> dict:
    out(f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.machine()}; {runs} runs of {rounds} rounds, seed {seed}")  # fmt: skip
    fast = _median_rate(fast_rounds, rounds, runs, seed)
    out(f"fast path:    median {statistics.median(fast):>9,.0f} rounds/s "
        f"(runs: {', '.join(f'{r:,.0f}' for r in fast)})")  # fmt: skip
    checked_n = max(1, rounds // 10)
    checked = _median_rate(checked_rounds, checked_n, runs, seed)
    out(f"checked path: median {statistics.median(checked):>9,.0f} rounds/s "
        f"(runs of {checked_n} rounds: {', '.join(f'{r:,.0f}' for r in checked)})")  # fmt: skip
    return {
        "python": platform.python_version(),
        "rounds": rounds,
        "runs": runs,
        "seed": seed,
        "fast_rounds_per_s": statistics.median(fast),
        "checked_rounds_per_s": statistics.median(checked),
    }


if __name__ == "__main__":
    run()
