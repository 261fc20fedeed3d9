"""Training of the learned bots with PyTorch (the optional ``train`` extra).

PyTorch is imported here only, lazily (:func:`torch`), so playing, the site and
the default tests need numpy alone: every network is exported to the numpy
:class:`~bots.learned.mlp.MLP` and saved as an ``.npz``.

Every run is seeded and resumable: after each epoch (NNB) or iteration (SPB,
QP) a checkpoint holds the model, the optimizer, the history and the step, and
a run started again with the same settings goes on from it; shuffles and
rollouts are seeded by (seed, step), so an interrupted run ends with the same
weights as an uninterrupted one. One thread (the machine is shared; it also
keeps results identical run to run).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from bots.learned.mlp import MLP
from lab.training.progress import Progress

TORCH_HINT = (
    "PyTorch is not installed: `pip install -e '.[train]'` (this machine: the local CPU "
    "wheel; elsewhere add --extra-index-url https://download.pytorch.org/whl/cpu)"
)


class TrainError(ValueError):
    """Settings or files a training run cannot use; ``str(e)`` says why."""


def torch() -> Any:
    """The ``torch`` module, one thread; a clear error without the train extra."""
    try:
        import torch as t
    except ImportError:
        raise TrainError(TORCH_HINT) from None
    t.set_num_threads(1)
    return t


def make_net(sizes: tuple[int, ...], seed: int) -> Any:
    """A ReLU MLP ``sizes[0] -> ... -> sizes[-1]`` with seeded initial weights."""
    t = torch()
    t.manual_seed(seed)
    layers: list[Any] = []
    for i in range(len(sizes) - 1):
        layers.append(t.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(t.nn.ReLU())
    return t.nn.Sequential(*layers)


def load_weights(net: Any, init: MLP) -> None:
    """Copy ``init``'s layers into the torch ``Sequential`` ``net`` (a run started
    from earlier weights); a clear error if the shapes differ."""
    t = torch()
    linear = [m for m in net if hasattr(m, "weight")]
    shapes = [w.shape for w, _ in init.layers]
    wanted = [tuple(m.weight.shape[::-1]) for m in linear]
    if shapes != wanted:
        raise TrainError(f"the initial weights' layers {shapes} are not {wanted}")
    with t.no_grad():
        for m, (w, b) in zip(linear, init.layers, strict=True):
            m.weight.copy_(t.from_numpy(w.T.copy()))
            m.bias.copy_(t.from_numpy(b.copy()))


def widen(init: MLP, inputs: int) -> MLP:
    """``init`` taking ``inputs`` inputs: the first layer's rows for the new, last
    inputs zero, so that the network's values are unchanged until training uses
    them (QP's issue-62 inputs added to the issue-46 weights)."""
    (w, b), rest = init.layers[0], init.layers[1:]
    if inputs < w.shape[0]:
        raise TrainError(f"a network of {w.shape[0]} inputs cannot be narrowed to {inputs}")
    wide = np.zeros((inputs, w.shape[1]), dtype=np.float32)
    wide[: w.shape[0]] = w
    return MLP([(wide, b), *rest], {**init.meta, "widened_from": init.checksum})


def export(net: Any, meta: dict[str, Any] | None = None) -> MLP:
    """The numpy copy of a torch ``Sequential`` of Linear and ReLU layers."""
    layers = [
        (m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
        for m in net
        if hasattr(m, "weight")
    ]
    return MLP(layers, meta)


def config_key(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]


def load_checkpoint(path: Path, config: dict[str, Any]) -> dict[str, Any] | None:
    """The checkpoint at ``path`` if it was made with ``config``, else None (start over)."""
    if not path.exists():
        return None
    t = torch()
    state = t.load(path, weights_only=False)
    if state.get("config") != json.loads(json.dumps(config)):
        raise TrainError(f"{path} is a checkpoint of other settings; remove it or change --output")
    return state


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    t = torch()
    tmp = path.with_name(path.name + ".tmp")
    t.save(state, tmp)
    tmp.replace(path)


def plot(curves: dict[str, list[float]], path: str | Path, title: str, xlabel: str) -> None:
    """Loss curves as a PNG (matplotlib, from the train extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=100)
    for label, ys in curves.items():
        ax.plot(range(1, len(ys) + 1), ys, label=label)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# ----- NNB: the bet regression -----------------------------------------------------


def asymmetric_loss(pred: Any, y: Any) -> Any:
    """The Four Hundred bet loss ``(y - sign(b - y) b)^2``, by its cases: ``(y - b)^2``
    when ``y >= b`` (under- or exact bid), ``(y + b)^2`` when the bid is over the tricks."""
    t = torch()
    return t.where(pred > y, (y + pred) ** 2, (y - pred) ** 2).mean()


def squared_loss(pred: Any, y: Any) -> Any:
    return ((y - pred) ** 2).mean()


LOSSES: dict[str, Callable[[Any, Any], Any]] = {"asym": asymmetric_loss, "sym": squared_loss}


def train_regression(
    x: np.ndarray,
    y: np.ndarray,
    *,
    loss: str,
    seed: int,
    epochs: int,
    checkpoint: Path,
    hidden: tuple[int, ...] = (64, 32),
    batch: int = 256,
    lr: float = 1e-3,
    holdout: float = 0.1,
    meta: dict[str, Any] | None = None,
    progress: TextIO | None = None,
) -> tuple[MLP, dict[str, Any]]:
    """Fit ``x -> y`` with ``loss`` ('asym' or 'sym'); the last ``holdout`` share of
    the rows (in the data's order) is held out for the validation loss."""
    if loss not in LOSSES:
        raise TrainError(f"loss must be one of {', '.join(LOSSES)}")
    if len(x) < 10 or epochs < 1:
        raise TrainError("need at least 10 samples and 1 epoch")
    t = torch()
    loss_fn = LOSSES[loss]
    n_val = max(1, int(len(x) * holdout))
    xt, yt = t.from_numpy(x[:-n_val]), t.from_numpy(y[:-n_val]).unsqueeze(1)
    xv, yv = t.from_numpy(x[-n_val:]), t.from_numpy(y[-n_val:]).unsqueeze(1)
    config = {
        "kind": "regression",
        "loss": loss,
        "seed": seed,
        "hidden": list(hidden),
        "batch": batch,
        "lr": lr,
        "samples": len(x),
        "holdout": n_val,
        "data": hashlib.sha256(x.tobytes() + y.tobytes()).hexdigest()[:16],
    }
    net = make_net((x.shape[1], *hidden, 1), seed)
    opt = t.optim.Adam(net.parameters(), lr=lr)
    history: dict[str, list[float]] = {"train": [], "validation": []}
    start = 0
    state = load_checkpoint(checkpoint, config)
    if state is not None:
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        history, start = state["history"], state["epoch"]
    bar = Progress("epochs", epochs, start, progress)
    for epoch in range(start, epochs):
        order = np.random.default_rng([seed, epoch]).permutation(len(xt))
        total = 0.0
        net.train()
        for i in range(0, len(order), batch):
            idx = t.from_numpy(order[i : i + batch])
            opt.zero_grad()
            batch_loss = loss_fn(net(xt[idx]), yt[idx])
            batch_loss.backward()
            opt.step()
            total += batch_loss.item() * len(idx)
        with t.no_grad():
            val = float(loss_fn(net(xv), yv))
        history["train"].append(total / len(order))
        history["validation"].append(val)
        save_checkpoint(
            checkpoint,
            {
                "config": config,
                "model": net.state_dict(),
                "optimizer": opt.state_dict(),
                "history": history,
                "epoch": epoch + 1,
            },
        )
        bar.update(1, f"loss {history['train'][-1]:.3f} validation {val:.3f}")
    bar.close()
    info = {**(meta or {}), **config, "epochs": epochs, "history": history}
    return export(net, info), info


# ----- SPB: the bidding policy by self-play policy gradient --------------------------


def masked_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    z = np.where(mask, logits, -np.inf)
    z = np.exp(z - z.max())
    return z / z.sum()


def spb_round(
    policies: tuple[MLP, MLP], learner: int, deal_seed: str, rng: Any
) -> tuple[list[tuple[np.ndarray, np.ndarray, int]], float]:
    """One round: partnership ``learner`` bids with ``policies[0]``, the other with
    ``policies[1]`` (actions sampled), SRP plays every card. The learner's
    decisions and its reward: its round points minus the opponents', / 100."""
    from bots.learned.bidders import policy_mask
    from bots.learned.features import view_bid_features
    from bots.srp import SRP
    from game.engine.actions import Bid, Play
    from game.engine.deal import deal_hands
    from game.engine.rules import Rules
    from game.engine.state import Phase, RoundState
    from game.engine.view import view_for

    r = RoundState(
        Rules(winning_goal=200, losing_goal=-100), rng.randrange(4), deal_hands(deal_seed)
    )
    decisions = []
    while r.phase is Phase.BIDDING:
        seat = r.to_act
        view = view_for(r, seat)
        x, mask = view_bid_features(view), policy_mask(view)
        p = masked_softmax(policies[0 if seat & 1 == learner else 1](x), mask)
        k = int(np.searchsorted(np.cumsum(p), rng.random() * p.sum()))
        k = min(k, 13)
        while not mask[k]:  # float edge of the cumulative sum
            k -= 1
        if seat & 1 == learner:
            decisions.append((x, mask, k))
        r.apply(Bid(seat, k))
    srp = SRP()
    while r.phase is Phase.PLAYING:
        r.apply(Play(r.to_act, srp.play(view_for(r, r.to_act), rng)))
    assert r.result is not None
    return decisions, (r.result[learner].points - r.result[1 - learner].points) / 100.0


def train_spb(
    *,
    seed: int,
    iterations: int,
    batch: int,
    checkpoint: Path,
    hidden: tuple[int, ...] = (64, 64),
    lr: float = 1e-3,
    entropy: float = 0.01,
    snapshot_every: int = 10,
    pool_size: int = 20,
    same_deals: bool = False,
    progress: TextIO | None = None,
) -> tuple[MLP, dict[str, Any]]:
    """Actor-critic policy gradient: each iteration plays ``batch`` rounds with the
    current policy for one partnership (sampled bids) against a policy drawn from
    the pool of earlier versions (a snapshot every ``snapshot_every`` iterations,
    the last ``pool_size`` kept), then takes one gradient step on
    ``-A log pi(a|s) + 0.5 (R - V(s))^2 - entropy H(pi(.|s))`` with ``A = R - V(s)``.
    ``same_deals``: every iteration replays the same ``batch`` deals (a tiny fixed
    sample, for the tests)."""
    import random

    from bots.learned.features import BID_FEATURES

    if iterations < 1 or batch < 1:
        raise TrainError("--iterations and --batch must be at least 1")
    t = torch()
    config = {
        "kind": "spb",
        "seed": seed,
        "batch": batch,
        "hidden": list(hidden),
        "lr": lr,
        "entropy": entropy,
        "snapshot_every": snapshot_every,
        "pool_size": pool_size,
        **({"same_deals": True} if same_deals else {}),
    }
    policy = make_net((BID_FEATURES, *hidden, 14), seed)
    critic = make_net((BID_FEATURES, *hidden, 1), seed + 1)
    opt = t.optim.Adam([*policy.parameters(), *critic.parameters()], lr=lr)
    history: dict[str, list[float]] = {
        "reward": [],
        "value_loss": [],
        "entropy": [],
        "nil_rate": [],
        "mean_bid": [],
    }
    pool: list[list[tuple[np.ndarray, np.ndarray]]] = [export(policy).layers]
    start = 0
    state = load_checkpoint(checkpoint, config)
    if state is not None:
        policy.load_state_dict(state["policy"])
        critic.load_state_dict(state["critic"])
        opt.load_state_dict(state["optimizer"])
        history, pool, start = state["history"], state["pool"], state["iteration"]
    bar = Progress("iterations", iterations, start, progress)
    for it in range(start, iterations):
        current = export(policy)
        rng = random.Random(f"{seed}/spb/{it}")
        xs, masks, acts, rewards = [], [], [], []
        for j in range(batch):
            opponent = MLP(pool[rng.randrange(len(pool))])
            decisions, reward = spb_round(
                (current, opponent),
                rng.randrange(2),
                f"{seed}/spb/{0 if same_deals else it}/{j}",
                rng,
            )
            for x, mask, k in decisions:
                xs.append(x)
                masks.append(mask)
                acts.append(k)
                rewards.append(reward)
        x = t.from_numpy(np.stack(xs))
        mask = t.from_numpy(np.stack(masks))
        a = t.tensor(acts)
        ret = t.tensor(rewards, dtype=t.float32)
        logits = policy(x).masked_fill(~mask, -1e9)
        logp = t.log_softmax(logits, dim=1)
        value = critic(x).squeeze(1)
        adv = (ret - value).detach()
        pg = -(adv * logp.gather(1, a.unsqueeze(1)).squeeze(1)).mean()
        value_loss = ((ret - value) ** 2).mean()
        ent = -(logp.exp() * logp).sum(1).mean()
        opt.zero_grad()
        (pg + 0.5 * value_loss - entropy * ent).backward()
        opt.step()
        history["reward"].append(float(ret.mean()))
        history["value_loss"].append(value_loss.item())
        history["entropy"].append(ent.item())
        history["nil_rate"].append(float((a == 0).float().mean()))
        history["mean_bid"].append(float(a[a > 0].float().mean()) if (a > 0).any() else 0.0)
        if (it + 1) % snapshot_every == 0:
            pool = [*pool, export(policy).layers][-pool_size:]
        save_checkpoint(
            checkpoint,
            {
                "config": config,
                "policy": policy.state_dict(),
                "critic": critic.state_dict(),
                "optimizer": opt.state_dict(),
                "history": history,
                "pool": pool,
                "iteration": it + 1,
            },
        )
        bar.update(
            1,
            f"reward {history['reward'][-1]:+.3f} value loss "
            f"{history['value_loss'][-1]:.3f} nil {history['nil_rate'][-1]:.2f}",
        )
    bar.close()
    info = {**config, "iterations": iterations, "rounds": iterations * batch, "history": history}
    return export(policy, info), info
