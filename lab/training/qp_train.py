"""QP's training: labelled rounds (``lab.training.qp_data``) in chunks, then a
value network fitted to every legal card's outcome (PyTorch, one thread).

The loss is the squared error of each card's value plus the squared error of
its advantage, the value minus the mean of its decision's cards (label and
prediction alike): the cards of one decision were played out on the same
deal, so their differences carry far less of the hidden cards' variance than
the values themselves, and the choice between them is all QP needs.

Resumable and seeded: each data chunk is a file ``chunk_<c>.npz`` in the data
folder, made again only if missing (chunk ``c`` is the same rounds whatever
ran before); the fit saves a checkpoint after each epoch, its shuffles seeded
by (seed, epoch). The learning curves, ``points`` times an epoch: the gain
over SRP's card on held-out decisions (``gain_over_srp``) and the win rate of
BIS+QP against BIS+WRP in ``curve_games`` duplicate games (seed
``"<seed>/qp-curve"``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

import numpy as np

from bots.learned.features import PLAIN_FEATURES, PLAY_FEATURES, PLAY_SCALE, SPADES_FEATURES
from bots.learned.mlp import MLP
from lab.training.progress import Progress
from lab.training.train import (
    TrainError,
    export,
    load_checkpoint,
    load_weights,
    make_net,
    save_checkpoint,
    torch,
)

# "spades": issue 46's state (QP-srp's), without issue 62's inputs.
FEATURE_SETS = {"spades": SPADES_FEATURES, "plain": PLAIN_FEATURES}


def make_data(
    folder: Path,
    *,
    seed: int,
    rounds: int,
    chunk: int,
    explore: float,
    progress: TextIO | None,
    rollout: MLP | None = None,
    srp_share: float = 0.0,
) -> dict[str, np.ndarray]:
    """The labelled rounds ``0 .. rounds - 1`` in chunks of ``chunk``, made or read;
    played out by SRP, or by QP with the network ``rollout`` (other deals, and
    files named after the network), SRP at a seat with probability ``srp_share``."""
    from lab.training.qp_data import label_chunk, rollout_tag

    tag = rollout_tag(rollout, srp_share)

    folder.mkdir(parents=True, exist_ok=True)
    n_chunks = -(-rounds // chunk)
    bar = Progress("rounds", rounds, 0, progress)
    parts = []
    for c in range(n_chunks):
        size = min(chunk, rounds - c * chunk)
        path = folder / f"chunk_{c}_{size}_{explore}_{PLAY_FEATURES}{'_' + tag if tag else ''}.npz"
        if path.exists():
            with np.load(path) as z:
                parts.append({k: z[k] for k in z.files})
            bar.update(size, "read")
            continue
        part = label_chunk(seed, c, size, explore, bar, rollout, srp_share)
        with open(path.with_suffix(".tmp"), "wb") as f:
            np.savez(f, **part)
        path.with_suffix(".tmp").replace(path)
        parts.append(part)
    bar.close()
    offsets = np.cumsum([0] + [len(p["types"]) for p in parts])
    return {
        "x": np.concatenate([p["x"] for p in parts]),
        "y": np.concatenate([p["y"] for p in parts]),
        "group": np.concatenate([p["group"] + o for p, o in zip(parts, offsets, strict=False)]),
        "types": np.concatenate([p["types"] for p in parts]),
        "srp": np.concatenate([p["srp"] for p in parts]),
        "chunks": np.diff(offsets),  # decisions per chunk
    }


def split_last_chunk(data: dict[str, np.ndarray], decisions: int) -> tuple[dict, dict]:
    """The data without its last ``decisions`` decisions (the last chunk's), and those."""
    cut = int(data["group"][-1]) + 1 - decisions
    r = int(np.searchsorted(data["group"], cut))
    train = {"x": data["x"][:r], "y": data["y"][:r], "group": data["group"][:r]}
    held = {"x": data["x"][r:], "y": data["y"][r:], "group": data["group"][r:] - cut}
    for k in ("types", "srp"):
        train[k], held[k] = data[k][:cut], data[k][cut:]
    return train, held


def gain_over_srp(net: MLP, held: dict[str, np.ndarray]) -> dict[str, float]:
    """On held-out decisions: the mean label (points / 100) of the network's card
    minus the roll-out policy's card's (SRP's, or QP's when QP rolled out), and the
    share of decisions where they agree."""
    q = net(held["x"][:, : net.inputs] * PLAY_SCALE[: net.inputs])[:, 0]
    starts = np.searchsorted(held["group"], np.arange(held["group"][-1] + 2))
    lo = starts[:-1]
    pick = np.array([np.argmax(q[a:b]) for a, b in zip(lo, starts[1:], strict=True)])
    y = held["y"]
    return {
        "gain": float((y[lo + pick] - y[lo + held["srp"]]).mean()),
        "agree": float((pick == held["srp"]).mean()),
    }


def curve_point(net: MLP, games: int, seed: int, opponent: str = "BIS+WRP") -> float:
    """BIS+QP(net)'s win rate in ``games`` duplicate games against ``opponent``."""
    from bots.base import Bot
    from bots.learned.qp import QP
    from bots.registry import make_bot
    from lab.tournaments.tournament import TournamentConfig, play_game

    config = TournamentConfig(
        ns="BIS+QP", ew=opponent, games=games, seed=f"{seed}/qp-curve", duplicate=True
    )
    a = Bot(make_bot("BIS+SRP").bidder, QP(net))
    b = make_bot(opponent)
    wins = sum(play_game(config, g, a, b)["winner"] == 0 for g in range(games))
    return wins / games


def fit(
    data: dict[str, np.ndarray],
    *,
    seed: int,
    features: str,
    hidden: tuple[int, ...],
    epochs: int,
    checkpoint: Path,
    batch: int = 1024,
    lr: float = 1e-3,
    advantage: float = 1.0,
    curve_games: int = 0,
    points: int = 1,
    held: dict[str, np.ndarray] | None = None,
    progress: TextIO | None = None,
    init: MLP | None = None,
    extra: dict[str, Any] | None = None,
) -> tuple[MLP, dict[str, Any]]:
    """Fit the value network; ``batch`` decisions (all their cards) a step; from
    the weights of ``init`` if given (of the same shape), else seeded ones.
    ``extra``: more settings recorded (and checked on resuming)."""
    if features not in FEATURE_SETS:
        raise TrainError(f"features must be one of {', '.join(FEATURE_SETS)}")
    if epochs < 1 or len(data["y"]) < 2:
        raise TrainError("need data and at least one epoch")
    t = torch()
    inputs = FEATURE_SETS[features]
    x, y, group = data["x"], data["y"], data["group"]
    starts = np.searchsorted(group, np.arange(group[-1] + 2))
    n_dec = len(starts) - 1
    config = {
        "kind": "qp-cards",
        "seed": seed,
        "features": features,
        "hidden": list(hidden),
        "batch": batch,
        "lr": lr,
        "advantage": advantage,
        "decisions": int(n_dec),
        "rows": int(len(y)),
        "curve_games": curve_games,
        "points": points,
        **(extra or {}),
    }
    net = make_net((inputs, *hidden, 1), seed)
    if init is not None:
        load_weights(net, init)
        config["init"] = init.checksum
    opt = t.optim.Adam(net.parameters(), lr=lr)
    history: dict[str, list[float]] = {
        "loss": [],
        "advantage_loss": [],
        "step": [],
        "curve": [],
        "held_gain": [],
        "held_agree": [],
    }
    start = 0
    state = load_checkpoint(checkpoint, config)
    if state is not None:
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        history, start = state["history"], state["epoch"]
    scale = t.from_numpy(PLAY_SCALE[:inputs].copy())
    steps = -(-n_dec // batch)
    every = -(-steps // max(1, points))

    def point(step: int) -> None:
        """A point of the learning curves (held-out gain over SRP, win rate)."""
        now = export(net)
        history["step"].append(step)
        if held is not None and len(held["y"]):
            g = gain_over_srp(now, held)
            history["held_gain"].append(g["gain"])
            history["held_agree"].append(g["agree"])
            bar.update(0, f"step {step}: held-out gain over the roll-out {g['gain']:+.4f}")
        if curve_games:
            history["curve"].append(curve_point(now, curve_games, seed))
            bar.update(0, f"step {step}: win rate vs BIS+WRP {history['curve'][-1]:.3f}")

    bar = Progress("steps", epochs * steps, start * steps, progress)
    for epoch in range(start, epochs):
        order = np.random.default_rng([seed, epoch]).permutation(n_dec)
        total = total_adv = 0.0
        for i in range(0, n_dec, batch):
            dec = np.sort(order[i : i + batch])
            lo, hi = starts[dec], starts[dec + 1]
            sizes = hi - lo
            rows = np.repeat(lo - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
            g = t.from_numpy(np.repeat(np.arange(len(dec)), sizes))
            xb = t.from_numpy(x[rows, :inputs]).float() * scale
            yb = t.from_numpy(y[rows])
            n_g = t.from_numpy(sizes.astype(np.float32))
            q = net(xb).squeeze(1)
            q_mean = t.zeros(len(dec)).index_add(0, g, q) / n_g
            y_mean = t.zeros(len(dec)).index_add(0, g, yb) / n_g
            loss = ((q - yb) ** 2).mean()
            adv = (((q - q_mean[g]) - (yb - y_mean[g])) ** 2).mean()
            opt.zero_grad()
            (loss + advantage * adv).backward()
            opt.step()
            total += loss.item() * len(dec)
            total_adv += adv.item() * len(dec)
            bar.update(1, f"epoch {epoch + 1} loss {loss.item():.4f} adv {adv.item():.4f}")
            k = i // batch + 1
            if k % every == 0 or k == steps:
                point(epoch * steps + k)
        history["loss"].append(total / n_dec)
        history["advantage_loss"].append(total_adv / n_dec)
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
    bar.close()
    info = {**config, "epochs": epochs, "history": history}
    return export(net, info), info


def situation_counts(types: np.ndarray) -> dict[str, int]:
    """Decisions by the decider's round type (``bots.round_types.RoundType``)."""
    from game.engine.round_types import RoundType

    counts = np.bincount(types.astype(np.int64), minlength=max(t.value for t in RoundType) + 1)
    return {t.name.lower(): int(counts[t.value]) for t in RoundType}


def plot_curves(
    history: dict[str, list[float]], path: str | Path, title: str, baseline: str = "SRP"
) -> None:
    """The learning curves against training steps: held-out gain over the card of
    ``baseline`` (the roll-out policy; points per decision) and the win rate
    against BIS+WRP, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4), dpi=100)
    steps = history["step"]
    if history["held_gain"]:
        a.plot(steps, [100 * g for g in history["held_gain"]], marker="o")
    a.axhline(0, color="grey", lw=0.8)
    a.set_title(f"held-out gain over {baseline}'s card")
    a.set_xlabel("step")
    a.set_ylabel("points per decision")
    if history["curve"]:
        b.plot(steps, [100 * c for c in history["curve"]], marker="o")
    b.axhline(50, color="grey", lw=0.8)
    b.set_title("BIS+QP vs BIS+WRP")
    b.set_xlabel("step")
    b.set_ylabel("win rate %")
    for ax in (a, b):
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
