"""The trick rules, written once in ``game.engine.tricks``, against the rule in words."""

from __future__ import annotations

import itertools
import random

from game.engine.cards import SPADES
from game.engine.tricks import BEATERS, BEATS, beaters, beats, trick_winner, winning_card


def _spelled_out(leader: int, cards: list[int]) -> tuple[int, int]:
    """The highest spade if any, else the highest card of the led suit."""
    spades = [c for c in cards if c // 13 == SPADES]
    pool = spades or [c for c in cards if c // 13 == cards[0] // 13]
    best = max(pool)
    return best, (leader + cards.index(best)) % 4


def test_every_trick_of_four_cards_of_a_small_deck() -> None:
    deck = [0, 5, 12, 13, 20, 26, 33, 39, 45, 51]  # low and high of every suit
    for cards in itertools.permutations(deck, 4):
        for leader in range(4):
            assert winning_card(leader, cards) == _spelled_out(leader, list(cards))
            assert trick_winner(leader, cards) == _spelled_out(leader, list(cards))[1]


def test_random_partial_tricks() -> None:
    rng = random.Random(7)
    for _ in range(20_000):
        cards = rng.sample(range(52), rng.randint(1, 4))
        leader = rng.randrange(4)
        assert winning_card(leader, cards) == _spelled_out(leader, cards)


def test_the_tables_agree_with_each_other() -> None:
    for best in range(52):
        for card in range(52):
            said = card // 13 == best // 13 and card > best or (card >= 39 and best < 39)
            assert beats(card, best) == BEATS[best][card] == said
            assert bool(BEATERS[best] >> card & 1) == said
        assert beaters(BEATERS[best] | (1 << best), best) == BEATERS[best]
