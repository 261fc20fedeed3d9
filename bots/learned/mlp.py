"""The forward pass of a small fully connected network in numpy, from shipped weights.

Training (``lab.training.train``, PyTorch) saves a network as an ``.npz`` of
float32 arrays ``w0, b0, w1, b1, ...`` (``w`` is in x out; ReLU between
layers, none after the last) and a ``meta`` JSON string: what it was trained
on, its seed, data size, losses, and the SHA-256 of the weights
(:func:`weights_checksum`), checked on loading. Playing needs numpy only.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parent.parent / "data"


class WeightsError(ValueError):
    """A weights file that cannot be used; ``str(e)`` says why."""


def weights_checksum(layers: list[tuple[np.ndarray, np.ndarray]]) -> str:
    """SHA-256 of the layers' float32 bytes, in order (shapes included)."""
    h = hashlib.sha256()
    for w, b in layers:
        for a in (w, b):
            a = np.ascontiguousarray(a, dtype=np.float32)
            h.update(repr(a.shape).encode())
            h.update(a.tobytes())
    return h.hexdigest()


class MLP:
    """``y = L_n(relu(... relu(L_0(x))))``; ``x`` is one row or a batch of rows."""

    def __init__(
        self, layers: list[tuple[np.ndarray, np.ndarray]], meta: dict[str, Any] | None = None
    ) -> None:
        if not layers:
            raise WeightsError("a network needs at least one layer")
        self.layers = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in layers]
        for (w, b), (w2, _) in zip(self.layers, self.layers[1:], strict=False):
            if w.shape[1] != b.shape[0] or w.shape[1] != w2.shape[0]:
                raise WeightsError("layer shapes do not chain")
        self.meta = dict(meta or {})

    @property
    def inputs(self) -> int:
        return self.layers[0][0].shape[0]

    @property
    def checksum(self) -> str:
        return weights_checksum(self.layers)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        h = np.asarray(x, np.float32)
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return h

    def save(self, path: str | Path) -> None:
        arrays: dict[str, Any] = {}
        for i, (w, b) in enumerate(self.layers):
            arrays[f"w{i}"], arrays[f"b{i}"] = w, b
        meta = {**self.meta, "sha256": self.checksum}
        arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
        with open(path, "wb") as f:  # np.savez would add .npz to a name without it
            np.savez(f, **arrays)


def read_mlp(path: str | Path) -> MLP:
    """The network in ``path``, its checksum checked against the one it was saved with."""
    try:
        with np.load(path, allow_pickle=False) as z:
            n = sum(1 for k in z.files if k.startswith("w"))
            layers = [(z[f"w{i}"], z[f"b{i}"]) for i in range(n)]
            meta = json.loads(str(z["meta"])) if "meta" in z.files else {}
    except (OSError, KeyError, ValueError) as e:
        raise WeightsError(f"{path}: not a network weights file ({e})") from None
    net = MLP(layers, meta)
    if meta.get("sha256") and meta["sha256"] != net.checksum:
        raise WeightsError(f"{path}: the weights do not match their recorded checksum")
    return net


@lru_cache(maxsize=16)
def load_mlp(path: str) -> MLP:
    """``read_mlp`` once per process and path (the bots share the shipped weights)."""
    return read_mlp(path)


def shipped(name: str) -> str:
    """The path of a shipped weights file in ``bots/data``."""
    return str(DATA / name)
