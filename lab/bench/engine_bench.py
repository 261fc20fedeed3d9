"""Engine benchmark: full random rounds per second.

A round is a seeded deal, four random bids, 52 random legal plays and the
scoring. Three paths are timed: the fast path (what simulations and
tournaments use), the same round compiled (``fast_compiled.py``: the whole
loop in machine code) and the checked ``RoundState.apply`` path (what a live
table uses). Each figure is the median of several runs. When OpenSpiel is
importable here, or in a side environment's Python (``peer_python``, running
``openspiel_peer.py``), its C++ ``evaluate_bots`` on random Spades rounds is
timed in the same run, with the ratio: OpenSpiel is a peer to measure
against, never a dependency.
"""

from __future__ import annotations

import json
import os
import platform
import random
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from game.engine.actions import Bid, Play
from game.engine.cards import cards_of, left_of
from game.engine.deal import deal_hands
from game.engine.fast import play_random
from game.engine.fast_compiled import compiled_rounds
from game.engine.rules import Rules
from game.engine.scoring import score_round
from game.engine.state import RoundState


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


PEER_SCRIPT = Path(__file__).resolve().parent / "openspiel_peer.py"


def openspiel_rates(
    rounds: int, runs: int, seed: int, peer_python: str | None
) -> list[float] | None:
    """OpenSpiel's rounds/s per run, in-process or through ``peer_python``; None if neither."""
    try:
        from . import openspiel_peer

        return openspiel_peer.rates(rounds, runs, seed)
    except ImportError:
        pass
    if not peer_python or not os.access(peer_python, os.X_OK):
        return None
    done = subprocess.run(
        [peer_python, str(PEER_SCRIPT), str(rounds), str(runs), str(seed)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [float(x) for x in json.loads(done.stdout)]


def run(
    rounds: int = 20_000,
    runs: int = 5,
    seed: int = 1,
    out: Callable[[str], None] = print,
    peer_python: str | None = None,
) -> dict:
    out(f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.machine()}; {runs} runs of {rounds} rounds, seed {seed}; "
        f"load {os.getloadavg()[0]:.2f}")  # fmt: skip
    fast = _median_rate(fast_rounds, rounds, runs, seed)
    out(f"fast path:    median {statistics.median(fast):>9,.0f} rounds/s "
        f"(runs: {', '.join(f'{r:,.0f}' for r in fast)})")  # fmt: skip
    compiled_rounds(1, seed)  # compile (or load the cached machine code) before timing
    compiled = _median_rate(compiled_rounds, rounds * 10, runs, seed)
    out(f"compiled:     median {statistics.median(compiled):>9,.0f} rounds/s "
        f"(runs of {rounds * 10} rounds: {', '.join(f'{r:,.0f}' for r in compiled)})")  # fmt: skip
    peer = openspiel_rates(rounds, runs, seed, peer_python)
    if peer is None:
        out("OpenSpiel:    not available (no open_spiel here or in --peer-python)")
    else:
        ratio = statistics.median(compiled) / statistics.median(peer)
        slow = statistics.median(fast) / statistics.median(peer)
        out(f"OpenSpiel:    median {statistics.median(peer):>9,.0f} rounds/s (C++ evaluate_bots; "
            f"runs: {', '.join(f'{r:,.0f}' for r in peer)}); compiled / OpenSpiel {ratio:.1f}x, "
            f"fast path / OpenSpiel {slow:.2f}x")  # fmt: skip
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
        "compiled_rounds_per_s": statistics.median(compiled),
        "openspiel_rounds_per_s": statistics.median(peer) if peer else None,
        "checked_rounds_per_s": statistics.median(checked),
        "load_average": round(os.getloadavg()[0], 2),
    }


if __name__ == "__main__":
    run()
