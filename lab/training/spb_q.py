"""SPB by counterfactual fitted Q-iteration: every bid of a seat tried on the same deal.

The Bridge paper ("Simple is Better") rewards its bidder by the difference
between the same deal played by the current policy and by an opponent pool,
to cancel the luck of the deal. With the compiled simulator
(:mod:`lab.training.spb_sim`, about 50,000 rounds a second) we can go one step
further: for a seat on a deal, *every* bid (nil, 1..13) is played out, the
later seats answering it with their own policies, so the 14 returns differ by
the bid alone. A network ``Q(x, k)`` (SPB's 65 inputs -> 14 outputs) is fitted
to those 14 returns by squared error, and the policy is its argmax: policy
iteration by simulation, no hand-written rule and no imitation.

One iteration: ``deals`` deals (seeded ``<seed>/spbq/<iteration>/<j>``),
random dealer; one partnership (the learner's, at random) bids with the
current network, the other with the current network or, with probability
``pool_share``, a snapshot from the pool of earlier ones. The bids are drawn
from ``softmax(Q / temperature)`` (so that the bidding contexts vary and
every bid, nil included, is reached), then for each learner seat every bid is
played out with the later seats bidding their policy's argmax. Reward: the
learner partnership's round points minus the opponents', / 100, from 0 : 0
(with ``max_bags``, each partnership holds 0..max_bags bags before the round,
drawn at random, so that overtricks cost what they cost in a match).
The network is fitted for ``epochs`` passes over the last ``buffer``
iterations' samples. At the table SPB bids the argmax over the legal bids
(``bots.learned.bidders.SPB``, unchanged: its "logits" are these Q-values).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from bots.baselines import RBBidder
from bots.learned.bidders import SPB
from bots.learned.features import BID_FEATURES, SCORE_FEATURES
from bots.learned.mlp import MLP
from game.engine.deal import deal_hands
from game.engine.match import match_winner

from .progress import Progress
from .spb_eval import duplicate_gauge
from .spb_sim import DealFeatures, Simulator
from .train import TrainError, export, load_checkpoint, make_net, save_checkpoint, torch

ACTIONS = 14  # nil, 1..13
# SPB-score: a round that ends the match is worth this much more or less (in
# points / 100; bots.sim's WIN_VALUE, 200 points, for the same reason).
WIN_BONUS = 2.0


def match_state(rng: random.Random) -> tuple[tuple[int, int], tuple[int, int]]:
    """A match position for SPB-score: a quarter from 0 : 0, else each side's
    score drawn from -90..190 (in tens) and its bags from 0..9."""
    if rng.random() < 0.25:
        return (0, 0), (0, 0)
    scores = (10 * rng.randint(-9, 19), 10 * rng.randint(-9, 19))
    return scores, (rng.randint(0, 9), rng.randint(0, 9))


def returns(points: np.ndarray, learner: int, scores: tuple[int, int] | None) -> np.ndarray:
    """The learner's return for each row of round points: the points gap / 100,
    plus or minus WIN_BONUS where the round ends the match (``scores`` given)."""
    gap = (points[:, learner] - points[:, 1 - learner]) / 100.0
    if scores is not None:
        from .spb_sim import TRAIN_RULES

        for i, (a, b) in enumerate(points):
            winner = match_winner(TRAIN_RULES, (scores[0] + int(a), scores[1] + int(b)))
            if winner is not None:
                gap[i] += WIN_BONUS if winner == learner else -WIN_BONUS
    return gap.astype(np.float32)


def sample(q: np.ndarray, temperature: float, rng: random.Random) -> int:
    """A bid drawn from ``softmax(q / temperature)``."""
    z = (q - q.max()) / temperature
    p = np.exp(z.astype(np.float64))
    c = np.cumsum(p)
    return min(int(np.searchsorted(c, rng.random() * c[-1], side="right")), ACTIONS - 1)


def counterfactual_deal(
    sim: Simulator,
    hands: list[int],
    dealer: int,
    learner: int,
    policies: tuple[MLP, MLP],
    temperature: float,
    rng: random.Random,
    bags: tuple[int, int] = (0, 0),
    scores: tuple[int, int] | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray], list[int]]:
    """The learner seats' inputs, their 14 returns (one per bid, the rest of the
    bidding and the play following it) and the bids they made. ``scores``: the
    match's score before the round (SPB-score: an input, and the match's end
    in the return)."""
    feats = DealFeatures(hands, dealer, scores, bags)
    policy = [policies[0 if s & 1 == learner else 1] for s in range(4)]
    made = np.zeros((1, 4), dtype=np.int64)
    for pos, seat in enumerate(feats.order):
        made[0, seat] = sample(policy[seat](feats.rows(pos, made))[0], temperature, rng)
    xs, ys, acts = [], [], []
    for pos, seat in enumerate(feats.order):
        if seat & 1 != learner:
            continue
        rows = np.repeat(made, ACTIONS, axis=0)
        rows[:, seat] = np.arange(ACTIONS)
        for later in range(pos + 1, 4):
            s = feats.order[later]
            rows[:, s] = policy[s](feats.rows(later, rows)).argmax(axis=1)
        points = sim.points(hands, dealer, rows, bags)
        xs.append(feats.rows(pos, made)[0])
        ys.append(returns(points, learner, scores))
        acts.append(int(made[0, seat]))
    return xs, ys, acts


def train_spb_q(
    *,
    seed: int,
    iterations: int,
    deals: int,
    checkpoint: Path,
    hidden: tuple[int, ...] = (64, 64),
    lr: float = 1e-3,
    epochs: int = 2,
    batch: int = 256,
    temperature: float = 0.3,
    buffer: int = 4,
    snapshot_every: int = 5,
    pool_size: int = 10,
    pool_share: float = 0.5,
    max_bags: int = 0,
    score_inputs: bool = False,
    eval_every: int = 0,
    eval_games: int = 400,
    progress: TextIO | None = None,
) -> tuple[MLP, dict[str, Any]]:
    """Counterfactual fitted Q-iteration (the module doc). With ``eval_every``,
    every so many iterations the greedy policy plays ``eval_games`` duplicate
    matches against RB (:func:`~lab.training.spb_eval.duplicate_gauge`, seed
    ``<seed>``), the learning curve."""
    if iterations < 1 or deals < 1 or epochs < 1:
        raise TrainError("--iterations, --deals and --epochs must be at least 1")
    t = torch()
    config = {
        "kind": "spb-q",
        "seed": seed,
        "deals": deals,
        "hidden": list(hidden),
        "lr": lr,
        "epochs": epochs,
        "batch": batch,
        "temperature": temperature,
        "buffer": buffer,
        "snapshot_every": snapshot_every,
        "pool_size": pool_size,
        "pool_share": pool_share,
        **({"max_bags": max_bags} if max_bags else {}),
        **({"score_inputs": True} if score_inputs else {}),
        "eval_every": eval_every,
        "eval_games": eval_games,
    }
    inputs = BID_FEATURES + (SCORE_FEATURES if score_inputs else 0)
    net = make_net((inputs, *hidden, ACTIONS), seed)
    opt = t.optim.Adam(net.parameters(), lr=lr)
    history: dict[str, list[float]] = {
        "loss": [],
        "nil_rate": [],
        "mean_bid": [],
        "regret": [],
        "eval_iteration": [],
        "eval_win_rate": [],
        "eval_low": [],
        "eval_high": [],
        "eval_nil_rate": [],
        "eval_nil_made": [],
    }
    pool: list[list[tuple[np.ndarray, np.ndarray]]] = []
    data: list[tuple[np.ndarray, np.ndarray]] = []
    start = 0
    state = load_checkpoint(checkpoint, config)
    if state is not None:
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        history, pool, data, start = (
            state["history"],
            state["pool"],
            state["data"],
            state["iteration"],
        )
    sim = Simulator()
    bar = Progress("iterations", iterations, start, progress)
    for it in range(start, iterations):
        current = export(net)
        rng = random.Random(f"{seed}/spbq/{it}")
        xs: list[np.ndarray] = []
        ys: list[np.ndarray] = []
        acts: list[int] = []
        for j in range(deals):
            hands = deal_hands(f"{seed}/spbq/{it}/{j}")
            dealer, learner = rng.randrange(4), rng.randrange(2)
            opponent = current
            if pool and rng.random() < pool_share:
                opponent = MLP(pool[rng.randrange(len(pool))])
            bags = (rng.randint(0, max_bags), rng.randint(0, max_bags)) if max_bags else (0, 0)
            scores = None
            if score_inputs:
                scores, bags = match_state(rng)
            x, y, a = counterfactual_deal(
                sim, hands, dealer, learner, (current, opponent), temperature, rng, bags, scores
            )
            xs += x
            ys += y
            acts += a
        x_it, y_it = np.stack(xs), np.stack(ys)
        greedy = current(x_it).argmax(axis=1)
        history["nil_rate"].append(float((greedy == 0).mean()))
        history["mean_bid"].append(float(greedy[greedy > 0].mean()) if (greedy > 0).any() else 0.0)
        # What the greedy bid lost against the best bid of each deal, in points / 100.
        history["regret"].append(float((y_it.max(1) - y_it[np.arange(len(greedy)), greedy]).mean()))
        data = [*data, (x_it, y_it)][-buffer:]
        xt = t.from_numpy(np.concatenate([d[0] for d in data]))
        yt = t.from_numpy(np.concatenate([d[1] for d in data]))
        total = 0.0
        for epoch in range(epochs):
            order = np.random.default_rng([seed, it, epoch]).permutation(len(xt))
            for i in range(0, len(order), batch):
                idx = t.from_numpy(order[i : i + batch])
                opt.zero_grad()
                loss = ((net(xt[idx]) - yt[idx]) ** 2).mean()
                loss.backward()
                opt.step()
                total += loss.item() * len(idx)
        history["loss"].append(total / (epochs * len(xt)))
        if (it + 1) % snapshot_every == 0:
            pool = [*pool, export(net).layers][-pool_size:]
        if eval_every and (it + 1) % eval_every == 0:
            gauge = duplicate_gauge(SPB(export(net)), RBBidder(), eval_games, seed)
            low, high = gauge.interval()
            history["eval_iteration"].append(it + 1)
            history["eval_win_rate"].append(gauge.rate)
            history["eval_low"].append(low)
            history["eval_high"].append(high)
            history["eval_nil_rate"].append(gauge.nils / max(gauge.bids, 1))
            history["eval_nil_made"].append(gauge.nils_made / max(gauge.nils, 1))
        save_checkpoint(
            checkpoint,
            {
                "config": config,
                "model": net.state_dict(),
                "optimizer": opt.state_dict(),
                "history": history,
                "pool": pool,
                "data": data,
                "iteration": it + 1,
            },
        )
        note = (
            f"loss {history['loss'][-1]:.3f} nil {history['nil_rate'][-1]:.3f} "
            f"bid {history['mean_bid'][-1]:.2f} regret {history['regret'][-1]:.3f}"
        )
        if history["eval_iteration"] and history["eval_iteration"][-1] == it + 1:
            note += f" vs RB {history['eval_win_rate'][-1]:.3f}"
        bar.update(1, note)
    bar.close()
    info = {
        **config,
        "method": "counterfactual fitted Q-iteration",
        "iterations": iterations,
        "rounds": iterations * deals,
        "simulated_rounds": iterations * deals * 2 * ACTIONS,
        "history": history,
    }
    return export(net, info), info
