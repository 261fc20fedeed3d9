"""The solver bench: our compiled solver, the reference and DDS on the same positions.

Positions come from :func:`bots.solver.random_position` (a seeded random
deal played by random legal cards to a trick's start with ``k`` cards a
hand) with spades broken, since DDS plays bridge: a bridge declarer may lead
a trump at any time. Each solver answers North/South's tricks with a fresh
table per position; each call is timed alone (``time.perf_counter``). Any
disagreement in tricks is an error: all three are exact.

DDS comes from ``endplay`` when it is importable here, or from a side
environment's Python (``peer_python``) running :mod:`lab.bench.dds_peer`: endplay
is a peer to measure against, never a dependency.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from bots.solver import Position, Solver, random_position
from bots.solver_compiled import CompiledSolver
from game.engine.cards import RANK_LETTERS

PEER_SCRIPT = Path(__file__).resolve().parent / "dds_peer.py"


class Disagreement(AssertionError):
    """Two exact solvers gave different trick counts for one position."""


def positions(k: int, samples: int, seed: int) -> list[Position]:
    import random

    rng = random.Random(f"solver-bench/{seed}/{k}")
    return [random_position(rng, k)._replace(spades_broken=True) for _ in range(samples)]


def pbn(p: Position) -> str:
    """The hands as PBN from North: spades, hearts, diamonds, clubs, high to low."""

    def hand(mask: int) -> str:
        suits = []
        for suit in (3, 2, 1, 0):
            suits.append(
                "".join(RANK_LETTERS[r] for r in range(12, -1, -1) if mask >> (suit * 13 + r) & 1)
            )
        return ".".join(suits)

    return "N:" + " ".join(hand(m) for m in p.hands)


def time_solver(
    make: Callable[[], object], ps: list[Position], cpu: list[float] | None = None
) -> tuple[list[int], list[float]]:
    """Each position's value and wall-clock time; ``cpu`` gets each call's thread
    CPU time (on a loaded machine, the fairer figure to set beside DDS's)."""
    tricks, times = [], []
    for p in ps:
        s = make()
        t0, c0 = time.perf_counter(), time.thread_time()
        v = s.value(p)  # type: ignore[attr-defined]
        times.append(time.perf_counter() - t0)
        if cpu is not None:
            cpu.append(time.thread_time() - c0)
        tricks.append(v)
    return tricks, times


def dds_available(peer_python: str | None) -> str | None:
    """How DDS will be run: "in-process", the peer's path, or None (not available)."""
    try:
        import endplay  # noqa: F401

        return "in-process"
    except ImportError:
        pass
    if peer_python and os.access(peer_python, os.X_OK):
        return peer_python
    return None


def time_dds(
    ps: list[Position], how: str, cpu: list[float] | None = None
) -> tuple[list[int], list[float]]:
    batch = [[pbn(p), p.leader] for p in ps]
    if how == "in-process":
        from . import dds_peer

        rows = dds_peer.solve(batch)
    else:
        done = subprocess.run(
            [how, str(PEER_SCRIPT)],
            input=json.dumps({"positions": batch}),
            capture_output=True,
            text=True,
            check=True,
        )
        rows = json.loads(done.stdout)
    if cpu is not None:
        cpu.extend(float(r[2]) for r in rows if len(r) > 2)
    return [int(r[0]) for r in rows], [float(r[1]) for r in rows]


def summary(times: list[float]) -> dict:
    s = sorted(times)
    return {
        "median_ms": statistics.median(s) * 1000,
        "p99_ms": s[min(len(s) - 1, int(0.99 * len(s)))] * 1000,
        "max_ms": s[-1] * 1000,
    }


def run(
    ks: list[int],
    samples: int,
    seed: int,
    reference_max_k: int = 0,
    peer_python: str | None = None,
    out: Callable[[str], None] = print,
) -> list[dict]:
    """One row per k: ours (compiled), the reference when k <= ``reference_max_k``,
    DDS when available; raises :class:`Disagreement` on any different trick count."""
    how = dds_available(peer_python)
    CompiledSolver().value(positions(3, 1, seed)[0])  # compile (or load) before timing
    rows = []
    for k in ks:
        ps = positions(k, samples, seed)
        row: dict = {"k": k, "samples": samples, "seed": seed}
        cpu_ours: list[float] = []
        ours, t_ours = time_solver(CompiledSolver, ps, cpu_ours)
        row["compiled"] = summary(t_ours)
        row["compiled_cpu"] = summary(cpu_ours)
        if k <= reference_max_k:
            ref, t_ref = time_solver(Solver, ps)
            row["reference"] = summary(t_ref)
            _check(ps, ours, ref, "the reference")
            row["reference_over_compiled"] = (
                row["reference"]["median_ms"] / row["compiled"]["median_ms"]
            )
        if how:
            cpu_dds: list[float] = []
            dds, t_dds = time_dds(ps, how, cpu_dds)
            row["dds"] = summary(t_dds)
            _check(ps, ours, dds, "DDS")
            row["compiled_over_dds"] = row["compiled"]["median_ms"] / row["dds"]["median_ms"]
            if len(cpu_dds) == len(ps):
                row["dds_cpu"] = summary(cpu_dds)
                row["compiled_over_dds_cpu"] = (
                    row["compiled_cpu"]["median_ms"] / row["dds_cpu"]["median_ms"]
                )
        row["load_average"] = round(os.getloadavg()[0], 2)
        rows.append(row)
        out(format_row(row))
    return rows


def _check(ps: list[Position], ours: list[int], theirs: list[int], who: str) -> None:
    for p, a, b in zip(ps, ours, theirs, strict=True):
        if a != b:
            raise Disagreement(
                f"{who} gives {b} tricks to North/South, we give {a}: {pbn(p)} leader {p.leader}"
            )


def format_row(r: dict) -> str:
    def part(name: str, key: str) -> str:
        if key not in r:
            return f"{name} -"
        return f"{name} {r[key]['median_ms']:.3f} / {r[key]['p99_ms']:.2f}"

    text = (
        f"k {r['k']:>2} ({r['samples']} positions, seed {r['seed']}): median / p99 ms: "
        f"{part('compiled', 'compiled')}; {part('reference', 'reference')}; {part('DDS', 'dds')}"
    )
    if "reference_over_compiled" in r:
        text += f"; reference/compiled {r['reference_over_compiled']:.1f}x"
    if "compiled_over_dds" in r:
        text += f"; compiled/DDS {r['compiled_over_dds']:.2f}x"
    if "compiled_over_dds_cpu" in r:
        text += (
            f"; CPU median / p99 ms: compiled {r['compiled_cpu']['median_ms']:.3f} / "
            f"{r['compiled_cpu']['p99_ms']:.2f}, DDS {r['dds_cpu']['median_ms']:.3f} / "
            f"{r['dds_cpu']['p99_ms']:.2f}, {r['compiled_over_dds_cpu']:.2f}x"
        )
    return text + f" (load {r['load_average']})"
