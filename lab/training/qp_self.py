"""QP by self-play alone (issue 46), the Four Hundred paper's way: compiled (numba).

The paper's card-play network learns from its own games: the network plays
all four seats, every state it enters is labelled from the round's outcome,
and the network is fitted to those labels in batches, again and again. No
rule of play is in it and no other player's games: the shipped ``QP`` learned
from SRP's roll-outs (``lab.training.qp_data``), this one from nothing but
the rules' score, starting from random weights.

A round is dealt and bid by BIS in Python (the bidder is not what is learned),
then played in one compiled call with the network at every seat: at each card
the after-state of every legal card is valued and the best is played, or a
random legal card with probability ``explore``. Each after-state a seat enters
is one training row. Its label is the λ-return of the seat's next after-states
(the paper's label is the round's reward alone: λ = 1): going back from the
seat's 13th card, whose label is the round's Spades score (the partnership's
points minus the opponents', nil and bags included, / 100),

    G_t = (1 - λ) · max over the legal cards at t + 1 of their value + λ · G_{t+1},

so a λ under 1 lets the values of later positions, learned first (the last
card's label is exact), carry back with less of the deal's luck in them.

The gauge (:func:`gauge`) plays the network against SRP on held-out deals,
each deal twice with the partnerships swapped (duplicate), compiled: the mean
points a round QP's side takes more than SRP's.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Protocol, TextIO

import numpy as np
from numba import njit

from bots.bits import low_bit
from bots.learned.features import PLAY_FEATURES, PLAY_SCALE, SPADES_FEATURES
from bots.learned.mlp import MLP
from bots.srp_compiled import BIDS, DONE, LEADER, POS, WON, legal_mask, play_card, srp_play
from game.engine import kernel_cache  # noqa: F401  (before the kernels: their cache folder)
from game.engine.fast_compiled import _uniform, rules_array, score_points
from lab.training.qp_compiled import after_codes, candidates, card_values

ROWS_PER_ROUND = 52
BRANCH_ROWS = 4 * sum(range(2, 14))  # the most a round can branch


@njit(cache=True)
def _decide(st, seat, order_card, order_seat, n, bags, net, explore, rng, row):
    """The card of the seat to act: every legal card's after-state valued, the best
    played (the lowest on a tie), or a random one with probability ``explore``.
    The chosen after-state's codes go into ``row``. Returns the card and the best
    value."""
    scale, ws, bs, scratch, codes, h_a, h_b, perms = net
    cards = np.empty(13, dtype=np.int64)
    k = candidates(st, seat, order_card, order_seat, n, bags, scratch, codes, cards)
    v = card_values(codes, k, perms, scale, ws, bs, h_a, h_b)
    best = 0
    for r in range(1, k):
        if v[r] > v[best]:
            best = r
    pick = best
    if k > 1 and explore > 0 and _uniform(rng) < explore:
        pick = min(int(_uniform(rng) * k), k - 1)
    row[:] = codes[pick]
    return cards[pick], v[best]


@njit(cache=True)
def branch_card(st, seat, c, order_card, order_seat, n, bags, tmp, tmp_card, tmp_seat, row):
    """A branch of the decision in ``st`` (``n`` cards played): ``seat``'s card ``c``
    played on a copy, into ``tmp`` and the order arrays ``tmp_card``, ``tmp_seat``,
    and the after-state's codes into ``row``."""
    tmp[:] = st
    play_card(tmp, c)
    tmp_card[:n] = order_card[:n]
    tmp_seat[:n] = order_seat[:n]
    tmp_card[n] = c
    tmp_seat[n] = seat
    after_codes(tmp, seat, tmp_card, tmp_seat, n + 1, bags, row)


@njit(cache=True)
def _lookahead(st, seat, order_card, order_seat, n, bags, net, bids, blind, rules, out, row):
    """The label of ``seat``'s after-state in ``st`` (``n`` cards played): the others
    answer greedily until the seat's next card, whose best value it is, or the
    round's end, whose score it is."""
    rng = np.zeros(1, dtype=np.uint64)  # unused: no exploration here
    while st[DONE] < 13:
        now = (st[LEADER] + st[POS]) & 3
        card, v = _decide(st, now, order_card, order_seat, n, bags, net, 0.0, rng, row)
        if now == seat:
            return v
        order_card[n] = card
        order_seat[n] = now
        n += 1
        play_card(st, card)
    score_points(bids, blind, st[WON : WON + 4], rules, bags, out)
    p = seat & 1
    return (out[p] - out[1 - p]) / 100.0


@njit(cache=True)
def selfplay_round(
    st, blind, bags, rules, net, explore, lam, rng, x, y, branch, bx, by, bg, d0
):  # fmt: skip
    """Play the round in ``st`` (at its first card) with the network at every seat;
    the 52 after-states entered into ``x`` (codes) and their λ-returns into ``y``.

    With probability ``branch`` a decision with a choice is also branched: every
    legal card is played on the true deal and labelled by :func:`_lookahead`
    (rows into ``bx``, ``by``, the decision's number from ``d0`` into ``bg``), so
    the cards of one decision share their deal, as SPB's bids do. Returns the
    branch rows and decisions written."""
    bids = st[BIDS : BIDS + 4].copy()
    out = np.empty(4, dtype=np.int64)
    order_card = np.empty(52, dtype=np.int64)
    order_seat = np.empty(52, dtype=np.int64)
    best = np.empty(52, dtype=np.float64)
    rows_of = np.empty((4, 13), dtype=np.int64)
    count = np.zeros(4, dtype=np.int64)
    tmp = np.empty_like(st)
    tmp_card = np.empty(52, dtype=np.int64)
    tmp_seat = np.empty(52, dtype=np.int64)
    row = np.empty(x.shape[1], dtype=np.uint8)
    n = 0
    rb = 0
    d = d0
    while st[DONE] < 13:
        seat = (st[LEADER] + st[POS]) & 3
        card, v = _decide(st, seat, order_card, order_seat, n, bags, net, explore, rng, x[n])
        legal = legal_mask(st)
        if branch > 0 and legal & (legal - 1) and _uniform(rng) < branch:
            m = legal
            while m:
                c = low_bit(m)
                m &= m - 1
                branch_card(st, seat, c, order_card, order_seat, n, bags, tmp, tmp_card,
                            tmp_seat, bx[rb])  # fmt: skip
                by[rb] = _lookahead(
                    tmp, seat, tmp_card, tmp_seat, n + 1, bags, net, bids, blind, rules, out, row
                )
                bg[rb] = d
                rb += 1
            d += 1
        best[n] = v
        rows_of[seat, count[seat]] = n
        count[seat] += 1
        order_card[n] = card
        order_seat[n] = seat
        n += 1
        play_card(st, card)
    score_points(bids, blind, st[WON : WON + 4], rules, bags, out)
    for s in range(4):
        p = s & 1
        g = (out[p] - out[1 - p]) / 100.0
        for t in range(count[s] - 1, -1, -1):
            r = rows_of[s, t]
            y[r] = g
            # the label of the seat's previous after-state
            g = (1.0 - lam) * best[r] + lam * g
    return rb, d - d0


@njit(cache=True)
def duel_round(st, blind, bags, rules, net, qp_side, sure_t):
    """The round in ``st`` played by the network at the seats of partnership
    ``qp_side`` (0: seats 0 and 2) and SRP at the others, greedily; the points
    QP's side takes more than SRP's."""
    bids = st[BIDS : BIDS + 4].copy()
    out = np.empty(4, dtype=np.int64)
    order_card = np.empty(52, dtype=np.int64)
    order_seat = np.empty(52, dtype=np.int64)
    row = np.empty(PLAY_FEATURES, dtype=np.uint8)
    rng = np.zeros(1, dtype=np.uint64)
    n = 0
    while st[DONE] < 13:
        seat = (st[LEADER] + st[POS]) & 3
        if (seat & 1) == qp_side:
            card, _ = _decide(st, seat, order_card, order_seat, n, bags, net, 0.0, rng, row)
        else:
            card = srp_play(st, sure_t)
        order_card[n] = card
        order_seat[n] = seat
        n += 1
        play_card(st, card)
    score_points(bids, blind, st[WON : WON + 4], rules, bags, out)
    return out[qp_side] - out[1 - qp_side]


def match_situation(rng: random.Random) -> tuple[tuple[int, int], int]:
    """Scores before a round and its number, as matches to 200 / -100 meet them: a
    third of the rounds a match's first (0 : 0), the others each side's score
    drawn from -99..199 (so that end-game bids and, 100 behind, blind nils come)."""
    if rng.random() < 1 / 3:
        return (0, 0), 1
    return (rng.randrange(-99, 200), rng.randrange(-99, 200)), rng.randrange(2, 8)


def bid_rounds(
    name: str, start: int, count: int, bar: Any = None, match: bool = False
) -> dict[str, np.ndarray]:
    """Rounds ``"<name>/<j>"``, ``start <= j < start + count``, dealt (random dealer,
    each side's bags before drawn from 0..9) and bid by BIS: the compiled
    state arrays at the first card, the blind flags and the bags. With ``match``,
    the scores before the round are drawn too (:func:`match_situation`)."""
    from bots.base import Bot
    from bots.srp import SRP
    from bots.srp_compiled import state_of
    from bots.success_curves import make_bis
    from game.engine.deal import deal_hands
    from game.engine.state import Phase, RoundState
    from game.engine.view import view_for

    bidder = Bot(make_bis("BIS"), SRP())
    states, blinds, bags = [], [], []
    for j in range(start, start + count):
        deal = f"{name}/{j}"
        rng = random.Random(deal)
        before = (rng.randrange(RULES.bag_limit), rng.randrange(RULES.bag_limit))
        dealer = rng.randrange(4)
        scores, number = match_situation(rng) if match else ((0, 0), 1)
        r = RoundState(RULES, dealer, deal_hands(deal), scores, before, number)
        while r.phase is not Phase.PLAYING:
            r.apply(bidder.act(view_for(r, r.to_act), rng))
        states.append(state_of(r))
        blinds.append(np.array(r.blind, dtype=np.int64))
        bags.append(np.array(before, dtype=np.int64))
        if bar is not None:
            bar.update(1)
    return {"states": np.array(states), "blind": np.array(blinds), "bags": np.array(bags)}


def _rules() -> Any:
    from game.engine.rules import Rules

    return Rules(winning_goal=200, losing_goal=-100)


RULES = _rules()
RULES_ARRAY = rules_array(RULES)


def selfplay(
    rounds: dict[str, np.ndarray],
    net: tuple,
    explore: float,
    lam: float,
    seed: list[int],
    branch: float = 0.0,
) -> dict[str, np.ndarray]:
    """The bid ``rounds`` played by the network (``net_arrays``) at every seat: the
    after-states' codes ``x`` and labels ``y``; with ``branch``, the branched
    decisions' rows ``bx``, ``by`` and decision numbers ``bg``."""
    n = len(rounds["states"])
    x = np.zeros((n * ROWS_PER_ROUND, PLAY_FEATURES), dtype=np.uint8)
    y = np.zeros(n * ROWS_PER_ROUND, dtype=np.float32)
    # a seat's t-th card has at most 13 - t legal cards: 4 * (13 + ... + 2) rows a round
    bx = np.zeros((BRANCH_ROWS, PLAY_FEATURES), dtype=np.uint8)
    by = np.zeros(BRANCH_ROWS, dtype=np.float32)
    bg = np.zeros(BRANCH_ROWS, dtype=np.int64)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    rng = np.array([np.random.default_rng(seed).integers(2**63)], dtype=np.uint64)
    d = 0
    for i in range(n):
        a = i * ROWS_PER_ROUND
        r, k = selfplay_round(
            rounds["states"][i].copy(), rounds["blind"][i], rounds["bags"][i], RULES_ARRAY,
            net, explore, lam, rng, x[a : a + ROWS_PER_ROUND], y[a : a + ROWS_PER_ROUND],
            branch, bx, by, bg, d,
        )  # fmt: skip
        if r:
            parts.append((bx[:r].copy(), by[:r].copy(), bg[:r].copy()))
        d += k
    if parts:
        bxs, bys, bgs = (np.concatenate(c) for c in zip(*parts, strict=True))
    else:
        bxs, bys, bgs = bx[:0], by[:0], bg[:0]
    return {"x": x, "y": y, "bx": bxs, "by": bys, "bg": bgs}


def gauge_gaps(rounds: dict[str, np.ndarray], net: tuple) -> np.ndarray:
    """The network against SRP on the bid ``rounds``, each played twice with the
    partnerships swapped: the points QP's side takes more, a round, deal by deal
    (so that two networks compare on the same deals)."""
    from bots.srp_compiled import sure_table

    sure_t = sure_table()
    n = len(rounds["states"])
    gaps = np.empty(n)
    for i in range(n):
        total = 0
        for side in (0, 1):
            total += duel_round(
                rounds["states"][i].copy(), rounds["blind"][i], rounds["bags"][i],
                RULES_ARRAY, net, side, sure_t,
            )  # fmt: skip
        gaps[i] = total / 2
    return gaps


def gauge(rounds: dict[str, np.ndarray], net: tuple) -> dict[str, float]:
    """:func:`gauge_gaps`' mean and its standard error (over deals)."""
    gaps = gauge_gaps(rounds, net)
    n = len(gaps)
    return {"gap": float(gaps.mean()), "se": float(gaps.std(ddof=1) / np.sqrt(n)), "deals": n}


def net_arrays(net: MLP, symmetric: bool = False) -> tuple:
    from lab.training.qp_data import net_arrays as arrays

    return arrays(net, symmetric)


def load_rounds(
    folder: Path, name: str, start: int, count: int, bar: Any = None, match: bool = False
) -> dict:
    """:func:`bid_rounds`, kept in ``folder`` (bidding is the Python part)."""
    path = folder / f"{name.replace('/', '_')}_{start}_{count}.npz"
    if path.exists():
        if bar is not None:
            bar.update(count)
        with np.load(path) as z:
            return {k: z[k] for k in z.files}
    folder.mkdir(parents=True, exist_ok=True)
    part = bid_rounds(name, start, count, bar, match)
    with open(path.with_suffix(".tmp"), "wb") as f:
        np.savez(f, **part)
    path.with_suffix(".tmp").replace(path)
    return part


# ----- the training loop ----------------------------------------------------------


class Opponents(Protocol):
    """Who a run's rounds are played against, when not the network itself at
    every seat (``lab.training.qp_league.League``)."""

    config: dict[str, Any]

    def start(self, folder: Path, start: int) -> None:
        """Ready for iteration ``start`` (a resumed run reads back what it kept)."""

    def rows(
        self, rounds: dict[str, np.ndarray], net: tuple, explore: float, lam: float,
        seed: int, iteration: int, branch: float,
    ) -> dict[str, np.ndarray]:  # fmt: skip
        """The iteration's bid ``rounds`` played: rows as :func:`selfplay` gives them
        (with ``branch``, a share of the learner's decisions branched)."""

    def after(self, folder: Path, iteration: int, net: MLP) -> None:
        """``iteration`` iterations done, with the weights ``net``."""


POOL_CHUNK = 10_000  # bid rounds a pool file holds


def train(
    deals: Path,
    folder: Path,
    *,
    seed: int,
    iterations: int,
    rounds: int,
    pool: int,
    explore: float,
    lam: float,
    steps: int,
    batch: int,
    lr: float,
    buffer: int,
    hidden: tuple[int, ...],
    gauge_deals: int,
    gauge_every: int,
    checkpoint: Path,
    branch: float = 0.0,
    advantage: float = 1.0,
    init: MLP | None = None,
    progress: TextIO | None = None,
    match: bool = False,
    opponents: Opponents | None = None,
    inputs: int = SPADES_FEATURES,
) -> tuple[MLP, dict[str, Any]]:
    """Self-play from seeded random weights: each iteration plays ``rounds`` bid
    rounds (the next ones of a pool of ``pool``, cycled) with the network at every
    seat, keeps the rows of the last ``buffer`` iterations and takes ``steps``
    Adam steps of ``batch`` rows drawn from them (squared error to the λ-returns).
    With ``branch``, a share of the decisions is branched (:func:`selfplay_round`; in
    a league run the learner's, played out against the opponent: ``qp_league``)
    and each step also fits ``batch // 4`` branched decisions: the squared error
    of each card plus ``advantage`` times that of its value less its decision's
    mean (label and prediction alike), as ``lab.training.qp_train`` does.
    Every ``gauge_every`` iterations (and at the end) the greedy network meets SRP
    on ``gauge_deals`` held-out deals (:func:`gauge`). The bid rounds are kept in
    ``deals``. Resumable: a checkpoint after each iteration, the rows of the
    iterations in the buffer in ``folder``; seeded by
    (seed, iteration), so a resumed run ends with the same weights. ``init``:
    start from these weights (a network of the same shape, e.g. an earlier run's,
    to go on at another learning rate) instead of seeded random ones.

    Issue 62: ``match`` deals the pool from match situations (scores before the
    round drawn, so BIS's end-game bids and blind nils come; the pool
    ``"<seed>/qpmatch"``); ``opponents`` plays the rounds instead of self-play
    (``lab.training.qp_league.League``: SRP and earlier networks). ``inputs``: the
    network reads the first ``inputs`` numbers of a row: 292, the issue-46 state
    (the shipped runs'), or 300 with issue 62's inputs; a narrower ``init`` is
    widened to it."""
    from lab.training.progress import Progress
    from lab.training.train import (
        TrainError,
        export,
        load_checkpoint,
        load_weights,
        make_net,
        save_checkpoint,
        torch,
        widen,
    )

    if min(iterations, rounds, steps, batch, buffer) < 1:
        raise TrainError("iterations, rounds, steps, batch and buffer are at least 1")
    chunk = min(pool, POOL_CHUNK)
    if pool % chunk or rounds > pool:
        raise TrainError(f"the pool is at least --rounds and, past {POOL_CHUNK}, a multiple of it")
    if not 0 <= explore <= 1 or not 0 <= lam <= 1 or not 0 <= branch <= 1:
        raise TrainError("explore, lambda and branch are between 0 and 1")
    t = torch()
    config = {
        "kind": "qp-selfplay",
        "seed": seed,
        "rounds": rounds,
        "pool": pool,
        "explore": explore,
        "lambda": lam,
        "steps": steps,
        "batch": batch,
        "lr": lr,
        "buffer": buffer,
        "hidden": list(hidden),
        "gauge_deals": gauge_deals,
        "gauge_every": gauge_every,
        "branch": branch,
        "advantage": advantage,
    }
    if match or opponents is not None:  # earlier runs' checkpoints keep their config
        config.update(match=match, **(opponents.config if opponents is not None else {}))
    if inputs != SPADES_FEATURES:  # earlier runs' checkpoints keep their config
        config["inputs"] = inputs
    net = make_net((inputs, *hidden, 1), seed)
    if init is not None:
        config["init"] = init.checksum
        if init.inputs < inputs:  # the issue-46 weights: issue 62's inputs added
            init = widen(init, inputs)
        load_weights(net, init)
    opt = t.optim.Adam(net.parameters(), lr=lr)
    history: dict[str, list[float]] = {"iteration": [], "loss": [], "gauge": [], "gauge_se": []}
    history["gauge_at"] = []
    start = 0
    state = load_checkpoint(checkpoint, config)
    if state is not None:
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        history, start = state["history"], state["iteration"]
    folder.mkdir(parents=True, exist_ok=True)
    bidding = Progress("rounds bid", pool + gauge_deals, 0, progress)
    pool_name = f"{seed}/qpmatch" if match else f"{seed}/qpself"
    parts = [load_rounds(deals, pool_name, c * chunk, chunk, bidding, match)
             for c in range(pool // chunk)]  # fmt: skip
    everything = {k: np.concatenate([d[k] for d in parts]) for k in parts[0]}
    held = None
    if gauge_deals:
        held = load_rounds(deals, f"{seed}/qpself-gauge", 0, gauge_deals, bidding)
    bidding.close()
    scale = t.from_numpy(PLAY_SCALE[:inputs].copy())
    kept: list[dict[str, np.ndarray]] = []
    if start < iterations:  # a resumed run's buffer: the rows of its last iterations
        for i in range(max(0, start - buffer + 1), start):
            with np.load(folder / f"iter_{i}.npz") as z:
                kept.append({k: z[k] for k in z.files})

    def point(i: int) -> None:
        g = gauge(held, net_arrays(export(net)))
        history["gauge_at"].append(i)
        history["gauge"].append(g["gap"])
        history["gauge_se"].append(g["se"])
        bar.update(0, f"iteration {i}: vs SRP {g['gap']:+.1f} ± {g['se']:.1f} points a round")

    if opponents is not None:
        opponents.start(folder, start)
    bar = Progress("iterations", iterations, start, progress)
    for i in range(start, iterations):
        first = (i * rounds) % pool
        take = np.arange(first, first + rounds) % pool
        part = {k: v[take] for k, v in everything.items()}
        if opponents is not None:
            rows = opponents.rows(part, net_arrays(export(net)), explore, lam, seed, i, branch)
        else:
            rows = selfplay(part, net_arrays(export(net)), explore, lam, [seed, i], branch)
        tmp = folder / f"iter_{i}.tmp.npz"
        np.savez(tmp, **rows)
        tmp.replace(folder / f"iter_{i}.npz")
        old = folder / f"iter_{i - buffer}.npz"
        if old.exists():
            old.unlink()
        kept = [*kept, rows][-buffer:]
        xs = np.concatenate([k["x"] for k in kept])
        ys = np.concatenate([k["y"] for k in kept])
        bxs = np.concatenate([k["bx"] for k in kept])
        bys = np.concatenate([k["by"] for k in kept])
        firsts, at_row = [], 0  # each branched decision's first row, then the end
        for k in kept:
            firsts.append(np.flatnonzero(np.diff(k["bg"], prepend=-1)) + at_row)
            at_row += len(k["by"])
        starts = np.concatenate([*firsts, [at_row]])
        decisions = len(starts) - 1
        draw = np.random.default_rng([seed, i, 1])
        total = 0.0
        for _ in range(steps):
            pick = draw.integers(len(ys), size=batch)
            xb = t.from_numpy(xs[pick][:, :inputs]).float() * scale
            yb = t.from_numpy(ys[pick])
            loss = ((net(xb).squeeze(1) - yb) ** 2).mean()
            if decisions:
                dec = draw.integers(decisions, size=max(1, batch // 4))
                lo, hi = starts[dec], starts[dec + 1]
                sizes = hi - lo
                at = np.repeat(lo - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
                g = t.from_numpy(np.repeat(np.arange(len(dec)), sizes))
                q = net(t.from_numpy(bxs[at][:, :inputs]).float() * scale).squeeze(1)
                yq = t.from_numpy(bys[at])
                n_g = t.from_numpy(sizes.astype(np.float32))
                q_mean = t.zeros(len(dec)).index_add(0, g, q) / n_g
                y_mean = t.zeros(len(dec)).index_add(0, g, yq) / n_g
                adv = (((q - q_mean[g]) - (yq - y_mean[g])) ** 2).mean()
                loss = loss + ((q - yq) ** 2).mean() + advantage * adv
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        history["iteration"].append(i + 1)
        history["loss"].append(total / steps)
        bar.update(1, f"iteration {i + 1} loss {total / steps:.4f}")
        if held is not None and ((i + 1) % gauge_every == 0 or i + 1 == iterations):
            point(i + 1)
        if opponents is not None:
            opponents.after(folder, i + 1, export(net))
        save_checkpoint(
            checkpoint,
            {
                "config": config,
                "model": net.state_dict(),
                "optimizer": opt.state_dict(),
                "history": history,
                "iteration": i + 1,
            },
        )
    bar.close()
    info = {**config, "iterations": iterations, "history": history}
    return export(net, info), info
