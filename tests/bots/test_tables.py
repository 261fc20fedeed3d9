"""The BIS probability tables: exact side-suit tables against the paper and Monte
Carlo, and the shipped nil tables."""

from __future__ import annotations

import json
from itertools import combinations, pairwise
from math import comb

import pytest

from bots import tables as pt
from bots.tables import (
    PAPER_EXCEPTIONS,
    PAPER_TABLES,
    SIDE,
    SPADE,
    TablesError,
    high_card_table,
    high_card_tables_monte_carlo,
    load_tables,
    nil_key,
    nil_rows,
    nil_set_probability_monte_carlo,
)


@pytest.mark.parametrize("cutters", [1, 2, 3])
def test_exact_tables_match_the_paper(cutters: int) -> None:
    exact = high_card_table(cutters)
    for n, row in enumerate(PAPER_TABLES[cutters]):
        for j, printed in enumerate(row):
            diff = abs(printed - exact[n][j])
            if (n, j) in PAPER_EXCEPTIONS[cutters]:
                # Documented in bots.tables: off by more than 0.005, not by much.
                assert 0.005 < diff < 0.01
            else:
                assert diff <= 0.005, (cutters, n, j, printed, exact[n][j])


def test_documented_exception_is_table_1_row_3() -> None:
    assert {1: set(), 2: {(3, 2)}, 3: set()} == PAPER_EXCEPTIONS
    assert high_card_table(2)[3][2] == pytest.approx(0.4947, abs=1e-4)


def test_closed_forms() -> None:
    # One card of the suit unseen: one specific opponent holds it 1/3 of the time.
    assert high_card_table(1)[12][0] == pytest.approx(1 / 3)
    # Three unseen, one in each hand.
    assert high_card_table(3)[10][0] == pytest.approx(13**3 / comb(39, 3))
    # Every row is a probability and each column needs more than the last.
    for k in (1, 2, 3):
        t = high_card_table(k)
        assert len(t) == 13
        for row in t:
            assert 1 >= row[0] >= row[1] >= row[2] >= 0
        for j in range(3):
            column = [t[n][j] for n in range(13)]
            assert column == sorted(column, reverse=True)
    # Fewer hands that may cut, fewer ways to be cut.
    for n in range(13):
        for j in range(3):
            assert high_card_table(1)[n][j] >= high_card_table(2)[n][j] - 1e-12
            assert high_card_table(2)[n][j] >= high_card_table(3)[n][j] - 1e-12


def test_exact_and_monte_carlo_agree() -> None:
    mc = high_card_tables_monte_carlo(samples=40_000, seed=7)
    for k in (1, 2, 3):
        exact = high_card_table(k)
        worst = max(abs(mc[k][n][j] - exact[n][j]) for n in range(13) for j in range(3))
        assert worst < 0.01  # 4 standard errors at 40,000 deals


def test_shipped_file_monte_carlo_agrees_with_exact() -> None:
    with open(pt.DEFAULT_PATH, encoding="utf-8") as f:
        data = json.load(f)
    for k in ("1", "2", "3"):
        exact = data["high_card"]["exact"][k]
        mc = data["high_card"]["monte_carlo"][k]
        assert (
            max(
                abs(a - b)
                for r, s in zip(exact, mc, strict=True)
                for a, b in zip(r, s, strict=True)
            )
            < 0.006
        )


def test_shipped_file_is_complete_and_versioned() -> None:
    t = load_tables()
    assert t is load_tables()  # cached
    assert t.seed == 1 and t.samples >= 100_000 and t.generated
    keys = [nil_key(kind, low, n) for kind, low, n in nil_rows()]
    assert len(keys) == len(set(keys)) == len(t.nil) == 1469
    assert set(keys) == set(t.nil)
    assert all(0.0 <= p <= 1.0 for p in t.nil.values())
    for k in (1, 2, 3):
        flat = [x for row in t.high_card[k] for x in row]
        assert flat == pytest.approx([x for row in high_card_table(k) for x in row])


def test_a_row_regenerates_exactly_from_its_seed() -> None:
    t = load_tables()
    for kind, lowest, count in [(SIDE, (10,), 1), (SPADE, (3, 7), 2), (SIDE, (2, 5, 9), 4)]:
        again = nil_set_probability_monte_carlo(kind, lowest, count, t.samples, t.seed)
        assert round(again, 6) == t.nil[nil_key(kind, lowest, count)]


def test_nil_lookup_special_cases() -> None:
    t = load_tables()
    assert t.nil_set_probability(SIDE, 0) == 0.0
    assert t.nil_set_probability(SPADE, 0) == 0.0
    assert t.nil_set_probability(SPADE, 0b1111) == 1.0  # a fourth spade denies nil
    assert t.nil_set_probability(SPADE, 1 << 12) == 1.0  # the bare ace of spades
    # The three lowest cards decide: K9543 is the row 345 with five cards.
    k9543 = sum(1 << r for r in (11, 7, 3, 2, 1))
    assert t.nil_set_probability(SIDE, k9543) == t.nil["side/345/5"] == 0.0


TOL = 0.01  # Monte Carlo noise allowance at 100,000 deals per row


@pytest.mark.parametrize("kind", [SIDE, SPADE])
def test_lower_cards_are_safer(kind: str) -> None:
    t = load_tables()

    def p(cards: tuple[int, ...], count: int) -> float:
        return t.nil[nil_key(kind, cards, count)]

    singles = [p((r,), 1) for r in range(13)]
    assert all(a <= b + TOL for a, b in pairwise(singles))
    assert singles[0] < 0.01 and singles[12] > 0.99
    # Lowering any one of our cards (keeping the set valid) never makes the nil worse.
    for size in (2, 3):
        for cards in combinations(range(13), size):
            counts = [size] if (size < 3 or kind == SPADE) else range(3, 16 - cards[-1])
            for count in counts:
                for i, r in enumerate(cards):
                    lower = r - 1
                    if lower < 0 or lower in cards:
                        continue
                    moved = tuple(sorted(cards[:i] + (lower,) + cards[i + 1 :]))
                    assert p(moved, count) <= p(cards, count) + TOL, (cards, moved, count)


def test_spades_are_less_safe_than_side_suits() -> None:
    # Partner cannot save a spade by cutting.
    t = load_tables()
    for cards, n in [("Q", 1), ("9", 1), ("5T", 2), ("247", 3)]:
        assert t.nil[f"spade/{cards}/{n}"] >= t.nil[f"side/{cards}/{n}"] - TOL


def test_command_line_writes_a_loadable_file(tmp_path, capsys) -> None:
    out = tmp_path / "pt.json"
    assert pt.main(["--seed", "3", "--samples", "50", "--output", str(out)]) == 0
    err = capsys.readouterr().err
    assert "1469/1469 rows" in err and "seed 3" in err
    t = load_tables(out)
    assert t.seed == 3 and t.samples == 50 and len(t.nil) == 1469


def test_missing_or_foreign_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(TablesError, match="missing"):
        load_tables(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(TablesError, match="regenerate"):
        load_tables(bad)
