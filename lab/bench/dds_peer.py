"""DDS (through ``endplay``) on positions sent as JSON: the solver bench's peer.

This file imports nothing of the project, so it runs under another Python
environment that has ``endplay`` installed (a side virtualenv: endplay is a
peer to measure against, not a dependency):

    /tmp/peers/bin/python lab/bench/dds_peer.py < positions.json

Input: ``{"positions": [[pbn, first], ...]}`` (PBN hands from North, ``first``
the seat to lead, 0 North .. 3 West); output: ``[[ns_tricks, seconds, cpu_seconds], ...]``,
North/South's double-dummy tricks with spades as trumps and the time of the
one ``solve_board`` call (wall clock, and the calling thread's CPU time, which
DDS's single-board solve runs on). :func:`solve` does the same in-process.
"""

from __future__ import annotations

import json
import sys
import time


def solve(positions: list[list]) -> list[list]:
    from endplay.dds import solve_board
    from endplay.dds.solve import SolveMode
    from endplay.types import Deal, Denom, Player

    out = []
    for pbn, first in positions:
        deal = Deal(pbn)
        deal.trump = Denom.spades
        deal.first = Player(first)
        n = len(deal[Player(first)])
        t0, c0 = time.perf_counter(), time.thread_time()
        best = max(tricks for _, tricks in solve_board(deal, SolveMode.OptimalOne))
        seconds, cpu = time.perf_counter() - t0, time.thread_time() - c0
        out.append([best if first % 2 == 0 else n - best, seconds, cpu])
    return out


if __name__ == "__main__":
    json.dump(solve(json.load(sys.stdin)["positions"]), sys.stdout)
