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

Rule and search bidders in the pool (issue 62, item 2): with ``pool_bidders``
(registry names, e.g. BIS and SIM75), a deal's opponent partnership is, with
probability ``pool_bidder_share``, one of them (drawn uniformly) instead of a
network, in the bidding made and in the later seats answering each
counterfactual bid. Such a bidder bids through the engine (:class:`RuleSeat`):
a round of the deal with the earlier bids of the row applied, its own view
of it (its hand, the bids so far, the score and bags), its own ``bid``. A
network trained only against itself meets BIS's bidding at the table and
never before; this shows it BIS's answers to each of its bids.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from bots.base import Bidder
from bots.baselines import RBBidder
from bots.learned.bidders import SPB
from bots.learned.features import BID_FEATURES, SCORE_FEATURES
from bots.learned.mlp import MLP
from game.engine.actions import Bid, SeeCards
from game.engine.deal import deal_hands
from game.engine.match import match_winner
from game.engine.rules import Rules
from game.engine.state import RoundState
from game.engine.view import view_for

from .match_value import MatchValue
from .progress import Progress
from .spb_eval import duplicate_gauge
from .spb_sim import DealFeatures, Simulator
from .train import (
    TrainError,
    export,
    load_checkpoint,
    load_weights,
    make_net,
    save_checkpoint,
    torch,
)

ACTIONS = 14  # nil, 1..13
# SPB-score: a round that ends the match is worth this much more or less (in
# points / 100; bots.sim's WIN_VALUE, 200 points, for the same reason).
WIN_BONUS = 2.0
# SPB-match: a whole match won is worth this much (in the same units: a round
# that takes the chance of winning from a half to one scores 2, as WIN_BONUS).
MATCH_SCALE = 4.0
# The rounds the match value's outcomes are drawn from (lab.training.match_value).
MATCH_VALUE_DEALS = 10_000


def match_state(rng: random.Random) -> tuple[tuple[int, int], tuple[int, int]]:
    """A match position for SPB-score: a quarter from 0 : 0, else each side's
    score drawn from -90..190 (in tens) and its bags from 0..9."""
    if rng.random() < 0.25:
        return (0, 0), (0, 0)
    scores = (10 * rng.randint(-9, 19), 10 * rng.randint(-9, 19))
    return scores, (rng.randint(0, 9), rng.randint(0, 9))


def exact_scores(scores: tuple[int, int], bags: tuple[int, int]) -> tuple[int, int]:
    """:func:`match_state`'s scores with the bags as their last digit, as a
    match's scores are (SPB-match: the match value reads them so)."""
    return (scores[0] + bags[0], scores[1] + bags[1])


def returns(
    points: np.ndarray,
    learner: int,
    scores: tuple[int, int] | None,
    value: MatchValue | None = None,
) -> np.ndarray:
    """The learner's return for each row of round points: the points gap / 100,
    plus or minus WIN_BONUS where the round ends the match (``scores`` given);
    with ``value``, instead MATCH_SCALE times the change the round makes to the
    learner's chance of winning the match from ``scores``."""
    if value is not None:
        assert scores is not None
        ours, theirs = scores[learner], scores[1 - learner]
        before = value(ours, theirs)
        after = [value(ours + int(p[learner]), theirs + int(p[1 - learner])) for p in points]
        return (MATCH_SCALE * (np.array(after) - before)).astype(np.float32)
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


class RuleSeat:
    """A bidder of the registry (BIS, SIM...) at the seats of one deal: its bid
    for each row of earlier bids, asked through the engine as at a table."""

    def __init__(
        self,
        bidder: Bidder,
        rules: Rules,
        hands: list[int],
        dealer: int,
        scores: tuple[int, int],
        bags: tuple[int, int],
        rng: random.Random,
    ) -> None:
        self.bidder, self.rules, self.hands, self.dealer = bidder, rules, hands, dealer
        self.scores, self.bags, self.rng = scores, bags, rng
        self.order = [(dealer + 1 + i) & 3 for i in range(4)]
        # The same earlier bids give the same bid (SIM's sampled deals aside: one
        # answer per bidding, as at a table); rows of one deal share many.
        self.cache: dict[tuple[int, ...], int] = {}
        self.calls = 0

    def bid(self, position: int, earlier: tuple[int, ...]) -> int:
        """The bid of the seat bidding ``position``-th after ``earlier`` (by position)."""
        key = (position, *earlier)
        if key not in self.cache:
            r = RoundState(self.rules, self.dealer, self.hands, self.scores, self.bags)
            for seat, b in zip(self.order, [*earlier, None], strict=False):
                if not r.cards_seen[seat]:  # a blind nil was possible: it was declined
                    r.apply(SeeCards(seat))
                if b is not None:
                    r.apply(Bid(seat, b))
            self.calls += 1
            self.cache[key] = self.bidder.bid(view_for(r, self.order[position]), self.rng).tricks
        return self.cache[key]

    def bids(self, position: int, rows: np.ndarray) -> np.ndarray:
        """int64[n]: the bid for each row of ``rows`` (int64[n, 4] by seat)."""
        earlier = rows[:, self.order[:position]]
        return np.array([self.bid(position, tuple(int(b) for b in e)) for e in earlier])


Policy = MLP | Bidder


def counterfactual_deal(
    sim: Simulator,
    hands: list[int],
    dealer: int,
    learner: int,
    policies: tuple[MLP, Policy],
    temperature: float,
    rng: random.Random,
    bags: tuple[int, int] = (0, 0),
    scores: tuple[int, int] | None = None,
    value: MatchValue | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray], list[int]]:
    """The learner seats' inputs, their 14 returns (one per bid, the rest of the
    bidding and the play following it) and the bids they made. ``scores``: the
    match's score before the round (SPB-score: an input, and the match's end
    in the return); ``value``: the return is the change in the chance of
    winning the match (SPB-match, :func:`returns`). The opponents' policy may
    be a registry bidder (BIS...): it bids through the engine
    (:class:`RuleSeat`), greedy in both phases."""
    feats = DealFeatures(hands, dealer, scores, bags)
    opponents: MLP | RuleSeat = policies[1]  # type: ignore[assignment]
    if not isinstance(opponents, MLP):
        own = random.Random(rng.random())  # SIM's sampled deals: seeded by the deal
        opponents = RuleSeat(opponents, sim.rules, hands, dealer, scores or (0, 0), bags, own)
    policy = [policies[0] if s & 1 == learner else opponents for s in range(4)]
    made = np.zeros((1, 4), dtype=np.int64)
    for pos, seat in enumerate(feats.order):
        p = policy[seat]
        if isinstance(p, RuleSeat):
            made[0, seat] = p.bids(pos, made)[0]
        else:
            made[0, seat] = sample(p(feats.rows(pos, made))[0], temperature, rng)
    xs, ys, acts = [], [], []
    for pos, seat in enumerate(feats.order):
        if seat & 1 != learner:
            continue
        rows = np.repeat(made, ACTIONS, axis=0)
        rows[:, seat] = np.arange(ACTIONS)
        for later in range(pos + 1, 4):
            s = feats.order[later]
            p = policy[s]
            if isinstance(p, RuleSeat):
                rows[:, s] = p.bids(later, rows)
            else:
                rows[:, s] = p(feats.rows(later, rows)).argmax(axis=1)
        points = sim.points(hands, dealer, rows, bags)
        xs.append(feats.rows(pos, made)[0])
        ys.append(returns(points, learner, scores, value))
        acts.append(int(made[0, seat]))
    return xs, ys, acts


def pool_bidder(name: str, sim_deals: int | None = None) -> Bidder:
    """A bidder of the registry by name (``RB``, ``BIS``, ``SIM75``...), a SIM
    bidder with ``sim_deals`` sampled deals a bid when given."""
    from bots.registry import ABLATION_BIDDERS, BIDDERS

    if name == "RB":
        return RBBidder()
    make = BIDDERS.get(name) or ABLATION_BIDDERS.get(name)
    if make is None:
        raise TrainError(f"no bidder {name!r} in the registry")
    bidder = make()
    if sim_deals is not None and hasattr(bidder, "deals"):
        bidder.deals = sim_deals  # type: ignore[attr-defined]
    return bidder


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
    match_return: bool = False,
    match_deals: int = MATCH_VALUE_DEALS,
    pool_bidders: tuple[str, ...] = (),
    pool_bidder_share: float = 0.0,
    sim_deals: int | None = None,
    init: MLP | None = None,
    gauge_bidder: str = "RB",
    eval_every: int = 0,
    eval_games: int = 400,
    progress: TextIO | None = None,
) -> tuple[MLP, dict[str, Any]]:
    """Counterfactual fitted Q-iteration (the module doc). With ``eval_every``,
    every so many iterations the greedy policy plays ``eval_games`` duplicate
    matches against ``gauge_bidder`` (RB by default;
    :func:`~lab.training.spb_eval.duplicate_gauge`, seed ``<seed>``), the
    learning curve. ``pool_bidders``: registry bidders as opponents in a
    ``pool_bidder_share`` of the deals (the module doc); ``sim_deals``: the
    sampled deals of a SIM bidder's bid there (its tournament default if None).
    ``init``: start from these weights (a warm start). ``match_return`` (with
    ``score_inputs``): returns by the match value (:func:`returns`), its outcomes
    from ``match_deals`` rounds."""
    if iterations < 1 or deals < 1 or epochs < 1:
        raise TrainError("--iterations, --deals and --epochs must be at least 1")
    if not 0.0 <= pool_bidder_share <= 1.0 or bool(pool_bidders) != (pool_bidder_share > 0):
        raise TrainError("--pool-bidders and a --pool-bidder-share in (0, 1] go together")
    if match_return and not score_inputs:
        raise TrainError("--match-return needs --score-inputs: the value reads the score")
    rule_bidders = [pool_bidder(name, sim_deals) for name in pool_bidders]
    gauge_opponent = pool_bidder(gauge_bidder, sim_deals)
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
        **({"match_return": True} if match_return else {}),
        **(
            {"match_deals": match_deals}
            if match_return and match_deals != MATCH_VALUE_DEALS
            else {}
        ),
        # Only when used, so that the runs before them resume and compare as before.
        **(
            {"pool_bidders": list(pool_bidders), "pool_bidder_share": pool_bidder_share}
            if pool_bidders
            else {}
        ),
        **({"sim_deals": sim_deals} if sim_deals is not None else {}),
        **({"init": init.checksum} if init is not None else {}),
        **({"gauge_bidder": gauge_bidder} if gauge_bidder != "RB" else {}),
        "eval_every": eval_every,
        "eval_games": eval_games,
    }
    inputs = BID_FEATURES + (SCORE_FEATURES if score_inputs else 0)
    net = make_net((inputs, *hidden, ACTIONS), seed)
    if init is not None:
        load_weights(net, init)
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
    value = MatchValue.estimate(match_deals, seed) if match_return else None
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
            opponent: Policy = current
            if rule_bidders and rng.random() < pool_bidder_share:
                opponent = rule_bidders[rng.randrange(len(rule_bidders))]
            elif pool and rng.random() < pool_share:
                opponent = MLP(pool[rng.randrange(len(pool))])
            bags = (rng.randint(0, max_bags), rng.randint(0, max_bags)) if max_bags else (0, 0)
            scores = None
            if score_inputs:
                scores, bags = match_state(rng)
                if match_return:
                    scores = exact_scores(scores, bags)
            policies = (current, opponent)
            x, y, a = counterfactual_deal(
                sim, hands, dealer, learner, policies, temperature, rng, bags, scores, value
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
            gauge = duplicate_gauge(SPB(export(net)), gauge_opponent, eval_games, seed)
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
            note += f" vs {gauge_bidder} {history['eval_win_rate'][-1]:.3f}"
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
