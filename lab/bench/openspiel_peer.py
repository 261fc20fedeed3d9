"""OpenSpiel's C++ ``evaluate_bots`` on random Spades rounds: the engine bench's peer.

Imports nothing of the project, so it runs under a side environment that has
``open_spiel`` installed (a peer to measure against, not a dependency):

    /tmp/peers/bin/python lab/bench/openspiel_peer.py ROUNDS RUNS SEED

prints the rounds per second of each run as JSON. OpenSpiel's ``spades`` game
is one round: the deal (chance), four bids and 52 plays, scored; four uniform
random bots play it. :func:`rates` does the same in-process.
"""

from __future__ import annotations

import json
import sys
import time


def rates(rounds: int, runs: int, seed: int) -> list[float]:
    import pyspiel

    game = pyspiel.load_game("spades")
    bots = [pyspiel.make_uniform_random_bot(p, seed) for p in range(4)]
    out = []
    for k in range(runs):
        t0 = time.perf_counter()
        for i in range(rounds):
            pyspiel.evaluate_bots(game.new_initial_state(), bots, seed + k * rounds + i)
        out.append(rounds / (time.perf_counter() - t0))
    return out


if __name__ == "__main__":
    rounds, runs, seed = (int(x) for x in sys.argv[1:4])
    json.dump(rates(rounds, runs, seed), sys.stdout)
