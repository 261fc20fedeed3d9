"""Tournaments between two bots: full matches, reproducible, resumable, in parallel.

Bot A (``ns``) sits North/South and bot B (``ew``) East/West. Game ``g`` is a
full :class:`~game.engine.match.Match` from the match seed
``"{seed}/game/{g}"``, every action chosen by the seat's bot from
``view_for(match, seat)``, so any game can be replayed from the tournament
seed and its index alone.

Duplicate mode (the duplicate-bridge idea): games come in pairs that share
a match seed, so the same cards go to the same seats, and the bots swap
seats in the second game of each pair (game ``2d`` and ``2d + 1`` are deal
sequence ``d``). The luck of the cards then largely cancels out.

Each finished game is appended as one JSON line to a results log
(``<output>.games.jsonl`` beside the JSON output); a stopped run started
again with the same settings skips the games already in the log. The summary
is computed from the game records in game order, so it does not depend on
the number of worker processes.

Run it without Django: ``python -m lab.tournaments.tournament --ns RB+WRP --ew MS+WRP
--games 200 --seed 1``, or through ``manage.py tournament`` (same options).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from bots.base import Bot
from bots.registry import UnknownBot, make_bot
from game.engine.match import Match
from game.engine.round_types import RoundType, nil_position, round_type
from game.engine.rules import Rules, RulesError
from game.engine.view import view_for
from game.research.intervals import Z_95, wilson_interval
from lab.tournaments import runlog
from lab.tournaments.pool import exit_on_sigterm, worker_pool

# A side named so is a bot account's program, playing through the bot protocol
# (game.external_bots; lab.tournaments.external), never a bot of this process.
EXTERNAL_PREFIX = "ext:"
# A match that has not ended after this many rounds is stopped and counted as a draw.
MAX_ROUNDS = 1000


class TournamentError(ValueError):
    """Settings or files a tournament cannot run with; ``str(e)`` says why."""


@dataclass(frozen=True)
class TournamentConfig:
    ns: str  # bot A: North/South (East/West in the swapped half of a duplicate pair)
    ew: str  # bot B
    games: int
    goal: int = 200
    lose: int = -100
    seed: int | str = 1
    duplicate: bool = False
    rules_options: dict[str, Any] = field(default_factory=dict)  # other Rules fields

    def rules(self) -> Rules:
        try:
            return Rules(
                **{**self.rules_options, "winning_goal": self.goal, "losing_goal": self.lose}
            )
        except (RulesError, TypeError) as e:
            raise TournamentError(f"bad rules: {e}") from None

    def validate(self) -> None:
        if isinstance(self.games, bool) or not isinstance(self.games, int) or self.games < 1:
            raise TournamentError("the number of games must be at least 1")
        if self.duplicate and self.games % 2:
            raise TournamentError(
                "duplicate mode plays each deal sequence twice: give an even number of games"
            )
        for name in (self.ns, self.ew):
            if name.startswith(EXTERNAL_PREFIX):
                continue  # a program elsewhere (lab.tournaments.external checks the account)
            try:
                make_bot(name)
            except UnknownBot as e:
                raise TournamentError(str(e)) from None
        self.rules()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def game_plan(self, index: int) -> tuple[str, bool]:
        """The match seed of game ``index`` and whether the bots sit swapped."""
        if self.duplicate:
            return f"{self.seed}/game/{index // 2}", bool(index & 1)
        return f"{self.seed}/game/{index}", False

    def compatible_with(self, other: dict[str, Any]) -> bool:
        """Same games played the same way (the count of games may differ)."""
        mine = {k: v for k, v in self.to_dict().items() if k != "games"}
        theirs = {k: v for k, v in other.items() if k != "games"}
        return json.loads(json.dumps(mine)) == theirs


# ----- one game ---------------------------------------------------------------


def play_match(
    config: TournamentConfig,
    index: int,
    bot_a: Bot,
    bot_b: Bot,
    before_apply: Callable[[Match, int, Any, Any, Bot], None] | None = None,
) -> tuple[Match, str, bool]:
    """Play game ``index`` to the end, or until it is stopped after ``MAX_ROUNDS``
    rounds: the match, its seed and whether the bots sit swapped. Every replay of a
    tournament's games (``lab.tournaments.storage``, ``lab.training.nil_sets``) plays
    them here. ``before_apply(match, seat, view, action, bot)``, if given, sees each
    action before it is applied."""
    match_seed, swapped = config.game_plan(index)
    match = Match(config.rules(), match_seed)
    seat_bots = (bot_b, bot_a, bot_b, bot_a) if swapped else (bot_a, bot_b, bot_a, bot_b)
    rng = random.Random(f"{match_seed}/bots")
    while not match.is_over and len(match.rounds) <= MAX_ROUNDS:
        seat = match.round.to_act
        view = view_for(match, seat)
        action = seat_bots[seat].act(view, rng)
        if before_apply is not None:
            before_apply(match, seat, view, action, seat_bots[seat])
        match.apply(action)
    return match, match_seed, swapped


def play_game(config: TournamentConfig, index: int, bot_a: Bot, bot_b: Bot) -> dict[str, Any]:
    """Play game ``index`` to the end; the record names sides A (``ns``) and B (``ew``)."""
    match, match_seed, swapped = play_match(config, index, bot_a, bot_b)
    return game_record(index, match, match_seed, swapped)


def game_record(index: int, match: Match, match_seed: str, swapped: bool) -> dict[str, Any]:
    """The log's record of game ``index``, played in-process or at a table of the
    site (``lab.tournaments.external``)."""
    rounds = []
    for r in match.rounds:
        if r.result is None:  # the unfinished round of a match stopped at MAX_ROUNDS
            continue
        rounds.append(
            {
                "bids": list(r.bids),
                "blind": list(r.blind),
                "tricks": list(r.tricks_won),
                "points": [r.result[0].points, r.result[1].points],
            }
        )
    side_of_partnership = (1, 0) if swapped else (0, 1)
    scores = [0, 0]
    for p in (0, 1):
        scores[side_of_partnership[p]] = match.scores[p]
    winner = None if match.winner is None else side_of_partnership[match.winner]
    return {
        "game": index,
        "seed": match_seed,
        "swapped": swapped,
        "winner": winner,  # 0: bot A, 1: bot B, None: stopped at MAX_ROUNDS
        "scores": scores,  # [bot A, bot B]
        "rounds": rounds,  # seats and partnerships as seated (N/S first)
    }


# ----- statistics ---------------------------------------------------------------


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def summarize(config: TournamentConfig, records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Each side's results over the game records (in any order)."""
    recs = sorted(records, key=lambda r: r["game"])
    nil_allowed = config.rules().nil
    wins = [0, 0]
    points = [0, 0]
    nil_bids = [0, 0]
    nil_made = [0, 0]
    blind_bids = [0, 0]
    blind_made = [0, 0]
    by_type: list[dict[str, list[int]]] = [{}, {}]
    by_position: list[dict[str, list[int]]] = [{}, {}]
    rounds = 0
    draws = 0
    for rec in recs:
        if rec["winner"] is None:
            draws += 1
        else:
            wins[rec["winner"]] += 1
        swapped = rec["swapped"]
        for rd in rec["rounds"]:
            rounds += 1
            bids, tricks = rd["bids"], rd["tricks"]
            for partnership in (0, 1):
                side = partnership ^ swapped
                pts = rd["points"][partnership]
                points[side] += pts
                pos = nil_position(bids, partnership, nil_allowed).value
                cell = by_position[side].setdefault(pos, [0, 0])
                cell[0] += 1
                cell[1] += pts
                for seat in (partnership, partnership + 2):
                    label = round_type(bids, seat, nil_allowed).label
                    cell = by_type[side].setdefault(label, [0, 0])
                    cell[0] += 1
                    cell[1] += pts
                    if nil_allowed and bids[seat] == 0:
                        made = tricks[seat] == 0
                        if rd["blind"][seat]:
                            blind_bids[side] += 1
                            blind_made[side] += made
                        else:
                            nil_bids[side] += 1
                            nil_made[side] += made
    games = len(recs)
    sides = []
    for side, name in enumerate((config.ns, config.ew)):
        lo, hi = wilson_interval(wins[side], games)
        sides.append(
            {
                "bot": name,
                "side": "A" if side == 0 else "B",
                "wins": wins[side],
                "win_rate": _ratio(wins[side], games),
                "win_rate_ci95": [lo, hi],
                "points": points[side],
                "points_per_round": _ratio(points[side], rounds),
                "nil": {
                    "bids": nil_bids[side],
                    "made": nil_made[side],
                    "frequency": _ratio(nil_bids[side], 2 * rounds),
                    "success_rate": _ratio(nil_made[side], nil_bids[side]),
                },
                "blind_nil": {
                    "bids": blind_bids[side],
                    "made": blind_made[side],
                    "frequency": _ratio(blind_bids[side], 2 * rounds),
                    "success_rate": _ratio(blind_made[side], blind_bids[side]),
                },
                # Per seat of the side: each seat-round adds its side's points
                # under that seat's round type (the SRP types).
                "round_types": {
                    t.label: {
                        "seat_rounds": by_type[side].get(t.label, [0, 0])[0],
                        "points_per_round": _ratio(
                            by_type[side].get(t.label, [0, 0])[1],
                            by_type[side].get(t.label, [0, 0])[0],
                        ),
                    }
                    for t in RoundType
                },
                "nil_positions": {
                    k: {"rounds": v[0], "points_per_round": _ratio(v[1], v[0])}
                    for k, v in sorted(by_position[side].items())
                },
            }
        )
    summary: dict[str, Any] = {
        "config": config.to_dict(),
        "rules": config.rules().to_dict(),
        "games": games,
        "rounds": rounds,
        "rounds_per_game": _ratio(rounds, games),
        "draws": draws,
        "sides": sides,
    }
    if config.duplicate:
        summary["duplicate"] = duplicate_summary(recs)
    return summary


def duplicate_summary(recs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The deal sequences (both games of one sequence, seats swapped) as paired trials.

    ``sign_test_p``: the two-sided exact binomial test of A-won-both against
    B-won-both (the split sequences carry no information on who is better),
    far more sensitive than the games' win rate when the two bots differ in few
    deals. ``points_difference``: A's points per round minus B's over both
    games of a sequence, its mean over the sequences with a normal 95% interval.
    """
    from scipy.stats import binomtest

    winners: dict[int, list[int | None]] = {}
    diff: dict[int, list[float]] = {}
    for rec in recs:
        d = rec["game"] // 2
        winners.setdefault(d, []).append(rec["winner"])
        cell = diff.setdefault(d, [0.0, 0.0])
        for rd in rec["rounds"]:
            a = rd["points"][rec["swapped"]]
            b = rd["points"][1 - rec["swapped"]]
            cell[0] += a - b
            cell[1] += 1
    complete = [d for d, w in winners.items() if len(w) == 2]
    a_both = sum(1 for d in complete if winners[d] == [0, 0])
    b_both = sum(1 for d in complete if winners[d] == [1, 1])
    per_round = np.array([diff[d][0] / diff[d][1] for d in complete if diff[d][1]])
    p = binomtest(a_both, a_both + b_both).pvalue if a_both + b_both else None
    mean = float(per_round.mean()) if len(per_round) else None
    half = (Z_95 * float(per_round.std(ddof=1)) / math.sqrt(len(per_round))
            if len(per_round) > 1 else None)  # fmt: skip
    return {
        "deal_sequences": len(complete),
        "a_won_both": a_both,
        "b_won_both": b_both,
        "split": sum(1 for d in complete if set(winners[d]) == {0, 1}),
        "sign_test_p": None if p is None else float(p),
        "points_difference": {
            "per_round": mean,
            "ci95": [mean - half, mean + half] if mean is not None and half is not None else None,
        },
    }


# ----- the results log (stop and resume) -----------------------------------------


def log_path_for(output: str | os.PathLike[str]) -> Path:
    """The JSONL log of finished games beside ``output`` (results.json -> results.games.jsonl)."""
    p = Path(output)
    return p.with_name(p.stem + ".games.jsonl")


def read_log(path: Path, config: TournamentConfig) -> dict[int, dict[str, Any]]:
    """The finished games in a results log, by index; a torn last line is dropped."""
    if not path.exists():
        return {}
    done: dict[int, dict[str, Any]] = {}
    lines = path.read_text().splitlines()
    header: dict[str, Any] | None = None
    for n, line in enumerate(lines):
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines) - 1:
                break  # the run was stopped in the middle of writing a line
            raise TournamentError(f"{path}: line {n + 1} is not JSON") from None
        if n == 0:
            if not isinstance(item, dict) or item.get("type") != "header":
                raise TournamentError(f"{path} is not a tournament results log")
            header = item
            continue
        if isinstance(item, dict) and isinstance(item.get("game"), int):
            done[item["game"]] = item
    if header is None:
        return {}
    if not config.compatible_with(header.get("config", {})):
        raise TournamentError(
            f"{path} holds games of a different tournament (other bots, seed, goals or "
            "mode); choose another output file or delete it"
        )
    return {g: rec for g, rec in done.items() if g < config.games}


def log_header(config: TournamentConfig) -> dict[str, Any]:
    return {"type": "header", "config": config.to_dict()}


# ----- running -------------------------------------------------------------------


class ProgressBar:
    """A one-line progress bar on a stream (stderr), redrawn at most 5 times a second."""

    def __init__(self, total: int, done: int = 0, stream: TextIO | None = None) -> None:
        self.total, self.done, self.start_done = total, done, done
        self.stream = stream
        self.t0 = time.monotonic()
        self.last = 0.0
        self.drawn = -1
        self.note = ""  # drawn after the ETA (a Celery run: the workers seen)

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.stream is not None and (now - self.last >= 0.2 or self.done >= self.total):
            self.last = now
            self.draw(now)

    def draw(self, now: float) -> None:
        assert self.stream is not None
        self.drawn = self.done
        width = 30
        frac = self.done / self.total if self.total else 1.0
        bar = "#" * int(frac * width) + "." * (width - int(frac * width))
        rate = (self.done - self.start_done) / max(now - self.t0, 1e-9)
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        eta = time.strftime("%H:%M:%S", time.gmtime(left)) if rate > 0 else "--:--:--"
        self.stream.write(
            f"\r[{bar}] {self.done}/{self.total} games  {rate:.2f} games/s  ETA {eta} "
            + (f" {self.note} " if self.note else "")
        )
        self.stream.flush()

    def close(self) -> None:
        if self.stream is not None:
            if self.drawn != self.done:
                self.draw(time.monotonic())
            self.stream.write("\n")
            self.stream.flush()


_worker: dict[str, Any] = {}


def _init_worker(config: TournamentConfig) -> None:
    _worker["config"] = config
    _worker["bots"] = (make_bot(config.ns), make_bot(config.ew))


def _play_in_worker(index: int) -> dict[str, Any]:
    config = _worker["config"]
    bot_a, bot_b = _worker["bots"]
    return play_game(config, index, bot_a, bot_b)


def units_of(config: TournamentConfig, todo: list[int]) -> list[tuple[int, list[int]]]:
    """The Celery tasks of game indexes ``todo`` (config index 0): one game each,
    or in duplicate mode the games of one deal sequence together."""
    if not config.duplicate:
        return [(0, [g]) for g in todo]
    pairs: dict[int, list[int]] = {}
    for g in todo:
        pairs.setdefault(g // 2, []).append(g)
    return [(0, games) for _, games in sorted(pairs.items())]


def _play_all(config: TournamentConfig, todo: list[int], workers: int) -> Iterator[dict[str, Any]]:
    if workers <= 1 or len(todo) <= 1:
        _init_worker(config)
        for g in todo:
            yield _play_in_worker(g)
        return
    with worker_pool(workers, _init_worker, (config,)) as pool:
        yield from pool.imap_unordered(_play_in_worker, todo, chunksize=1)


def run_tournament(
    config: TournamentConfig,
    workers: int = 1,
    log: str | os.PathLike[str] | None = None,
    progress: TextIO | None = None,
    on_game: Callable[[dict[str, Any]], None] | None = None,
    remote: Callable[[list[TournamentConfig]], Any] | None = None,
) -> dict[str, Any]:
    """Play every game not yet in ``log`` and return the summary of all of them.

    ``log`` is the JSONL results log (finished games are appended as they
    come and skipped when the run is started again). ``progress``: a stream
    for the progress bar (stderr), or None for none. ``remote``: instead of
    ``workers`` processes, the games go to the run it makes for the configs
    (``lab.tournaments.celery_run.CeleryRun``: Celery workers), which plays units
    of games (``units_of``) and yields ``(config index, record)`` once a game.
    """
    config.validate()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise TournamentError("--workers must be at least 1")
    if remote is None and any(n.startswith(EXTERNAL_PREFIX) for n in (config.ns, config.ew)):
        raise TournamentError("an external bot plays through the bot protocol: run "
                              "manage.py tournament, which serves it (--bot-port)")  # fmt: skip
    log_path = Path(log) if log is not None else None
    done: dict[int, dict[str, Any]] = {}
    if log_path is not None:
        if log_path.parent and not log_path.parent.exists():
            raise TournamentError(f"folder {log_path.parent} does not exist")
        done = read_log(log_path, config)
        runlog.rewrite(log_path, log_header(config), sorted(done.values(), key=lambda r: r["game"]))
    todo = [g for g in range(config.games) if g not in done]
    bar = ProgressBar(config.games, len(done), progress)
    t0 = time.perf_counter()
    played = 0
    records: Iterator[tuple[int, dict[str, Any]]]
    if remote is not None:
        run = remote([config])
        if log_path is not None:  # results.games.jsonl -> results.timings.jsonl
            run.timings = log_path.with_name(log_path.name.replace(".games.", ".timings."))
        records = run.play(units_of(config, todo), bar)
    else:
        records = ((0, rec) for rec in _play_all(config, todo, workers))
    try:
        with exit_on_sigterm() if remote is not None else nullcontext():
            for _, rec in records:
                done[rec["game"]] = rec
                played += 1
                if log_path is not None:
                    runlog.append(log_path, log_header(config), rec)
                if on_game is not None:
                    on_game(rec)
                bar.update()
    finally:
        records.close()  # a Celery run lets go of its run in Redis
        if progress is not None:
            bar.close()
    elapsed = time.perf_counter() - t0
    summary = summarize(config, done.values())
    summary["run"] = {
        "workers": getattr(run, "label", "celery") if remote is not None else workers,
        "games_played_now": played,
        "games_resumed": config.games - played,
        "elapsed_seconds": round(elapsed, 3),
        "seconds_per_game": round(elapsed / played, 4) if played else None,
    }
    if remote is not None:
        summary["run"].update(run.stats.to_dict())
    return summary


def report_log(config: TournamentConfig, log: str | os.PathLike[str]) -> dict[str, Any]:
    """The summary of the games a run has finished so far, playing none. In
    duplicate mode only whole pairs count (a deal sequence played both ways),
    so that an unfinished run is not skewed by half-played pairs."""
    config.validate()
    done = read_log(Path(log), config)
    kept = list(done.values())
    if config.duplicate:
        kept = [rec for g, rec in done.items() if g ^ 1 in done]
    summary = summarize(config, kept)
    summary["partial"] = {
        "games_in_log": len(done),
        "games_summarized": len(kept),
        "games_planned": config.games,
    }
    return summary


# ----- text -----------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def format_summary(summary: dict[str, Any]) -> str:
    """A readable report of a tournament summary."""
    cfg = summary["config"]
    a, b = summary["sides"]
    mode = "duplicate (each deal sequence twice, seats swapped)" if cfg["duplicate"] else "plain"
    lines = [
        f"Tournament {a['bot']} (A) vs {b['bot']} (B): seed {cfg['seed']}, "
        f"{summary['games']} games, {summary['rounds']} rounds, "
        f"goal {cfg['goal']} / {cfg['lose']}, {mode}",
    ]
    partial = summary.get("partial")
    if partial:
        lines.append(
            f"  so far: {partial['games_summarized']} of the {partial['games_planned']} "
            f"games planned ({partial['games_in_log']} finished"
            + (", whole duplicate pairs only)" if cfg["duplicate"] else ")")
        )
    if cfg["duplicate"]:
        lines.append("  A sits North/South in even games and East/West in odd games")
    else:
        lines.append("  A sits North/South, B East/West")
    for side in (a, b):
        lo, hi = side["win_rate_ci95"]
        nil = side["nil"]
        lines.append(
            f"  {side['side']} {side['bot']:<12} wins {side['wins']:>6}  "
            f"win rate {_pct(side['win_rate'])} (95% CI {_pct(lo)} - {_pct(hi)})  "
            f"points/round {_num(side['points_per_round'])}  "
            f"nil {_pct(nil['frequency'])} of bids, made {_pct(nil['success_rate'])} "
            f"({nil['made']}/{nil['bids']})"
        )
    if summary["draws"]:
        lines.append(f"  unfinished after {MAX_ROUNDS} rounds: {summary['draws']}")
    if "duplicate" in summary:
        d = summary["duplicate"]
        p = d.get("sign_test_p")
        lines.append(
            f"  deal sequences {d['deal_sequences']}: A won both {d['a_won_both']}, "
            f"B won both {d['b_won_both']}, split {d['split']}"
            + (f" (sign test p = {p:.2g})" if p is not None else "")
        )
        diff = d.get("points_difference", {})
        if diff.get("ci95"):
            lo, hi = diff["ci95"]
            lines.append(
                f"  points per round, A minus B, per deal sequence: {diff['per_round']:+.2f} "
                f"(95% CI {lo:+.2f} to {hi:+.2f})"
            )
    lines.append("  points per round by round type (seat-rounds A | B):")
    for t in RoundType:
        ra, rb = a["round_types"][t.label], b["round_types"][t.label]
        lines.append(
            f"    {t.label:<14} A {_num(ra['points_per_round']):>7} ({ra['seat_rounds']:>6})"
            f"   B {_num(rb['points_per_round']):>7} ({rb['seat_rounds']:>6})"
        )
    run = summary.get("run")
    if run:
        spg = run["seconds_per_game"]
        if "external_bot_decisions" in run:  # lab.tournaments.external
            workers = (
                f"the bot protocol ({run['external_bot_decisions']} decisions of the "
                f"external bot, {run['external_stand_in_decisions']} by its stand-in)"
            )
        elif run["workers"] == "celery":
            workers = f"{len(run['workers_seen'])} Celery worker(s)"
        else:
            workers = f"{run['workers']} worker(s)"  # fmt: skip
        lines.append(
            f"  played now {run['games_played_now']} games with {workers} in "
            f"{run['elapsed_seconds']:.1f} s"
            + (f" ({1000 * spg:.1f} ms per game)" if spg else "")
            + (f"; {run['games_resumed']} resumed from the log" if run["games_resumed"] else "")
        )
        if run.get("cpu_seconds_per_game") is not None:
            lines.append(
                f"  CPU per game on the workers: {run['cpu_seconds_per_game']:.3f} s"
                + (f"; refused by {', '.join(sorted(run['refused_by']))}"
                   if run["refused_by"] else "")
            )  # fmt: skip
    return "\n".join(lines)


def write_summary(summary: dict[str, Any], output: str | os.PathLike[str]) -> None:
    path = Path(output)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(summary, indent=2) + "\n")
    tmp.replace(path)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The tournament options (shared by ``python -m lab.tournaments.tournament`` and manage.py)."""
    parser.add_argument("--ns", required=True, help="bot A, North/South (e.g. RB+WRP)")
    parser.add_argument("--ew", required=True, help="bot B, East/West (e.g. MS+WRP)")
    parser.add_argument("--games", type=int, default=1000, help="games to play (default 1000)")
    parser.add_argument("--goal", type=int, default=200, help="winning goal (default 200)")
    parser.add_argument("--lose", type=int, default=-100, help="losing goal (default -100)")
    parser.add_argument("--seed", default="1", help="tournament seed (default 1)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--duplicate",
        action="store_true",
        help="play every deal sequence twice with the partnerships swapped",
    )
    parser.add_argument(
        "--output",
        help="write the summary JSON here; finished games go to <output>.games.jsonl, "
        "and a run started again with the same options resumes from it",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--report",
        action="store_true",
        help="play nothing: summarize the games the --output log holds so far",
    )


def _seed_value(text: str) -> int | str:
    return int(text) if text.lstrip("-").isdigit() else text


def config_from_options(opts: dict[str, Any]) -> TournamentConfig:
    return TournamentConfig(
        ns=opts["ns"],
        ew=opts["ew"],
        games=opts["games"],
        goal=opts["goal"],
        lose=opts["lose"],
        seed=_seed_value(str(opts["seed"])),
        duplicate=bool(opts["duplicate"]),
    )


def run_from_options(
    opts: dict[str, Any],
    progress: TextIO | None,
    remote: Callable[[list[TournamentConfig]], Any] | None = None,
) -> dict[str, Any]:
    config = config_from_options(opts)
    output = opts.get("output")
    if opts.get("report"):
        if not output:
            raise TournamentError("--report reads the log of --output: give --output")
        return report_log(config, log_path_for(output))  # printed, not written
    summary = run_tournament(
        config,
        workers=opts["workers"],
        log=log_path_for(output) if output else None,
        progress=None if opts.get("no_progress") else progress,
        remote=remote,
    )
    if output:
        write_summary(summary, output)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.tournaments.tournament", description=__doc__
    )
    add_arguments(parser)
    opts = vars(parser.parse_args(argv))
    try:
        summary = run_from_options(opts, sys.stderr)
    except TournamentError as e:
        parser.error(str(e))
    print(format_summary(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
