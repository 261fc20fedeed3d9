"""Who led the trick that set a nil: the nil-cover audit of issue 25.

A tournament's game log keeps bids and tricks won, not the cards, so this
replays the games (each is reproducible from the tournament seed and its
index, :mod:`lab.tournaments.tournament`) and looks at every set nil: the first trick
the niler won, and who led it (the niler, the niler's partner, or an
opponent). A nil set on its own partner's lead is the coverer's failure that
SRP's nil cover is meant to avoid.

    python manage.py nil_sets --ns BIS+SRP --ew RB+SRP --games 2000 --seed 1 \
        --duplicate --workers 2 [--json FILE]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bots.base import Bot
from bots.registry import make_bot
from game.engine.actions import Action, Bid
from game.engine.match import Match
from game.engine.state import RoundState
from game.engine.view import SeatView
from lab.tournaments.pool import worker_pool
from lab.tournaments.tournament import TournamentConfig, play_match, wilson_interval

LEADERS = ("niler", "partner", "opponent")
BINS = 10


def set_nil_leader(r: RoundState, seat: int) -> str | None:
    """Who led the first trick ``seat`` (a niler) won: ``niler``, ``partner``,
    ``opponent``; None when the nil was made."""
    for t in r.tricks:
        if t.winner == seat:
            if t.leader == seat:
                return "niler"
            return "partner" if t.leader == seat ^ 2 else "opponent"
    return None


@dataclass
class NilSetCounts:
    """One side's nils (blind ones apart) and, of the set ones, who led the setting trick."""

    nils: int = 0
    set: int = 0
    led_by: dict[str, int] = field(default_factory=lambda: dict.fromkeys(LEADERS, 0))
    blind_nils: int = 0
    blind_set: int = 0
    # The bidder's own nil probability (BIS: the success curves) for each nil it
    # bid, by tenths: [nils, made, sum of the probabilities].
    bins: list[list[float]] = field(default_factory=lambda: [[0, 0, 0.0] for _ in range(BINS)])

    # Cards of the nil hands as dealt, by rank: a side suit's 2..A (three suits
    # pooled), then the spades' 2..A (the frequencies behind SRP's NILER_HOLDS).
    holds: list[int] = field(default_factory=lambda: [0] * 26)

    # Each predicted nil as (probability, made, bids before it in the round): what
    # the success curves' calibration (:mod:`lab.training.sc_calibration`) is fitted on.
    predictions: list[tuple[float, bool, int]] = field(default_factory=list)

    def add(self, other: NilSetCounts) -> None:
        self.predictions += other.predictions
        self.holds = [a + b for a, b in zip(self.holds, other.holds, strict=True)]
        self.nils += other.nils
        self.set += other.set
        self.blind_nils += other.blind_nils
        self.blind_set += other.blind_set
        for k in LEADERS:
            self.led_by[k] += other.led_by[k]
        for mine, theirs in zip(self.bins, other.bins, strict=True):
            for i in range(3):
                mine[i] += theirs[i]

    def add_prediction(self, probability: float, made: bool, position: int = 0) -> None:
        cell = self.bins[min(BINS - 1, int(probability * BINS))]
        cell[0] += 1
        cell[1] += made
        cell[2] += probability
        self.predictions.append((probability, made, position))

    def to_dict(self) -> dict[str, Any]:
        share = self.led_by["partner"] / self.set if self.set else None
        lo, hi = wilson_interval(self.led_by["partner"], self.set)
        n = sum(c[0] for c in self.bins)
        made = sum(c[1] for c in self.bins)
        predicted = {
            "nils": n,
            "predicted_made_rate": sum(c[2] for c in self.bins) / n if n else None,
            "observed_made_rate": made / n if n else None,
            "observed_ci95": list(wilson_interval(int(made), int(n))),
            "bins": [
                {"from": i / BINS, "to": (i + 1) / BINS, "nils": c[0], "made": c[1],
                 "mean_predicted": c[2] / c[0] if c[0] else None}
                for i, c in enumerate(self.bins)
            ],
        }  # fmt: skip
        # How much likelier a nil hand holds the card than a random hand (1/4 of it).
        likelier = [
            round(h / (self.nils * (3 if i < 13 else 1) / 4), 3) if self.nils else None
            for i, h in enumerate(self.holds)
        ]
        return {
            "niler_holds": {"side": likelier[:13], "spades": likelier[13:]},
            "predicted": predicted,
            "nils": self.nils,
            "set": self.set,
            "set_by_leader": dict(self.led_by),
            "set_on_partners_lead_share": share,
            "set_on_partners_lead_ci95": [lo, hi],
            "blind_nils": self.blind_nils,
            "blind_set": self.blind_set,
        }


def count_round(r: RoundState, seats: Iterable[int], counts: NilSetCounts) -> None:
    """Add the nils of ``seats`` in the finished round ``r`` to ``counts``."""
    if not r.rules.nil:
        return
    for seat in seats:
        if r.bids[seat] != 0:
            continue
        leader = set_nil_leader(r, seat)
        if r.blind[seat]:
            counts.blind_nils += 1
            counts.blind_set += leader is not None
            continue
        counts.nils += 1
        hand = r.hands_dealt[seat]
        while hand:
            low = hand & -hand
            hand ^= low
            c = low.bit_length() - 1
            counts.holds[c % 13 + (13 if c >= 39 else 0)] += 1
        if leader is not None:
            counts.set += 1
            counts.led_by[leader] += 1


def replay_game(
    config: TournamentConfig, index: int, bot_a: Bot, bot_b: Bot
) -> tuple[NilSetCounts, NilSetCounts]:
    """Play game ``index`` as :func:`lab.tournaments.tournament.play_game` does
    (:func:`~lab.tournaments.tournament.play_match`); the nil counts of side A and side B."""
    predicted: dict[tuple[int, int], tuple[float, int]] = {}

    def note_nil(match: Match, seat: int, view: SeatView, action: Action, bot: Bot) -> None:
        decide = getattr(bot.bidder, "decide", None)
        if isinstance(action, Bid) and action.tricks == 0 and not action.blind and decide:
            # The probability the bidder bid this nil with (decide is deterministic).
            before = sum(1 for b in view.bids if b is not None)
            predicted[len(match.rounds) - 1, seat] = (decide(view)[1]["nil_probability"], before)

    match, _, swapped = play_match(config, index, bot_a, bot_b, before_apply=note_nil)
    a_seats, b_seats = ((1, 3), (0, 2)) if swapped else ((0, 2), (1, 3))
    a, b = NilSetCounts(), NilSetCounts()
    for i, r in enumerate(match.rounds):
        if r.result is None:
            continue
        count_round(r, a_seats, a)
        count_round(r, b_seats, b)
        for seat in range(4):
            if (i, seat) in predicted:
                side = a if seat in a_seats else b
                side.add_prediction(predicted[i, seat][0], r.tricks_won[seat] == 0,
                                    predicted[i, seat][1])  # fmt: skip
    return a, b


_worker: dict[str, Any] = {}


def _init(config: TournamentConfig) -> None:
    _worker["config"] = config
    _worker["bots"] = (make_bot(config.ns), make_bot(config.ew))


def _one(index: int) -> tuple[NilSetCounts, NilSetCounts]:
    return replay_game(_worker["config"], index, *_worker["bots"])


def _all(config: TournamentConfig, workers: int) -> Iterator[tuple[NilSetCounts, NilSetCounts]]:
    games = range(config.games)
    if workers <= 1:
        _init(config)
        yield from map(_one, games)
        return
    with worker_pool(workers, _init, (config,)) as pool:
        yield from pool.imap_unordered(_one, games, chunksize=4)


def side_counts(config: TournamentConfig, workers: int = 1) -> tuple[NilSetCounts, NilSetCounts]:
    """Side A's and side B's nil counts over the tournament's games."""
    config.validate()
    a, b = NilSetCounts(), NilSetCounts()
    for ga, gb in _all(config, workers):
        a.add(ga)
        b.add(gb)
    return a, b


def nil_sets(config: TournamentConfig, workers: int = 1) -> dict[str, Any]:
    """Both sides' nils over the tournament's games, and who led the setting tricks."""
    a, b = side_counts(config, workers)
    return {
        "config": config.to_dict(),
        "games": config.games,
        "sides": [{"bot": config.ns, **a.to_dict()}, {"bot": config.ew, **b.to_dict()}],
    }
