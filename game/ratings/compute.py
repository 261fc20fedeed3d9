"""Who a finished match rates, and the update: pure, no database.

The model is openskill's Plackett-Luce (Weng and Lin 2011), which rates each
individual from team results: partners share a side's result, the update is
split by each one's uncertainty. A match rates every entrant at its four
seats: an account, a guest (by guest id) or a bot kind as configured. A kind
or person at two seats (two ``BIS+SRP`` opponents, say) gets the mean of its
seats' updates, which is the library's own update when they sit on one side.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from openskill.models import PlackettLuce

MODEL = PlackettLuce()  # mu 25, sigma 25/3, the library's defaults
SIDES = ((0, 2), (1, 3))  # N/S, E/W: the seats of MatchResult.winner's sides
# game.research.exports.IMPORTED_PREFIX (a test holds them equal; that module
# reaches this one through the move path): a guest of an imported match, played
# on another site, whose result is no rating of this one's.
IMPORTED_PREFIX = "import:"


class SeatLike(Protocol):
    position: int
    kind: str
    user_id: int | None
    guest_id: str
    guest_name: str
    bot_name: str


@dataclass(frozen=True)
class Entrant:
    """Who sat at a seat, as the ratings know them."""

    key: str  # Rating.key: u:<user id>, g:<guest id>, b:<bot name>
    kind: str  # Rating.Kind's value
    user_id: int | None = None
    guest_id: str = ""
    name: str = ""


def entrant_of(seat: SeatLike) -> Entrant | None:
    """The seat's entrant; None for a seat nobody can be rated by."""
    if seat.kind == "bot":
        return Entrant(f"b:{seat.bot_name}", "bot", name=seat.bot_name) if seat.bot_name else None
    if seat.user_id is not None:
        return Entrant(f"u:{seat.user_id}", "user", user_id=seat.user_id)
    if seat.guest_id and not seat.guest_id.startswith(IMPORTED_PREFIX):
        return Entrant(f"g:{seat.guest_id}", "guest", guest_id=seat.guest_id, name=seat.guest_name)
    return None


def rated_entrants(
    seats: Mapping[int, SeatLike], table_rated: bool, stand_in_rounds: int
) -> dict[int, Entrant] | None:
    """The entrant at each seat of a match that counts for ratings, or None.

    Not rated: a table whose study said so (``Table.rated``); a match with a
    stand-in round (a stand-in made a human's bid or more than the analyses'
    share of their cards, ``round_columns.STAND_IN_SHARE``: the analyses leave
    such matches out too); a match without a human (the league rates bots
    against each other; these ratings are the bots as people met them); and
    one with a seat nobody can be rated by (an imported match's players among
    them). Abandoned tables never end."""
    if not table_rated or stand_in_rounds > 0 or len(seats) != 4:
        return None
    entrants = {position: entrant_of(seat) for position, seat in seats.items()}
    if any(e is None for e in entrants.values()):
        return None
    if all(e.kind == "bot" for e in entrants.values() if e is not None):
        return None
    return {p: e for p, e in sorted(entrants.items()) if e is not None}


def new_rating() -> tuple[float, float]:
    return MODEL.mu, MODEL.sigma


def conservative(mu: float, sigma: float) -> float:
    """mu - 3 sigma: what the player is at least, with 99.7 % confidence."""
    return mu - 3 * sigma


def update(
    keys: Mapping[int, str], before: Mapping[str, tuple[float, float]], winner: int
) -> dict[str, tuple[float, float]]:
    """Each entrant's (mu, sigma) after a match ``winner`` (0: N/S, 1: E/W) won,
    from ``keys`` (the entrant's key at each seat) and their ratings ``before``."""
    teams: list[list[Any]] = [
        [MODEL.rating(*before[keys[p]]) for p in side] for side in SIDES
    ]  # fmt: skip
    ranks = [1.0, 2.0] if winner == 0 else [2.0, 1.0]
    rated = MODEL.rate(teams, ranks=ranks)
    seats: dict[str, list[tuple[float, float]]] = {}
    for side, team in zip(SIDES, rated, strict=True):
        for position, r in zip(side, team, strict=True):
            seats.setdefault(keys[position], []).append((r.mu, r.sigma))
    return {
        key: (sum(m for m, _ in got) / len(got), sum(s for _, s in got) / len(got))
        for key, got in seats.items()
    }


def won(keys: Mapping[int, str], key: str, winner: int) -> bool:
    """The entrant won: every seat it held was on the winning side."""
    return all(p in SIDES[winner] for p, k in keys.items() if k == key)
