"""NNB's training data: self-play rounds of BIS+SRP at all four seats (numpy and the
engine only; the training itself is in ``lab.training.train``).

One sample per seat and round that bid a regular (non-nil) contract: the
seat's hand, its seat, how many bids came before it, the earlier bids it saw,
the tricks it went on to take (the label) and BIS's bid (for comparisons).
A nil bidder's tricks are left out: it plays to lose every trick, so they
say nothing about what its hand would take.

Work is cut into chunks of ``chunk_rounds`` finished rounds: chunk ``c``
plays matches (goal 200 / -100) seeded ``"{seed}/nnb/{c}/{m}"`` until it has
its rounds. Each finished chunk is one JSON line of a samples log; a stopped
run started again skips the chunks already there, so the data do not depend
on the number of workers or on interruptions (as ``lab.tournaments.selfplay``).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from bots.base import Bot
from bots.learned.features import BID_FEATURES, bid_features
from bots.registry import make_bot
from game.engine.match import Match
from game.engine.rules import Rules
from game.engine.state import Phase
from game.engine.view import view_for
from lab.tournaments import runlog
from lab.tournaments.pool import worker_pool
from lab.training.progress import Progress

MAX_ROUNDS_PER_MATCH = 1000


class DataError(ValueError):
    """Settings or files the data run cannot use; ``str(e)`` says why."""


def header(seed: int | str, chunk_rounds: int) -> dict[str, Any]:
    return {
        "type": "header",
        "data": "nnb",
        "bots": "BIS+SRP",
        "seed": seed,
        "chunk_rounds": chunk_rounds,
        "goal": 200,
        "lose": -100,
    }


def round_samples(r: Any) -> list[list[int]]:
    """``[hand, seat, earlier, partner, left, right, tricks, bid]`` for each regular
    bidder of a finished round (an earlier bid not made yet is -1)."""
    out = []
    for earlier, seat in enumerate(r.bid_order):
        bid = r.bids[seat]
        if bid == 0 or bid is None:
            continue
        seen = [-1, -1, -1, -1]
        for s in r.bid_order[:earlier]:
            seen[s] = r.bids[s]
        rel = [seen[(seat + 2) & 3], seen[(seat + 1) & 3], seen[(seat + 3) & 3]]
        out.append([r.hands_dealt[seat], seat, earlier, *rel, r.tricks_won[seat], bid])
    return out


def play_chunk(
    seed: int | str, chunk: int, chunk_rounds: int, bots: str = "BIS+SRP"
) -> dict[str, Any]:
    bot: Bot = make_bot(bots)
    rules = Rules(winning_goal=200, losing_goal=-100)
    samples: list[list[int]] = []
    rounds = m = 0
    while rounds < chunk_rounds:
        match_seed = f"{seed}/nnb/{chunk}/{m}"
        match = Match(rules, match_seed)
        rng = random.Random(f"{match_seed}/bots")
        in_match = 0
        while not match.is_over and rounds < chunk_rounds and in_match < MAX_ROUNDS_PER_MATCH:
            r = match.round
            match.apply(bot.act(view_for(match, r.to_act), rng))
            if r.phase is Phase.DONE:
                rounds += 1
                in_match += 1
                samples.extend(round_samples(r))
        m += 1
    return {"chunk": chunk, "rounds": rounds, "samples": samples}


def _run(args: tuple[int | str, int, int]) -> dict[str, Any]:
    return play_chunk(*args)


def read_log(path: Path, head: dict[str, Any]) -> dict[int, dict[str, Any]]:
    if not path.exists():
        return {}
    lines = path.read_text().splitlines()
    done: dict[int, dict[str, Any]] = {}
    for n, line in enumerate(lines):
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines) - 1:
                break  # the torn last line of a stopped run
            raise DataError(f"{path}: line {n + 1} is not JSON") from None
        if n == 0:
            if item != json.loads(json.dumps(head)):
                raise DataError(f"{path} holds other data ({item}); use another --data file")
            continue
        done[item["chunk"]] = item
    return done


def generate(
    seed: int | str,
    rounds: int,
    log: str | Path,
    workers: int = 1,
    chunk_rounds: int = 100,
    progress: TextIO | None = None,
) -> list[dict[str, Any]]:
    """Chunks 0..n-1 of ``rounds`` rounds, playing only those not yet in ``log``."""
    if rounds < 1 or workers < 1 or chunk_rounds < 1:
        raise DataError("--rounds, --workers and the chunk size must be at least 1")
    path = Path(log)
    if not path.parent.exists():
        raise DataError(f"folder {path.parent} does not exist")
    head = header(seed, chunk_rounds)
    n = math.ceil(rounds / chunk_rounds)
    done = read_log(path, head)
    runlog.rewrite(path, head, sorted(done.values(), key=lambda c: c["chunk"]))
    todo = [c for c in range(n) if c not in done]
    bar = Progress(
        "self-play rounds",
        n * chunk_rounds,
        sum(done[c]["rounds"] for c in done if c < n),
        progress,
    )
    try:
        for chunk in _chunks(seed, todo, chunk_rounds, workers):
            done[chunk["chunk"]] = chunk
            runlog.append(path, head, chunk)
            bar.update(chunk["rounds"])
    finally:
        bar.close()
    return [done[c] for c in range(n)]


def _chunks(
    seed: int | str, todo: list[int], chunk_rounds: int, workers: int
) -> Iterator[dict[str, Any]]:
    if workers <= 1 or len(todo) <= 1:
        for c in todo:
            yield play_chunk(seed, c, chunk_rounds)
        return
    with worker_pool(workers) as pool:
        args = [(seed, c, chunk_rounds) for c in todo]
        yield from pool.imap_unordered(_run, args, chunksize=1)


def arrays(chunks: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, tricks taken and BIS's bids of every sample, in chunk order."""
    rows = [s for c in sorted(chunks, key=lambda c: c["chunk"]) for s in c["samples"]]
    x = np.zeros((len(rows), BID_FEATURES), dtype=np.float32)
    for i, (hand, seat, earlier, p, left, right, _, _) in enumerate(rows):
        bids: list[int | None] = [None] * 4
        for s, b in (((seat + 2) & 3, p), ((seat + 1) & 3, left), ((seat + 3) & 3, right)):
            bids[s] = None if b < 0 else b
        x[i] = bid_features(hand, seat, bids, earlier)
    y = np.array([r[6] for r in rows], dtype=np.float32)
    bis = np.array([r[7] for r in rows], dtype=np.float32)
    return x, y, bis
