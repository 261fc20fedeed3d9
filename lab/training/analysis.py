"""Bid accuracy, set rate and the trick-minus-bid histogram of a tournament's games log.

From the per-game records of ``lab.tournaments.tournament`` (``*.games.jsonl``): for each
side, every regular (non-nil) bid's tricks minus bid, the share exactly made
(tricks == bid), the share over (tricks < bid), and the partnership's set rate
(contract tricks below the partners' summed regular bids, over the rounds in
which the partnership bid a contract).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any


def side_of_seat(seat: int, swapped: bool) -> int:
    """0 for bot A, 1 for bot B (A sits N/S unless the game is a swapped one)."""
    return (seat & 1) ^ (1 if swapped else 0)


def bid_stats(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
    diffs: list[Counter[int]] = [Counter(), Counter()]
    contracts, sets = [0, 0], [0, 0]
    for g in games:
        for rd in g["rounds"]:
            bids, tricks = rd["bids"], rd["tricks"]
            for p in (0, 1):
                side = side_of_seat(p, g["swapped"])
                seats = (p, p + 2)
                contract = sum(bids[s] for s in seats if bids[s])
                for s in seats:
                    if bids[s]:
                        diffs[side][tricks[s] - bids[s]] += 1
                if contract:
                    contracts[side] += 1
                    # Tricks of a nil bidder do not count toward the contract.
                    taken = sum(tricks[s] for s in seats if bids[s])
                    sets[side] += taken < contract
    out = []
    for side in (0, 1):
        n = sum(diffs[side].values())
        out.append(
            {
                "regular_bids": n,
                "exact": diffs[side][0] / n if n else None,
                "over": sum(v for k, v in diffs[side].items() if k < 0) / n if n else None,
                "mean_tricks_minus_bid": sum(k * v for k, v in diffs[side].items()) / n
                if n
                else None,
                "contracts": contracts[side],
                "set_rate": sets[side] / contracts[side] if contracts[side] else None,
                "histogram": {str(k): diffs[side][k] for k in sorted(diffs[side])},
            }
        )
    return out


def read_games(path: str | Path) -> list[dict[str, Any]]:
    """The game records of a tournament's games log (the header line skipped)."""
    games = []
    for line in Path(path).read_text().splitlines()[1:]:
        try:
            games.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a torn last line
    return sorted(games, key=lambda g: g["game"])


def plot_histograms(series: dict[str, dict[str, int]], path: str | Path, title: str) -> None:
    """Trick-minus-bid histograms side by side (shares of regular bids), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted({int(k) for h in series.values() for k in h})
    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=100)
    width = 0.8 / max(1, len(series))
    for i, (label, hist) in enumerate(series.items()):
        n = sum(hist.values())
        ys = [hist.get(str(k), 0) / n for k in keys]
        ax.bar([k + (i - (len(series) - 1) / 2) * width for k in keys], ys, width, label=label)
    ax.set_xlabel("tricks taken - bid (regular bids)")
    ax.set_ylabel("share of bids")
    ax.set_xticks(keys)
    ax.set_title(title)
    ax.legend()
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
