"""Seeded deals, identical on every machine and Python version.

A seed is hashed with BLAKE2b into a 512-bit number, which is read as a
permutation of the deck in the factorial number system (its bias is below
2**-280). Card ``order[i]`` goes to seat ``i % 4``. Nothing here depends on
``random``'s algorithms, whose streams Python does not promise to keep.

>>> hands = deal_hands("example")
>>> [h.bit_count() for h in hands], sum(hands) == (1 << 52) - 1
([13, 13, 13, 13], True)
"""

from __future__ import annotations

import hashlib
import secrets

from .cards import Hand, Seat

Hands = tuple[Hand, Hand, Hand, Hand]


def _seed_number(seed: int | str) -> int:
    digest = hashlib.blake2b(f"spades-deal/{seed}".encode(), digest_size=64).digest()
    return int.from_bytes(digest, "big")


def deal_order(seed: int | str) -> list[int]:
    """The deck shuffled by ``seed``."""
    x = _seed_number(seed)
    remaining = list(range(52))
    order = []
    for n in range(52, 0, -1):
        x, i = divmod(x, n)
        order.append(remaining.pop(i))
    return order


def deal_hands(seed: int | str) -> Hands:
    """Four 13-card hands (masks) for North, East, South, West."""
    order = deal_order(seed)
    hands = [0, 0, 0, 0]
    for i, card in enumerate(order):
        hands[i & 3] |= 1 << card
    return hands[0], hands[1], hands[2], hands[3]


def round_seed(match_seed: int | str, round_number: int) -> str:
    """The seed of one round's deal within a match (round_number from 1)."""
    return f"{match_seed}/round/{round_number}"


def first_dealer(match_seed: int | str) -> Seat:
    """The first dealer, drawn from the match seed."""
    return _seed_number(f"{match_seed}/first-dealer") % 4


def new_match_seed() -> str:
    """A fresh unguessable seed; kept server-side, never sent to a client."""
    return secrets.token_hex(16)
