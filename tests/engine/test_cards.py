"""Cards, hands and seats: text in and out."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.engine.cards import (
    FULL_DECK,
    SPADE_MASK,
    CardError,
    card_name,
    cards_of,
    format_card,
    format_hand,
    left_of,
    make_card,
    mask_of,
    parse_card,
    parse_hand,
    parse_seat,
    partner_of,
    partnership_of,
    rank_of,
    suit_of,
)

RANKS = "23456789TJQKA"
SUITS = "CDHS"
SYMBOLS = "♣♦♥♠"


@pytest.mark.parametrize("card", range(52))
def test_every_card_round_trips_through_text(card):
    text = format_card(card)
    assert len(text) == 2
    assert parse_card(text) == card
    assert parse_card(text.lower()) == card
    assert parse_card(f"  {text} ") == card
    # The suit symbol form names the same card.
    assert parse_card(text[0] + SYMBOLS[SUITS.index(text[1])]) == card


@pytest.mark.parametrize("card", range(52))
def test_card_numbering_is_suit_times_13_plus_rank(card):
    text = format_card(card)
    assert RANKS.index(text[0]) == rank_of(card) == card % 13
    assert SUITS.index(text[1]) == suit_of(card) == card // 13
    assert make_card(rank_of(card), suit_of(card)) == card


@pytest.mark.parametrize(
    "text, card",
    [
        ("AS", 51),
        ("2C", 0),
        ("TD", 21),
        ("td", 21),
        ("10h", 34),
        ("10H", 34),
        ("Q♠", 49),
        ("q♠", 49),
        ("K♥", 37),
        ("3♦", 14),
        ("A♣", 12),
        ("2S", 39),
    ],
)
def test_parse_card_examples(text, card):
    assert parse_card(text) == card


def test_ten_is_written_t_even_when_parsed_from_10():
    assert format_card(parse_card("10s")) == "TS"


@pytest.mark.parametrize(
    "bad", ["", "A", "ASS", "1S", "11S", "XS", "AX", "S A", "ZZ", "10", "♠Q", "0S", "A S"]
)
def test_bad_card_text_raises_card_error_with_message(bad):
    with pytest.raises(CardError) as e:
        parse_card(bad)
    assert repr(bad) in str(e.value)
    assert "AS" in str(e.value)  # tells the reader how to write a card


@pytest.mark.parametrize("bad", [None, 51, b"AS", ["AS"]])
def test_non_string_is_not_a_card(bad):
    with pytest.raises(CardError, match="is not a card"):
        parse_card(bad)


@pytest.mark.parametrize("bad", [-1, 52, 100])
def test_format_card_rejects_numbers_outside_the_deck(bad):
    with pytest.raises(CardError, match="not a card number"):
        format_card(bad)


def test_card_error_is_a_value_error():
    assert issubclass(CardError, ValueError)


def test_card_names_for_people():
    assert card_name(51) == "ace of spades"
    assert card_name(0) == "two of clubs"
    assert card_name(parse_card("TD")) == "ten of diamonds"


def test_format_hand_orders_spades_first_high_to_low():
    assert format_hand(parse_hand("2C AS KS td")) == "AS KS TD 2C"
    assert format_hand(parse_hand("2C 2D 2H 2S")) == "2S 2H 2D 2C"
    assert format_hand(0) == ""
    assert format_hand(FULL_DECK).split() == [
        r + s for s in reversed(SUITS) for r in reversed(RANKS)
    ]


def test_parse_hand_accepts_commas_spaces_and_any_form():
    assert parse_hand("AS,KS, 10h  Q♠ 2c") == mask_of(
        [parse_card(t) for t in ("AS", "KS", "TH", "QS", "2C")]
    )
    assert parse_hand("") == 0
    assert parse_hand(format_hand(SPADE_MASK)) == SPADE_MASK


@pytest.mark.parametrize("text", ["AS AS", "AS, as", "TS 10S", "Q♠ QS", "2C 3C 2c"])
def test_a_card_twice_in_a_hand_is_rejected(text):
    with pytest.raises(CardError, match="appears twice"):
        parse_hand(text)


def test_a_bad_card_in_a_hand_is_rejected():
    with pytest.raises(CardError, match="'XS'"):
        parse_hand("AS XS")


@given(st.integers(min_value=0, max_value=FULL_DECK))
def test_any_hand_round_trips(mask):
    assert parse_hand(format_hand(mask)) == mask
    assert mask_of(cards_of(mask)) == mask
    assert cards_of(mask) == sorted(cards_of(mask))
    assert len(cards_of(mask)) == mask.bit_count()


@pytest.mark.parametrize(
    "text, seat",
    [("N", 0), ("e", 1), ("S", 2), ("w", 3), ("North", 0), ("east", 1), ("SOUTH", 2),
     ("West", 3), (" W ", 3), (0, 0), (1, 1), (2, 2), (3, 3)],
)  # fmt: skip
def test_parse_seat(text, seat):
    assert parse_seat(text) == seat


@pytest.mark.parametrize("bad", ["", "X", "No", "Northeast", "0", -1, 4, True, None, 1.0])
def test_bad_seat_raises_card_error(bad):
    with pytest.raises(CardError, match="is not a seat"):
        parse_seat(bad)


def test_seat_relations():
    assert [partner_of(s) for s in range(4)] == [2, 3, 0, 1]
    assert [left_of(s) for s in range(4)] == [1, 2, 3, 0]  # clockwise N, E, S, W
    assert [partnership_of(s) for s in range(4)] == [0, 1, 0, 1]
