"""The bidding league: a round robin of duplicate matches between bidders, all with SRP play.

Every pair of bidders plays the same deal sequences (the league seed is every
pair's tournament seed, :class:`lab.tournaments.tournament.TournamentConfig` in duplicate
mode: game ``2d`` and ``2d + 1`` are deal sequence ``d`` with the seats
swapped), so the pairs are measured on the same cards. Each pair's finished
games go to its own results log (``<logs>/<A>__<B>.games.jsonl``, the
tournament's format), so a stopped league started again with the same
settings plays only what is missing. All games of all pairs share one worker
pool. The summary is computed from the logs in game order, so it does not
depend on the number of workers: the same seed gives the same league.

The summary (:func:`summarize_league`): the cross table of win rates with 95%
Wilson intervals; an Elo-style rating (a Bradley-Terry fit of all pairs' wins,
scipy, on the Elo scale, BIS at 0) with 95% intervals from the fit's observed
information; and per bidder, over all its games, its nil rate (nil bids per
seat-round), nil success, set rate (contracts set per partnership-round with a
contract) and bags per partnership-round.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from scipy.optimize import minimize

from bots.registry import BIDDERS, make_bot
from game.engine.rules import Rules
from game.engine.scoring import score_partnership
from lab.tournaments import runlog
from lab.tournaments.pool import exit_on_sigterm, worker_pool
from lab.tournaments.tournament import (
    EXTERNAL_PREFIX,
    Z_95,
    ProgressBar,
    TournamentConfig,
    TournamentError,
    log_header,
    play_game,
    read_log,
    wilson_interval,
)

# The league's bidders, when registered: every bidder the table form offers
# but Random (a test opponent) and SIM0 (BIS itself, k_s = 0): the paper's BIS
# and BIS*, BIS's ablations, the three baselines, the learned bidders and the
# SIM variants last (a game with SIM costs about 4 times a BIS game's CPU at 10
# deals a bid).
LEAGUE_BIDDERS = (
    "BIS", "BIS*", "BIS0", "BIS-SC1", "BIS-noEG", "BIS-noBig", "RB", "MS", "IO",
    "NNB", "NNB-sym", "SPB", "SPB-match", "SIM25", "SIM50", "SIM75", "SIM100", "SIM50-Q25",
)  # fmt: skip
PLAYER = "SRP"
ANCHOR = "BIS"  # rated 0
ELO = 400.0 / math.log(10.0)  # one logistic unit in Elo points
PSEUDO_WINS = 0.5  # each way per pair: keeps the fit finite if a pair is one-sided


def default_bidders() -> list[str]:
    return [b for b in LEAGUE_BIDDERS if b in BIDDERS]


@dataclass(frozen=True)
class LeagueConfig:
    bidders: tuple[str, ...]
    games: int  # per pair, even (duplicate pairs)
    seed: int | str = 1
    goal: int = 200
    lose: int = -100

    def pairs(self) -> list[tuple[str, str]]:
        return list(combinations(self.bidders, 2))

    def tournament(self, a: str, b: str) -> TournamentConfig:
        return TournamentConfig(
            ns=side_of(a), ew=side_of(b), games=self.games, goal=self.goal,
            lose=self.lose, seed=self.seed, duplicate=True,
        )  # fmt: skip

    def external(self) -> str | None:
        """The account name of the league's external bot (``ext:<name>``), if any."""
        names = [b for b in self.bidders if b.startswith(EXTERNAL_PREFIX)]
        return names[0].removeprefix(EXTERNAL_PREFIX) if names else None

    def validate(self) -> None:
        if len(self.bidders) < 2 or len(set(self.bidders)) != len(self.bidders):
            raise TournamentError("a league needs at least two different bidders")
        if sum(b.startswith(EXTERNAL_PREFIX) for b in self.bidders) > 1:
            # One program at a time on the served port, as in a tournament.
            raise TournamentError("one external bot (ext:<name>) per league")
        for a, b in self.pairs():
            self.tournament(a, b).validate()


def side_of(bidder: str) -> str:
    """A league entrant's side: a bidder with SRP's play, or an external bot
    (``ext:<name>``) whole, bidding and playing as its program does."""
    return bidder if bidder.startswith(EXTERNAL_PREFIX) else f"{bidder}+{PLAYER}"


def pair_log(logs: Path, a: str, b: str) -> Path:
    safe = {"*": "star"}
    name = "__".join("".join(safe.get(ch, ch) for ch in x) for x in (a, b))
    return logs / f"{name}.games.jsonl"


# ----- running -------------------------------------------------------------------

_worker: dict[str, Any] = {}


def _init_worker() -> None:
    _worker["bots"] = {}


def _play(task: tuple[TournamentConfig, int]) -> tuple[str, str, dict[str, Any]]:
    config, g = task
    bots = _worker.setdefault("bots", {})
    for name in (config.ns, config.ew):
        if name not in bots:
            bots[name] = make_bot(name)
    return config.ns, config.ew, play_game(config, g, bots[config.ns], bots[config.ew])


def _play_all(todo: list[tuple[TournamentConfig, int]], workers: int) -> Iterator[Any]:
    if workers <= 1:
        _init_worker()
        yield from map(_play, todo)
        return
    with worker_pool(workers, _init_worker) as pool:
        yield from pool.imap_unordered(_play, todo, chunksize=1)


def _remote_games(
    todo: list[tuple[TournamentConfig, int]], bar: ProgressBar,
    remote: Callable[[list[TournamentConfig]], Any], logs: Path,
) -> tuple[Any, Iterator[Any]]:  # fmt: skip
    """The games on a remote run (``lab.tournaments.celery_run``: Celery workers),
    a unit per deal sequence of a pair, in ``todo``'s order: (the run, its games)."""
    index: dict[tuple[str, str], int] = {}  # a pair's bots -> its index among the run's
    configs: list[TournamentConfig] = []
    units: dict[tuple[int, int], list[int]] = {}
    for t, g in todo:
        if (t.ns, t.ew) not in index:
            index[(t.ns, t.ew)] = len(configs)
            configs.append(t)
        units.setdefault((index[(t.ns, t.ew)], g // 2), []).append(g)
    run = remote(configs)
    run.timings = logs / "celery.timings.jsonl"
    plays = run.play([(i, games) for (i, _), games in units.items()], bar)
    return run, ((configs[i].ns, configs[i].ew, rec) for i, rec in plays)


def _external_games(
    todo: list[tuple[TournamentConfig, int]], bar: ProgressBar,
    external: Callable[[TournamentConfig], Any], stats: dict[str, int],
) -> Iterator[Any]:  # fmt: skip
    """The external bot's pairs, one after the other, each a run through the bot
    protocol (``lab.tournaments.external.ExternalRun``); its counts into ``stats``."""
    pairs: dict[tuple[str, str], tuple[TournamentConfig, list[int]]] = {}
    for t, g in todo:
        pairs.setdefault((t.ns, t.ew), (t, []))[1].append(g)
    for t, games in pairs.values():
        run = external(t)
        try:
            for _, rec in run.play([(0, games)], bar):
                yield t.ns, t.ew, rec
        finally:
            for k, v in run.stats.to_dict().items():
                stats[k] = stats.get(k, 0) + v
            run.close()


def run_league(
    config: LeagueConfig, logs: str | os.PathLike[str], workers: int = 1,
    progress: TextIO | None = None,
    remote: Callable[[list[TournamentConfig]], Any] | None = None,
    external: Callable[[TournamentConfig], Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Play every game not yet in the pairs' logs; return the league's summary.
    ``remote``: the run it makes for the pairs plays the games instead of
    ``workers`` processes (``lab.tournaments.celery_run``: Celery workers).
    ``external``: what plays the pairs of the league's external bot through the
    bot protocol (``lab.tournaments.external.external_runs``), after the rest."""
    config.validate()
    if config.external() is not None and external is None:
        raise TournamentError("an external bot plays through the bot protocol: run "
                              "manage.py league, which serves it (--bot-port)")  # fmt: skip
    if workers < 1:
        raise TournamentError("--workers must be at least 1")
    logs = Path(logs)
    logs.mkdir(parents=True, exist_ok=True)
    done: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    todo: list[tuple[TournamentConfig, int]] = []
    configs = {}
    for a, b in config.pairs():
        t = config.tournament(a, b)
        path = pair_log(logs, a, b)
        got = read_log(path, t)
        runlog.rewrite(path, log_header(t), sorted(got.values(), key=lambda r: r["game"]))
        done[(t.ns, t.ew)] = got
        configs[(t.ns, t.ew)] = (t, path)
        todo += [(t, g) for g in range(config.games) if g not in got]
    # Pair by pair, the pairs of the first bidders first: a league stopped early
    # has whole pairs, the costly bidders (listed last) still to come.
    rank = {side_of(b): i for i, b in enumerate(config.bidders)}
    todo.sort(key=lambda t: (max(rank[t[0].ns], rank[t[0].ew]), rank[t[0].ns], rank[t[0].ew], t[1]))
    bar = ProgressBar(len(config.pairs()) * config.games, sum(map(len, done.values())), progress)
    t0 = time.perf_counter()
    outside = [(t, g) for t, g in todo if EXTERNAL_PREFIX in t.ns + t.ew]
    todo = [(t, g) for t, g in todo if EXTERNAL_PREFIX not in t.ns + t.ew]
    run, games = (
        _remote_games(todo, bar, remote, logs) if remote else (None, _play_all(todo, workers))
    )
    external_stats: dict[str, int] = {}
    if outside:
        assert external is not None
        games = _chain(games, _external_games(outside, bar, external, external_stats))
    try:
        with exit_on_sigterm() if remote else nullcontext():
            for ns, ew, rec in games:
                t, path = configs[(ns, ew)]
                done[(ns, ew)][rec["game"]] = rec
                runlog.append(path, log_header(t), rec)
                bar.update()
    finally:
        games.close()
        if progress is not None:
            bar.close()
    summary = summarize_league(config, {k: list(v.values()) for k, v in done.items()})
    summary["run"] = {"workers": "celery" if remote else workers,
                      "games_played_now": len(todo) + len(outside),
                      "elapsed_seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip
    if run is not None:
        summary["run"].update(run.stats.to_dict())
    summary["run"].update(external_stats)
    return summary


def _chain(*parts: Iterator[Any]) -> Iterator[Any]:
    """The parts one after the other; closing it closes every part (a stopped
    league stops its worker pool and its external run alike)."""
    try:
        for part in parts:
            yield from part
    finally:
        for part in parts:
            getattr(part, "close", lambda: None)()


def read_league(config: LeagueConfig, logs: str | os.PathLike[str]) -> dict[str, Any]:
    """The summary of the games in the logs, playing none."""
    config.validate()
    records = {}
    for a, b in config.pairs():
        t = config.tournament(a, b)
        done = read_log(pair_log(Path(logs), a, b), t)
        # Whole duplicate pairs only: a half-played deal sequence would skew the pair.
        records[(t.ns, t.ew)] = [rec for g, rec in done.items() if g ^ 1 in done]
    return summarize_league(config, records)


# ----- statistics ----------------------------------------------------------------


def _bidder(bot: str) -> str:
    return bot if bot.startswith(EXTERNAL_PREFIX) else bot.rpartition("+")[0]


def bidder_stats(rules: Rules, records: Sequence[dict[str, Any]]) -> list[dict[str, float]]:
    """Counts per side (0: bot A, 1: bot B) over a pair's game records."""
    out = [dict.fromkeys(("seat_rounds", "nil_bids", "nil_made", "contracts", "sets",
                          "rounds", "bags", "points"), 0) for _ in (0, 1)]  # fmt: skip
    for rec in records:
        for rd in rec["rounds"]:
            bids, blind, tricks = rd["bids"], rd["blind"], rd["tricks"]
            for p in (0, 1):
                side = out[p ^ rec["swapped"]]
                seats = (p, p + 2)
                score = score_partnership(
                    rules, (bids[p], bids[p + 2]), (blind[p], blind[p + 2]),
                    (tricks[p], tricks[p + 2]), 0, 0,
                )  # fmt: skip
                side["rounds"] += 1
                side["points"] += rd["points"][p]
                side["bags"] += score.bags
                if score.contract > 0:
                    side["contracts"] += 1
                    side["sets"] += not score.made
                for s in seats:
                    side["seat_rounds"] += 1
                    if bids[s] == 0 and rules.nil and not blind[s]:
                        side["nil_bids"] += 1
                        side["nil_made"] += tricks[s] == 0
    return out


def fit_ratings(
    names: Sequence[str], wins: dict[tuple[str, str], tuple[int, int]]
) -> dict[str, tuple[float, float]]:
    """Bradley-Terry ratings on the Elo scale with their 95% half-widths, the
    anchor (BIS, else the first) at 0. ``wins[(a, b)]``: (a's wins, b's wins)."""
    anchor = ANCHOR if ANCHOR in names else names[0]
    free = [n for n in names if n != anchor]
    index = {n: i for i, n in enumerate(free)}
    games = [(index.get(a), index.get(b), wa + PSEUDO_WINS, wb + PSEUDO_WINS)
             for (a, b), (wa, wb) in wins.items()]  # fmt: skip

    def strength(x: np.ndarray, i: int | None) -> float:
        return 0.0 if i is None else float(x[i])

    def nll(x: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = 0.0, np.zeros(len(free))
        for i, j, wi, wj in games:
            d = strength(x, i) - strength(x, j)
            p = 1.0 / (1.0 + math.exp(-d))
            value -= wi * math.log(p) + wj * math.log(1.0 - p)
            g = (wi + wj) * p - wi  # d(nll)/dd
            if i is not None:
                grad[i] += g
            if j is not None:
                grad[j] -= g
        return value, grad

    fit = minimize(nll, np.zeros(len(free)), jac=True, method="BFGS")
    x = fit.x
    info = np.zeros((len(free), len(free)))
    for i, j, wi, wj in games:
        d = strength(x, i) - strength(x, j)
        p = 1.0 / (1.0 + math.exp(-d))
        h = (wi + wj) * p * (1.0 - p)
        for u, v, sign in ((i, i, 1), (j, j, 1), (i, j, -1), (j, i, -1)):
            if u is not None and v is not None:
                info[u, v] += sign * h
    cov = np.linalg.inv(info) if free else info
    out = {anchor: (0.0, 0.0)}
    for n, i in index.items():
        out[n] = (ELO * float(x[i]), Z_95 * ELO * math.sqrt(max(cov[i, i], 0.0)))
    return out


def summarize_league(
    config: LeagueConfig, records: dict[tuple[str, str], list[dict[str, Any]]]
) -> dict[str, Any]:
    """The league's tables from each pair's game records (keys: the two bots)."""
    rules = config.tournament(*config.bidders[:2]).rules()
    names = list(config.bidders)
    cross: dict[str, dict[str, Any]] = {n: {} for n in names}
    wins: dict[tuple[str, str], tuple[int, int]] = {}
    totals = {n: dict.fromkeys(("games", "wins"), 0) for n in names}
    counts: dict[str, dict[str, float]] = {n: {} for n in names}
    for (ns, ew), recs in sorted(records.items()):
        recs = sorted(recs, key=lambda r: r["game"])
        a, b = _bidder(ns), _bidder(ew)
        wa = sum(1 for r in recs if r["winner"] == 0)
        wb = sum(1 for r in recs if r["winner"] == 1)
        wins[(a, b)] = (wa, wb)
        for me, them, w in ((a, b, wa), (b, a, wb)):
            lo, hi = wilson_interval(w, len(recs))
            cross[me][them] = {"games": len(recs), "wins": w,
                               "win_rate": w / len(recs) if recs else None,
                               "ci95": [lo, hi]}  # fmt: skip
            totals[me]["games"] += len(recs)
            totals[me]["wins"] += w
        for n, side in zip((a, b), bidder_stats(rules, recs), strict=True):
            for k, v in side.items():
                counts[n][k] = counts[n].get(k, 0) + v
    ratings = fit_ratings(names, wins)

    def ratio(x: float, y: float) -> float | None:
        return x / y if y else None

    bidders = []
    for n in names:
        c = counts[n]
        bidders.append({
            "bidder": n, "games": totals[n]["games"], "wins": totals[n]["wins"],
            "win_rate": ratio(totals[n]["wins"], totals[n]["games"]),
            "rating": ratings[n][0], "rating_ci95": ratings[n][1],
            "nil_rate": ratio(c.get("nil_bids", 0), c.get("seat_rounds", 0)),
            "nil_success": ratio(c.get("nil_made", 0), c.get("nil_bids", 0)),
            "set_rate": ratio(c.get("sets", 0), c.get("contracts", 0)),
            "bags_per_round": ratio(c.get("bags", 0), c.get("rounds", 0)),
            "points_per_round": ratio(c.get("points", 0), c.get("rounds", 0)),
        })  # fmt: skip
    bidders.sort(key=lambda d: -d["rating"])
    return {
        "config": {"bidders": names, "games_per_pair": config.games, "seed": config.seed,
                   "goal": config.goal, "lose": config.lose, "player": PLAYER},
        "games": sum(len(v) for v in records.values()),
        "cross": cross,
        "bidders": bidders,
    }  # fmt: skip


# ----- the page ------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def format_markdown(summary: dict[str, Any], command: str, commit: str = "") -> str:
    """docs/league.md: the ratings, the per-bidder figures and the cross table."""
    cfg = summary["config"]
    order = [b["bidder"] for b in summary["bidders"]]
    lines = [
        "# The bidding league",
        "",
        f"Every bidder against every other with {cfg['player']} play at all four seats: "
        f"{cfg['games_per_pair']} duplicate games per pair (each deal sequence twice, "
        f"seats swapped), the same deal sequences for every pair (seed {cfg['seed']}), "
        f"goal {cfg['goal']} / {cfg['lose']}; {summary['games']} games in all. "
        "Made by (`lab/tournaments/league.py`; the same command and seed give the same tables):",
        "",
        "```",
        command,
        "```",
        "",
    ]
    if commit:
        lines += [f"Code: commit `{commit}`.", ""]
    lines += [
        "## Ratings",
        "",
        "Elo-style: a Bradley-Terry fit of every pair's wins (scipy; half a pseudo-win "
        "each way per pair), 400 points = 10:1 odds, "
        f"{ANCHOR} at 0; ± the 95% interval from the fit's information. The duplicate "
        "halves of a deal sequence are not independent, so the intervals are a little "
        "narrow. Nil rate: nil bids per seat-round (blind nil apart); set rate: "
        "contracts set per partnership-round with a contract; bags per "
        "partnership-round.",
        "",
        "| bidder | rating | win rate | nil rate | nil made | set rate | bags/round "
        "| points/round |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for b in summary["bidders"]:
        ppr = b["points_per_round"]
        lines.append(
            f"| {b['bidder']} | {b['rating'] + 0.0:+.0f} ± {b['rating_ci95']:.0f} "
            f"| {_pct(b['win_rate'])} | {_pct(b['nil_rate'])} | {_pct(b['nil_success'])} "
            f"| {_pct(b['set_rate'])} | "
            + ("-" if b["bags_per_round"] is None else f"{b['bags_per_round']:.2f}")
            + " | "
            + ("-" if ppr is None else f"{ppr:.1f}")
            + " |"
        )
    lines += [
        "",
        "## Cross table",
        "",
        "The row bidder's win rate against the column bidder, with its 95% Wilson interval.",
        "",
        "| | " + " | ".join(order) + " |",
        "|---|" + "---:|" * len(order),
    ]
    for me in order:
        cells = []
        for them in order:
            c = summary["cross"][me].get(them)
            if c is None or c["win_rate"] is None:
                cells.append("")
            else:
                lo, hi = c["ci95"]
                cells.append(f"{_pct(c['win_rate'])} ({100 * lo:.0f}-{100 * hi:.0f})")
        lines.append(f"| {me} | " + " | ".join(cells) + " |")
    short = sorted(
        f"{me} - {them}: {c['games']}"
        for me in order
        for them, c in summary["cross"][me].items()
        if me < them and c["games"] < cfg["games_per_pair"]
    )
    if short:
        lines += [
            "",
            f"Pairs with fewer than {cfg['games_per_pair']} games (the run was "
            "stopped; whole duplicate pairs of games only): " + "; ".join(short) + ".",
        ]
    return "\n".join(lines) + "\n"


def write_json(summary: dict[str, Any], path: str | os.PathLike[str]) -> None:
    p = Path(path)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    tmp.replace(p)
