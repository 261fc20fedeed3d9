"""``manage.py bench_bots``: how long the bots take to decide.

    python manage.py bench_bots [--bids 2000] [--plays 2000] [--seed 1]
        [--tournament-games 200] [--workers 2] [--json FILE] [--learned]

Three figures, each with its seed and sample size:

* **BIS bids**: ``BIS`` (with the shipped success curves) bidding from
  ``--bids`` seeded views: a random deal and dealer, random match scores
  (-90..190, multiples of 10, goal 200 / -100) and bags, and 0 to 3 bids
  already made by BIS players before it (so every bidding position is
  sampled, blind nil offers included when the scores allow it).
* **SRP and WRP plays**: ``--plays`` seeded mid-round views: a random deal,
  scores and dealer, the four bids made by RB, then a random number (0..51,
  every play of a round equally likely) of cards played by SRP for every seat;
  SRP and WRP each choose a card for the same views. Views where only one card
  is legal are part of the sample (as in a real round) and counted apart.
* **Learned bots** (``--learned``, issue 22): NNB, NNB-sym and SPB bid from
  the same bid views, QP (and QP-branch, its network's value alone) plays from
  the same play views (targets: 2 ms median a bid, 1 ms a card).
* **Tournament**: a duplicate ``BIS+SRP`` vs ``RB+SRP`` tournament of
  ``--tournament-games`` games (goal 200 / -100) with ``--workers`` worker
  processes, and the time a 10,000-game tournament would take at that speed
  (0 games skips it).

Only the bot's decision is timed (``bidder.bid`` / ``player.play`` on a
ready view, after a warm-up that loads the tables and curves); building the
view is not. The figures are medians and 99th percentiles of single calls
(``time.perf_counter_ns``), printed with the Python version and the machine.
The targets (issue "bots"): a BIS bid at most 5 ms median and 20 ms p99, an
SRP play at most 1 ms median, a 10,000-game tournament within 15 minutes.
"""

from __future__ import annotations

import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from bots.base import Bot
from bots.baselines import RBBidder
from bots.registry import make_bot
from bots.srp import SRP
from bots.wrp import WRP
from game.engine.actions import Play, SeeCards
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import SeatView, view_for
from lab.tournaments.tournament import TournamentConfig, run_tournament

RULES = Rules(winning_goal=200, losing_goal=-100)
TARGETS = {"BIS bid": (5.0, 20.0), "SRP play": (1.0, None), "WRP play": (None, None)}
# The learned bots (issue 22, --learned): at most 2 ms median a decision.
LEARNED_BIDDERS = ("NNB", "NNB-sym", "SPB", "SPB-match")
# QP (each card the mean over the suits' six relabellings) and its network alone.
LEARNED_PLAYERS = ("QP", "QP-branch")
TARGETS.update({f"{b} bid": (2.0, None) for b in LEARNED_BIDDERS})
TARGETS.update({f"{p} play": (1.0, None) for p in LEARNED_PLAYERS})  # issue 46: 1 ms
TOURNAMENT_TARGET_S = 15 * 60
FULL_TOURNAMENT = 10_000


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) with linear interpolation between order statistics."""
    xs = sorted(values)
    if not xs:
        raise ValueError("no values")
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _random_round(rng: random.Random, seed: int, kind: str, i: int) -> RoundState:
    scores = (10 * rng.randint(-9, 19), 10 * rng.randint(-9, 19))
    bags = (rng.randrange(RULES.bag_limit), rng.randrange(RULES.bag_limit))
    return RoundState(
        RULES,
        dealer=rng.randrange(4),
        hands=deal_hands(f"bench/{seed}/{kind}/{i}"),
        scores_before=scores,
        bags_before=bags,
        round_number=1 + rng.randrange(8),
    )


def _act(r: RoundState, bot: Bot, rng: random.Random) -> None:
    r.apply(bot.act(view_for(r, r.to_act), rng))


def _seen_view(r: RoundState) -> SeatView:
    """The view of the seat to act, after it has looked at its cards."""
    view = view_for(r, r.to_act)
    if view.hand is None:
        r.apply(SeeCards(r.to_act))
        view = view_for(r, r.to_act)
    return view


def bid_views(n: int, seed: int) -> list[SeatView]:
    """``n`` bidding views for a BIS seat: 0..3 earlier bids by BIS players."""
    rng = random.Random(f"bench-bids/{seed}")
    bis = make_bot("BIS+SRP")
    views = []
    for i in range(n):
        r = _random_round(rng, seed, "bid", i)
        earlier = rng.randrange(4)
        while len(r.bid_order) < earlier:
            _act(r, bis, rng)
        views.append(_seen_view(r))
    return views


def play_views(n: int, seed: int) -> list[SeatView]:
    """``n`` playing views: RB bids, then 0..51 cards played by SRP."""
    rng = random.Random(f"bench-plays/{seed}")
    rb_srp = Bot(RBBidder(), SRP())
    views = []
    for i in range(n):
        r = _random_round(rng, seed, "play", i)
        cards = rng.randrange(52)
        while r.phase is not Phase.PLAYING:
            _act(r, rb_srp, rng)
        for _ in range(cards):
            _act(r, rb_srp, rng)
        views.append(view_for(r, r.to_act))
    return views


def time_calls(fn: Callable[[SeatView, random.Random], Any], views: list[SeatView],
               seed: int) -> list[float]:  # fmt: skip
    """Milliseconds of one call of ``fn`` per view (after one untimed warm-up call)."""
    rng = random.Random(f"bench-calls/{seed}")
    fn(views[0], rng)
    out = []
    clock = time.perf_counter_ns
    for view in views:
        t0 = clock()
        fn(view, rng)
        out.append((clock() - t0) / 1e6)
    return out


def stats(name: str, ms: list[float], seed: int, extra: dict[str, Any] | None = None) -> dict:
    median_target, p99_target = TARGETS.get(name, (None, None))
    fig = {
        "name": name,
        "seed": seed,
        "sample": len(ms),
        "median_ms": statistics.median(ms),
        "p99_ms": percentile(ms, 0.99),
        "mean_ms": statistics.fmean(ms),
        "max_ms": max(ms),
        "target_median_ms": median_target,
        "target_p99_ms": p99_target,
    }
    ok = True
    if median_target is not None:
        ok = ok and fig["median_ms"] <= median_target
    if p99_target is not None:
        ok = ok and fig["p99_ms"] <= p99_target
    fig["meets_target"] = ok if (median_target or p99_target) else None
    fig.update(extra or {})
    return fig


def _line(fig: dict) -> str:
    target = []
    if fig["target_median_ms"] is not None:
        target.append(f"median <= {fig['target_median_ms']:g} ms")
    if fig["target_p99_ms"] is not None:
        target.append(f"p99 <= {fig['target_p99_ms']:g} ms")
    verdict = ""
    if target:
        verdict = f"  target {', '.join(target)}: {'met' if fig['meets_target'] else 'NOT met'}"
    return (
        f"{fig['name']:<9} seed {fig['seed']}, n={fig['sample']}: "
        f"median {fig['median_ms']:.3f} ms, p99 {fig['p99_ms']:.3f} ms, "
        f"mean {fig['mean_ms']:.3f} ms, max {fig['max_ms']:.3f} ms{verdict}"
    )


class Command(BaseCommand):
    help = "Time BIS bids, SRP and WRP plays (median, p99) and a short tournament."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--bids", type=int, default=2000, help="BIS bid views (2000)")
        parser.add_argument("--plays", type=int, default=2000, help="play views (2000)")
        parser.add_argument("--seed", type=int, default=1, help="seed of the views (1)")
        parser.add_argument(
            "--tournament-games", type=int, default=200,
            help="games of the timed BIS+SRP vs RB+SRP duplicate tournament (200; 0: skip)",
        )  # fmt: skip
        parser.add_argument("--workers", type=int, default=2, help="tournament workers (2)")
        parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
        parser.add_argument(
            "--learned", action="store_true",
            help="also time the learned bots (NNB, NNB-sym, SPB, SPB-match bids; QP plays)",
        )  # fmt: skip

    def handle(self, *args: Any, **opts: Any) -> None:
        n_bids, n_plays, seed = opts["bids"], opts["plays"], opts["seed"]
        games, workers = opts["tournament_games"], opts["workers"]
        if n_bids < 1 or n_plays < 1:
            raise CommandError("--bids and --plays must be at least 1")
        if games < 0 or (games and games % 2):
            raise CommandError("--tournament-games must be an even number (duplicate), or 0")
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        write = self.stdout.write
        header = {
            "python": sys.version.split()[0],
            "implementation": platform.python_implementation(),
            "machine": platform.machine(),
            "system": platform.platform(),
            "cpus": os.cpu_count(),
        }
        write(
            f"bench_bots: Python {header['python']} ({header['implementation']}) on "
            f"{header['system']}, {header['cpus']} CPUs"
        )
        figures: dict[str, Any] = {"environment": header, "timings": []}

        bis = make_bot("BIS+SRP").bidder
        views = bid_views(n_bids, seed)
        positions = [len(v.bid_order) for v in views]
        fig = stats("BIS bid", time_calls(bis.bid, views, seed), seed,
                    {"views_by_earlier_bids": [positions.count(k) for k in range(4)]})  # fmt: skip
        figures["timings"].append(fig)
        write(_line(fig))
        write(f"          views by earlier bids 0/1/2/3: {fig['views_by_earlier_bids']}")
        if opts["learned"]:
            for name in LEARNED_BIDDERS:
                bidder = make_bot(f"{name}+SRP").bidder
                fig = stats(f"{name} bid", time_calls(bidder.bid, views, seed), seed)
                figures["timings"].append(fig)
                write(_line(fig))

        views = play_views(n_plays, seed)
        forced = sum(1 for v in views if sum(isinstance(a, Play) for a in v.legal_actions) == 1)
        for name, player in (("SRP play", SRP()), ("WRP play", WRP())):
            fig = stats(name, time_calls(player.play, views, seed), seed,
                        {"views_with_one_legal_card": forced})  # fmt: skip
            figures["timings"].append(fig)
            write(_line(fig))
        if opts["learned"]:
            for name in LEARNED_PLAYERS:
                player = make_bot(f"BIS+{name}").player
                fig = stats(f"{name} play", time_calls(player.play, views, seed), seed,
                            {"views_with_one_legal_card": forced})  # fmt: skip
                figures["timings"].append(fig)
                write(_line(fig))
        write(f"          play views with a single legal card: {forced} of {n_plays}")

        if games:
            config = TournamentConfig(
                ns="BIS+SRP", ew="RB+SRP", games=games, goal=200, lose=-100, seed=seed,
                duplicate=True,
            )  # fmt: skip
            t0 = time.perf_counter()
            summary = run_tournament(config, workers=workers)
            elapsed = time.perf_counter() - t0
            projected = elapsed / games * FULL_TOURNAMENT
            tour = {
                "bots": "BIS+SRP vs RB+SRP",
                "games": games,
                "seed": seed,
                "workers": workers,
                "rounds": summary["rounds"],
                "elapsed_s": elapsed,
                "ms_per_game": 1000 * elapsed / games,
                "projected_10000_games_s": projected,
                "target_s": TOURNAMENT_TARGET_S,
                "meets_target": projected <= TOURNAMENT_TARGET_S,
            }
            figures["tournament"] = tour
            write(
                f"tournament BIS+SRP vs RB+SRP, duplicate, seed {seed}, {games} games "
                f"({summary['rounds']} rounds), {workers} worker(s): {elapsed:.2f} s, "
                f"{tour['ms_per_game']:.1f} ms per game; 10,000 games ~ {projected / 60:.1f} min"
                f"  target <= 15 min: {'met' if tour['meets_target'] else 'NOT met'}"
            )
        if opts["json"]:
            with open(opts["json"], "w") as f:
                json.dump(figures, f, indent=2)
            write(f"figures written to {opts['json']}")
