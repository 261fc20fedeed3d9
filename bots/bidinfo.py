"""Bid-informed deal sampling: where the cards are, given who bid what.

AI Factory's "Bidding Inferences with Spades" (``shared/papers/001``) keeps,
for each position in the bidding order (1st to 4th bidder) and each bid (0 to
7, 8 and more folded into 7, nil counted as 0), the probability that this
bidder holds each of the 52 cards, counted over many dealt and bid hands.
We learn the same table from our own bots: deal random hands, let BIS bid all
four seats (scores 0-0, a seeded ``random.Random``), and count, per (position,
bid), how often each card was in the bidder's hand when play began (after a
blind nil exchange). A blind bid (blind nil) tells nothing about the hand:
it is not counted, and its bidder gets uniform weights.

Few samples (a bid of 7 by the first bidder, say) would make the table
choppy, so each cell is shrunk twice, with a pseudo-count ``alpha``: toward
the same bid pooled over positions, which is itself shrunk toward the uniform
13/52. Every row still sums to 13 cards.

Sampling (:class:`bots.sampling.WeightedSampler`): a deal of the unseen cards
is drawn with probability proportional to the product, over every unseen card,
of its holder's table probability for it. The constraints (hand counts, voids
shown, cards passed) hold exactly; the table only reweighs the deals that
satisfy them.

Average error (the article's figure): after the bidding, each seat's
inferred location of each card it cannot see, a distribution over the three
other seats, against the truth (one-hot): the mean absolute difference per
(card, seat). Uniform inference scores 4/9 = 44.4% (the article: "a fixed
inference of 33% ... an average error of 44%"; its learned tables 42.6%).
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from game.engine.cards import Hand, Seat
from game.engine.deal import deal_hands
from game.engine.rules import Rules
from game.engine.state import Phase, RoundState
from game.engine.view import SeatView, view_for

from .sampling import WeightedSampler

POSITIONS = 4  # 1st..4th bidder
BIDS = 8  # 0..7, 8+ folded into 7
MAX_BID = BIDS - 1
DEFAULT_ALPHA = 200.0  # pseudo-count of the shrinkage (in hands)
DEFAULT_BIDDER = "BIS+SRP"
DATA_FILE = Path(__file__).resolve().parent / "data" / "bidinfo.json"
FORMAT = 1

Progress = Callable[[int, int], None]


def bid_index(bid: int) -> int:
    """A bid's column in the table: 8 and more fold into 7; nil is 0."""
    return min(max(bid, 0), MAX_BID)


# ----- learning --------------------------------------------------------------------


def bid_round(deal_seed: str, dealer: Seat, bot: Any, rng: random.Random) -> RoundState:
    """A fresh round, bid (and passed) by ``bot`` at every seat, stopped where play begins."""
    r = RoundState(Rules(), dealer=dealer, hands=deal_hands(deal_seed))
    while r.phase is Phase.BIDDING or r.phase is Phase.PASSING:
        r.apply(bot.act(view_for(r, r.to_act), rng))
    return r


def count_bids(
    deals: int,
    seed: int | str,
    bot: Any,
    bot_name: str = DEFAULT_BIDDER,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Deal ``deals`` random hands, let ``bot`` (registered as ``bot_name``;
    the caller builds it, so this module needs no registry) bid them, count
    the cards held per (position, bid):
    ``{"holds": [4][8][52], "hands": [4][8], ...}``."""
    rng = random.Random(f"bidinfo/{seed}/bids")
    holds = np.zeros((POSITIONS, BIDS, 52), dtype=np.int64)
    hands = np.zeros((POSITIONS, BIDS), dtype=np.int64)
    blind = 0
    card_bits = np.arange(52, dtype=np.uint64)
    for i in range(deals):
        r = bid_round(f"bidinfo/{seed}/{i}", i % 4, bot, rng)
        for pos, seat in enumerate(r.bid_order):
            if r.blind[seat]:
                blind += 1
                continue
            b = bid_index(r.bids[seat])
            hands[pos, b] += 1
            held = (np.uint64(r.hands[seat]) >> card_bits) & np.uint64(1)
            holds[pos, b] += held.astype(np.int64)
        if progress is not None:
            progress(i + 1, deals)
    return {
        "format": FORMAT,
        "bidder": bot_name,
        "seed": seed,
        "deals": deals,
        "blind_bids_skipped": blind,
        "rules": "default Rules(), scores 0-0, dealer = deal number mod 4",
        "hands": hands.tolist(),
        "holds": holds.tolist(),
    }


def save(content: dict[str, Any], path: str | Path = DATA_FILE) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({k: v for k, v in content.items() if k not in ("hands", "holds")}, indent=1)
    # One row of 52 counts per line: small and readable in a diff.
    rows = ",\n".join(
        f'  "{key}": ' + json.dumps(content[key], separators=(",", ":"))
        for key in ("hands", "holds")
    )
    path.write_text(text.rstrip("}\n").rstrip() + ",\n" + rows + "\n}\n")


# ----- the table -------------------------------------------------------------------


class BidTable:
    """Card-location probabilities per (bidding position, bid): ``prob[pos, bid, card]``."""

    def __init__(self, content: dict[str, Any], alpha: float = DEFAULT_ALPHA) -> None:
        holds = np.asarray(content["holds"], dtype=float)
        hands = np.asarray(content["hands"], dtype=float)
        if holds.shape != (POSITIONS, BIDS, 52) or hands.shape != (POSITIONS, BIDS):
            raise ValueError("a bid table has holds [4][8][52] and hands [4][8]")
        if (holds > hands[:, :, None]).any() or (holds < 0).any():
            raise ValueError("a bid table cannot count a card in more hands than it saw")
        self.meta = {k: v for k, v in content.items() if k not in ("hands", "holds")}
        self.alpha = alpha
        self.hands = hands
        uniform = 13 / 52
        pooled = (holds.sum(axis=0) + alpha * uniform) / (hands.sum(axis=0)[:, None] + alpha)
        self.prob = (holds + alpha * pooled[None, :, :]) / (hands[:, :, None] + alpha)

    def row(self, position: int, bid: int) -> np.ndarray:
        return self.prob[position, bid_index(bid)]

    def weights_for(self, view: SeatView) -> dict[Seat, list[float]]:
        """Sampling weights for the seats other than ``view.seat``, by each
        seat's place in the bidding order and its bid (a blind bid, or no bid
        yet: uniform): the odds p / (1 - p) of the table's probability, over
        the uniform odds 1/3. Odds, not p: a hand of a fixed size drawn with
        odds weights has about the probabilities p as its card marginals (the
        conditional Bernoulli model), and the held-out error is lower."""
        out: dict[Seat, list[float]] = {}
        order = list(view.bid_order)
        for seat in range(4):
            if seat == view.seat:
                continue
            bid = view.bids[seat]
            if bid is None or view.blind[seat] or seat not in order:
                out[seat] = [1.0] * 52
                continue
            p = self.row(order.index(seat), bid)
            out[seat] = (p / (1.0 - p) * 3.0).tolist()  # odds, over the uniform odds 1/3
        return out


@lru_cache(maxsize=4)
def load(path: str | None = None, alpha: float = DEFAULT_ALPHA) -> BidTable:
    """The shipped table (``bots/data/bidinfo.json``), cached."""
    return BidTable(json.loads(Path(path or DATA_FILE).read_text()), alpha)


def bid_informed_sampler(view: SeatView, table: BidTable | None = None) -> WeightedSampler:
    """A sampler of the unseen cards for ``view``'s seat, weighted by the bid table."""
    table = table or load()
    return WeightedSampler.from_view(view, table.weights_for(view))


# ----- the article's average error ---------------------------------------------------


def location_error(view: SeatView, truth: list[Hand], weights: dict[Seat, list[float]] | None
                   ) -> tuple[float, float, int]:  # fmt: skip
    """Sums of |P(seat holds card) - truth| and of its square (Brier) over the
    unseen cards and the three other seats, and the number of terms."""
    sampler = WeightedSampler.from_view(view, weights)
    marg = sampler.marginals()
    total = squares = 0.0
    n = 0
    for seat, cards in marg.items():
        for c, p in cards.items():
            d = abs(p - (truth[seat] >> c & 1))
            total += d
            squares += d * d
            n += 1
    return total, squares, n


def average_error(
    table: BidTable,
    deals: int,
    seed: int | str,
    bot: Any,
    bot_name: str = DEFAULT_BIDDER,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The article's average error of card-location inference after the bidding
    by ``bot`` (registered as ``bot_name``), uniform against the table, on
    ``deals`` fresh deals (each seen by all four seats). Use a seed the table
    was not learned from."""
    rng = random.Random(f"bidinfo/{seed}/bids")
    uniform = learned = uniform_sq = learned_sq = 0.0
    terms = 0
    for i in range(deals):
        r = bid_round(f"bidinfo/{seed}/{i}", i % 4, bot, rng)
        for seat in range(4):
            view = view_for(r, seat)
            u, u2, n = location_error(view, r.hands, None)
            t, t2, _ = location_error(view, r.hands, table.weights_for(view))
            uniform += u
            learned += t
            uniform_sq += u2
            learned_sq += t2
            terms += n
        if progress is not None:
            progress(i + 1, deals)
    return {
        "seed": seed,
        "deals": deals,
        "bidder": bot_name,
        "terms": terms,
        "uniform": uniform / terms if terms else 0.0,
        "learned": learned / terms if terms else 0.0,
        "uniform_brier": uniform_sq / terms if terms else 0.0,
        "learned_brier": learned_sq / terms if terms else 0.0,
    }


class ProgressBar:
    """A one-line progress bar on a stream, redrawn at most 5 times a second."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.t0 = time.monotonic()
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 0.2 and done < total:
            return
        self.last = now
        frac = done / total if total else 1.0
        bar = "#" * int(frac * 30) + "." * (30 - int(frac * 30))
        rate = done / max(now - self.t0, 1e-9)
        left = (total - done) / rate if rate else 0.0
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total}  {rate:.0f}/s  ETA {left:.0f} s ")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()
