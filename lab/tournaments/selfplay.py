"""Self-play data for the success curves: BIS+SRP at all four seats, exploring nil bids.

The paper's bootstrap (section 4.3): rounds of BIS *without* success curves
(nilProb = nilValue) with the SRP player, plus "a noisy variant of BIS for
better exploration", since plain BIS never bids nil with a low nil value.
Here every seat is :class:`NoisyBIS`: BIS without curves that, when it would
not bid nil, bids nil anyway with probability ``eps`` if nil is allowed
(partner has not bid nil) and its nil value is at least ``floor``. So nil
bids are observed over the whole nil-value range above the floor.

Work is cut into chunks of ``chunk_rounds`` finished rounds: chunk ``c``
plays matches seeded ``"{seed}/sc/{c}/{m}"`` (m = 0, 1, ...) until it has its
rounds (the last match is cut short). Each finished chunk is appended as one
JSON line to a log (``*.samples.jsonl``) with its nil samples; a stopped run
started again with the same settings skips the chunks already in the log, so
the data do not depend on the number of workers or on interruptions.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from bots.base import Bot
from bots.bis import BIS, legal_bid
from bots.srp import SRP
from bots.success_curves import NilSample, nil_bids_of_records
from game.engine.actions import Bid
from game.engine.cards import partner_of
from game.engine.match import Match
from game.engine.record import record_of
from game.engine.rules import Rules
from game.engine.state import Phase
from game.engine.view import SeatView, view_for
from lab.tournaments import runlog
from lab.tournaments.pool import worker_pool

MAX_ROUNDS_PER_MATCH = 1000


class SelfPlayError(ValueError):
    """Settings or files self-play cannot run with; ``str(e)`` says why."""


class NoisyBIS(BIS):
    """BIS without success curves that also bids nil at random (exploration).

    ``explored`` collects ``(round_number, seat)`` of the nil bids it made
    only because of the noise (the caller clears it between matches).
    """

    name = "BIS-noisy"

    def __init__(self, eps: float = 0.15, floor: float = 0.02, **options: Any) -> None:
        super().__init__(success_curves=None, **options)
        self.eps = eps
        self.floor = floor
        self.explored: set[tuple[int, int]] = set()

    def bid(self, view: SeatView, rng: random.Random) -> Bid:
        seat = view.seat
        assert seat is not None
        wanted, info = self.decide(view)
        if (
            wanted != 0
            and view.rules.nil
            and view.bids[partner_of(seat)] != 0
            and info["nil_value"] >= self.floor
            and rng.random() < self.eps
            and any(
                isinstance(a, Bid) and not a.blind and a.tricks == 0 for a in view.legal_actions
            )  # fmt: skip
        ):
            self.explored.add((view.round_number, seat))
            return Bid(seat, 0)
        return legal_bid(view, wanted)


@dataclass(frozen=True)
class SelfPlayConfig:
    seed: int | str = 1
    eps: float = 0.15
    floor: float = 0.02
    goal: int = 200
    lose: int = -100
    chunk_rounds: int = 100

    def rules(self) -> Rules:
        return Rules(winning_goal=self.goal, losing_goal=self.lose)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def play_chunk(config: SelfPlayConfig, chunk: int) -> dict[str, Any]:
    """Play chunk ``chunk``: its rounds and nil samples (``x``: an explored nil)."""
    bidder = NoisyBIS(config.eps, config.floor)
    bot = Bot(bidder, SRP())
    rules = config.rules()
    rounds = 0
    samples: list[dict[str, Any]] = []
    natural = explored = 0
    m = 0
    while rounds < config.chunk_rounds:
        seed = f"{config.seed}/sc/{chunk}/{m}"
        match = Match(rules, seed)
        rng = random.Random(f"{seed}/bots")
        bidder.explored.clear()
        in_match = 0
        while not match.is_over and rounds < config.chunk_rounds:
            r = match.round
            match.apply(bot.act(view_for(match, r.to_act), rng))
            if r.phase is Phase.DONE:
                rounds += 1
                in_match += 1
                for seat, s in nil_bids_of_records([record_of(r)]):
                    d = s.to_dict()
                    if (r.round_number, seat) in bidder.explored:
                        d["x"] = 1
                        explored += 1
                    else:
                        natural += 1
                    samples.append(d)
                if in_match >= MAX_ROUNDS_PER_MATCH:
                    break
        m += 1
    return {"chunk": chunk, "rounds": rounds, "matches": m, "natural": natural,
            "explored": explored, "samples": samples}  # fmt: skip


# ----- the log ----------------------------------------------------------------------


def read_log(path: Path, config: SelfPlayConfig) -> dict[int, dict[str, Any]]:
    """The finished chunks of a samples log, by index; a torn last line is dropped."""
    if not path.exists():
        return {}
    lines = path.read_text().splitlines()
    done: dict[int, dict[str, Any]] = {}
    for n, line in enumerate(lines):
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines) - 1:
                break
            raise SelfPlayError(f"{path}: line {n + 1} is not JSON") from None
        if n == 0:
            if not isinstance(item, dict) or item.get("type") != "header":
                raise SelfPlayError(f"{path} is not a self-play samples log")
            if item.get("config") != json.loads(json.dumps(config.to_dict())):
                raise SelfPlayError(
                    f"{path} holds self-play with other settings ({item.get('config')}); "
                    "use the same --seed/--eps/--floor/--goal/--lose or another output"
                )
            continue
        if isinstance(item, dict) and isinstance(item.get("chunk"), int):
            done[item["chunk"]] = item
    return done


def log_header(config: SelfPlayConfig) -> dict[str, Any]:
    return {"type": "header", "config": config.to_dict()}


def samples_of_chunks(chunks: list[dict[str, Any]]) -> list[NilSample]:
    out: list[NilSample] = []
    for c in sorted(chunks, key=lambda c: c["chunk"]):
        out.extend(NilSample.from_dict(d) for d in c["samples"])
    return out


class Progress:
    """A one-line progress bar on a stream, redrawn at most 5 times a second."""

    def __init__(self, total: int, done: int, stream: TextIO | None) -> None:
        self.total, self.done, self.start = total, done, done
        self.stream = stream
        self.t0 = time.monotonic()
        self.last = 0.0
        self.samples = 0

    def update(self, rounds: int, samples: int) -> None:
        self.done += rounds
        self.samples += samples
        now = time.monotonic()
        if self.stream is None or (now - self.last < 0.2 and self.done < self.total):
            return
        self.last = now
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(frac * 30) + "." * (30 - int(frac * 30))
        rate = (self.done - self.start) / max(now - self.t0, 1e-9)
        left = (self.total - self.done) / rate if rate else 0.0
        eta = time.strftime("%H:%M:%S", time.gmtime(left)) if rate else "-"
        self.stream.write(f"\r[{bar}] {self.done}/{self.total} rounds  {rate:.0f} rounds/s  "
                          f"+{self.samples} nil samples  ETA {eta} ")  # fmt: skip
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.write("\n")
            self.stream.flush()


def _run_chunk(args: tuple[SelfPlayConfig, int]) -> dict[str, Any]:
    return play_chunk(*args)


def _chunks(config: SelfPlayConfig, todo: list[int], workers: int) -> Iterator[dict[str, Any]]:
    if workers <= 1 or len(todo) <= 1:
        for c in todo:
            yield play_chunk(config, c)
        return
    with worker_pool(workers) as pool:
        yield from pool.imap_unordered(_run_chunk, [(config, c) for c in todo], chunksize=1)


def run_selfplay(
    config: SelfPlayConfig,
    rounds: int,
    log: str | Path,
    workers: int = 1,
    progress: TextIO | None = None,
) -> list[dict[str, Any]]:
    """Play the chunks of ``rounds`` rounds not yet in ``log``; every chunk 0..n-1 back."""
    if rounds < 1:
        raise SelfPlayError("--rounds must be at least 1")
    if workers < 1:
        raise SelfPlayError("--workers must be at least 1")
    if config.chunk_rounds < 1:
        raise SelfPlayError("the chunk size must be at least 1 round")
    config.rules()
    path = Path(log)
    if not path.parent.exists():
        raise SelfPlayError(f"folder {path.parent} does not exist")
    n = math.ceil(rounds / config.chunk_rounds)
    done = read_log(path, config)
    runlog.rewrite(path, log_header(config), sorted(done.values(), key=lambda c: c["chunk"]))
    todo = [c for c in range(n) if c not in done]
    bar = Progress(n * config.chunk_rounds,
                   sum(done[c]["rounds"] for c in done if c < n), progress)  # fmt: skip
    try:
        for chunk in _chunks(config, todo, workers):
            done[chunk["chunk"]] = chunk
            runlog.append(path, log_header(config), chunk)
            bar.update(chunk["rounds"], len(chunk["samples"]))
    finally:
        bar.close()
    return [done[c] for c in range(n)]
