"""Probability tables (the paper's PT) for the BIS bidder.

Two kinds of table, both about one suit at a time (section 4 of the paper):

**Side-suit high-card tables** (paper Table 1, and Tables 5 and 6 in appendix
A). We hold ``n`` cards of a suit; the other ``13 - n`` lie among the 39
unseen cards, dealt 13/13/13 to the three other hands. Column ``j`` (0, 1, 2)
is the probability that every hand that might cut holds more than ``j`` cards
of the suit, i.e. that the suit's trick ``j + 1`` cannot be cut:

- Table 1 (2 cutters, the usual case): both opponents hold more than ``j``;
  partner gets whatever is left.
- Table 5 (1 cutter, an opponent bid nil): one specific opponent holds more
  than ``j``; the other two hands are unconstrained.
- Table 6 (3 cutters, cutthroat): all three other hands hold more than ``j``.

These have a closed form (multivariate hypergeometric: the probability that
the three hands hold ``a, b, c`` cards of the suit is
``C(13,a) C(13,b) C(13,c) / C(39, 13-n)``), computed exactly by
:func:`high_card_table`; :func:`high_card_table_monte_carlo` is the seeded
cross-check the paper itself used.

Note on the paper's printed figures: every entry of Tables 1, 5 and 6 agrees
with the exact values within 0.005 except one. Table 1 row 3, column "> 2"
is printed 0.489; the model gives 0.4947 (the Monte Carlo cross-check agrees
with the exact value, and the neighbouring entries of the paper agree within
0.002), so the printed figure is off by 0.0057 -- a Monte Carlo outlier (3.5
standard errors at the paper's 100K deals) or a typo. It is listed in
``PAPER_EXCEPTIONS``. The next largest differences are 0.0031 (Table 5 rows
3 and 6, column "> 2") and 0.0027 (Table 5 row 12, printed 0.336 where the
exact value is 13/39 = 0.3333). Table 1 stops at row 11, Table 5 at row 12 and
Table 6 at row 10; the rows left out are all zeros, and the exact tables here
have all 13 rows (0..12 cards held).

**Nil tables** (section 4.2 and footnote 12). For a suit in which we hold
``count`` cards whose lowest one, two or three are ``lowest``, the probability
of the complement of the *cnil(suit)* event ("on every trick of the suit both
opponents can play under our card and partner cannot cover it"), i.e. the
probability that the nil is set in this suit. Only the cards below, between
and above our lowest three matter, so ``(lowest, count)`` fixes the row: the
number of unseen cards above our third card is ``12 - rank3 - (count - 3)``.
With our ``j``-th lowest card ``c`` (``j`` = 1, 2, 3) the nil is set on trick
``j`` of the suit when

- each opponent holds fewer than ``j`` cards of the suit (it is out of the
  suit by then, or void: it discards) or at least ``j`` cards below ``c``
  (it can still play under us), and
- partner holds fewer than ``j`` cards above ``c`` (cannot cover), and, in a
  side suit, at least ``j`` cards of the suit (cannot cut).

``¬cnil`` is the union over ``j`` = 1 .. min(count, 3). In spades partner
cannot cover by cutting, so the "at least ``j`` cards" condition on partner is
dropped, and a fourth spade denies nil (set probability 1, not tabulated).
A void suit can never set the nil (probability 0, not tabulated).

Two readings of the paper's wording, documented here:

- Case 3(b) says partner "isn't singleton/void *or* has no two higher cards";
  read literally a void partner (who, by assumption 4 of footnote 12, always
  cuts) would let the nil be set, contradicting case 2. We read it as *and*,
  like case 2.
- Case 4(b) says partner "has no higher card than" the third card, where the
  pattern of cases 2 and 3(b) (partner covers trick ``j`` only while she still
  holds a card above ours after covering the ``j - 1`` earlier tricks) gives
  "fewer than three higher cards". We use the pattern, so every trick ``j``
  is treated alike.

Against the paper's nil walk-through (Figure 1 hand): the singleton Q of a
side suit is safe 0.5714 exactly under this model (0.5717 in the shipped
table; the paper says 0.578). A-Q doubleton: the paper says "< 0.001, non-zero
only due to the chance that partner is void", but partner alone is void
C(26,11)/C(39,11) = 0.46% of the time, and with a bare K partner covers the Q
and then cuts the A; the model gives 0.0084 (exact), so the paper's figure
cannot come from its own stated events. Tests assert < 0.01 there.

Each row is estimated by Monte Carlo, dealing the other ``13 - count`` cards of
the suit to the three other hands uniformly (13/13/13 of the 39 unseen cards),
with a generator seeded from the global seed and the row's key, so every row is
reproducible on its own.

Run ``python manage.py build_tables --seed 1 --deals 100000`` (or
``python -m bots.tables --seed 1 --samples 100000 --output bots/data/pt.json``)
to regenerate the shipped data file, which records the seed, the deals per row
and the generator; :func:`load_tables` reads it (cached).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import combinations
from math import comb
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "spades-bis-probability-tables"
VERSION = 1
DEFAULT_PATH = Path(__file__).resolve().parent / "data" / "pt.json"
RANKS = "23456789TJQKA"
SIDE, SPADE = "side", "spade"
KINDS = (SIDE, SPADE)

# The paper's printed tables (Table 1: 2 cutters, Table 5: 1, Table 6: 3),
# rows = cards held in the suit. Parenthesised entries are printed as values.
PAPER_TABLES: dict[int, list[tuple[float, float, float]]] = {
    2: [
        (0.997, 0.966, 0.817), (0.994, 0.942, 0.733), (0.990, 0.907, 0.624),
        (0.983, 0.855, 0.489), (0.970, 0.779, 0.350), (0.948, 0.678, 0.212),
        (0.915, 0.544, 0.095), (0.857, 0.381, 0.025), (0.774, 0.214, 0.0),
        (0.646, 0.074, 0.0), (0.462, 0.0, 0.0), (0.227, 0.0, 0.0),
    ],
    1: [
        (0.998, 0.983, 0.910), (0.997, 0.971, 0.866), (0.994, 0.954, 0.809),
        (0.992, 0.927, 0.733), (0.985, 0.891, 0.648), (0.974, 0.835, 0.546),
        (0.957, 0.761, 0.426), (0.928, 0.667, 0.308), (0.886, 0.546, 0.195),
        (0.819, 0.410, 0.100), (0.715, 0.252, 0.030), (0.561, 0.106, 0.0),
        (0.336, 0.0, 0.0),
    ],
    3: [
        (0.996, 0.949, 0.729), (0.992, 0.915, 0.605), (0.986, 0.862, 0.450),
        (0.974, 0.784, 0.275), (0.955, 0.672, 0.110), (0.924, 0.523, 0.0),
        (0.872, 0.338, 0.0), (0.790, 0.145, 0.0), (0.664, 0.0, 0.0),
        (0.480, 0.0, 0.0), (0.240, 0.0, 0.0),
    ],
}  # fmt: skip
# Paper figures this module documents as inconsistent with the model (see the module doc).
PAPER_EXCEPTIONS: dict[int, set[tuple[int, int]]] = {1: set(), 2: {(3, 2)}, 3: set()}

HighCardTable = list[list[float]]  # [n][j]


# ----- side-suit high-card tables --------------------------------------------


def _suit_split_probability(a: int, b: int, c: int) -> float:
    """P(the three other hands hold a, b, c cards of a suit with a+b+c unseen)."""
    m = a + b + c
    return comb(13, a) * comb(13, b) * comb(13, c) / comb(39, m)


def high_card_table(cutters: int) -> HighCardTable:
    """Exact table for 1, 2 or 3 hands that might cut: rows n = 0..12, columns > 0/1/2.

    Hand 0 of the split is the one hand that does not cut when ``cutters`` is 2
    (partner); with 1 cutter only hand 1 matters, with 3 all of them.
    """
    if cutters not in (1, 2, 3):
        raise ValueError("cutters must be 1, 2 or 3")
    table: HighCardTable = []
    for n in range(13):
        m = 13 - n
        row = []
        for j in range(3):
            p = 0.0
            for a in range(min(m, 13) + 1):
                for b in range(min(m - a, 13) + 1):
                    c = m - a - b
                    if c > 13:
                        continue
                    counts = (a, b, c)
                    watched = counts[3 - cutters :] if cutters < 3 else counts
                    if all(k > j for k in watched):
                        p += _suit_split_probability(a, b, c)
            row.append(p)
        table.append(row)
    return table


def _deal_owners(rng: np.random.Generator, m: int, samples: int) -> np.ndarray:
    """Owners (0, 1, 2) of ``m`` cards dealt uniformly into three hands of 13 of 39 slots.

    Card by card, each goes to a hand with probability proportional to its free
    slots: exactly a uniform 13/13/13 deal of the 39 unseen cards.
    """
    owners = np.empty((samples, m), dtype=np.int8)
    free0 = np.full(samples, 13, dtype=np.int16)
    free1 = np.full(samples, 13, dtype=np.int16)
    for i in range(m):
        u = rng.integers(0, 39 - i, size=samples, dtype=np.int16)
        o = (u >= free0).astype(np.int8) + (u >= free0 + free1).astype(np.int8)
        owners[:, i] = o
        free0 -= o == 0
        free1 -= o == 1
    return owners


def high_card_table_monte_carlo(cutters: int, samples: int, seed: int) -> HighCardTable:
    """The same table estimated from ``samples`` seeded random deals per row."""
    tables = high_card_tables_monte_carlo(samples, seed)
    return tables[cutters]


def high_card_tables_monte_carlo(samples: int, seed: int) -> dict[int, HighCardTable]:
    """All three tables (1, 2, 3 cutters) from the same deals, ``samples`` per row."""
    out: dict[int, HighCardTable] = {1: [], 2: [], 3: []}
    for n in range(13):
        rng = np.random.default_rng([seed, 0xCA7, n])
        owners = _deal_owners(rng, 13 - n, samples)
        held = np.stack([(owners == h).sum(axis=1) for h in range(3)], axis=1)
        for cutters in (1, 2, 3):
            watched = held[:, 3 - cutters :]
            out[cutters].append([float((watched > j).all(axis=1).mean()) for j in range(3)])
    return out


# ----- nil tables ----------------------------------------------------------------


def nil_key(kind: str, lowest: tuple[int, ...], count: int) -> str:
    """'side/345/5': kind, our lowest (up to three) ranks as letters, cards held."""
    return f"{kind}/{''.join(RANKS[r] for r in lowest)}/{count}"


def nil_rows() -> Iterator[tuple[str, tuple[int, ...], int]]:
    """Every row of the nil tables: (kind, lowest ranks ascending, count)."""
    for kind in KINDS:
        for size in (1, 2, 3):
            for lowest in combinations(range(13), size):
                if size < 3:
                    yield kind, lowest, size
                    continue
                top = 3 if kind == SPADE else 3 + (12 - lowest[-1])
                for count in range(3, top + 1):
                    yield kind, lowest, count


def _unseen_ranks(lowest: tuple[int, ...], count: int) -> list[int]:
    """Ranks of the suit's cards we do not hold (our extra cards: the highest ones).

    Which of the cards above our third we hold does not change the row: only how
    many unseen cards lie above it.
    """
    ours = set(lowest)
    extra = count - len(lowest)
    for r in range(12, -1, -1):
        if extra == 0:
            break
        if r not in ours and r > lowest[-1]:
            ours.add(r)
            extra -= 1
    if extra:
        raise ValueError(f"{count} cards cannot have lowest {lowest}")
    return [r for r in range(13) if r not in ours]


def nil_set_probability_monte_carlo(
    kind: str, lowest: tuple[int, ...], count: int, samples: int, seed: int
) -> float:
    """P(not cnil(suit)) for one row, from ``samples`` seeded deals (see module doc)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be {SIDE!r} or {SPADE!r}")
    if list(lowest) != sorted(set(lowest)) or len(lowest) != min(count, 3):
        raise ValueError("lowest must be our min(count, 3) lowest ranks, ascending")
    if kind == SPADE and count >= 4:
        return 1.0
    unseen = np.array(_unseen_ranks(lowest, count), dtype=np.int16)
    rng = np.random.default_rng([seed, KINDS.index(kind), count, *lowest, 0x4E11])
    owners = _deal_owners(rng, len(unseen), samples)
    hands = [owners == h for h in range(3)]  # 0 partner, 1 and 2 the opponents
    totals = [h.sum(axis=1) for h in hands]
    set_any = np.zeros(samples, dtype=bool)
    for j, card in enumerate(lowest, start=1):
        below = unseen < card
        above = unseen > card
        event = hands[0][:, above].sum(axis=1) < j
        if kind == SIDE:
            event &= totals[0] >= j
        for opp in (1, 2):
            event &= (totals[opp] < j) | (hands[opp][:, below].sum(axis=1) >= j)
        set_any |= event
    return float(set_any.mean())


def generate_nil_tables(
    samples: int, seed: int, progress: Callable[[int, int], None] | None = None
) -> dict[str, float]:
    rows = list(nil_rows())
    out: dict[str, float] = {}
    for i, (kind, lowest, count) in enumerate(rows):
        out[nil_key(kind, lowest, count)] = round(
            nil_set_probability_monte_carlo(kind, lowest, count, samples, seed), 6
        )
        if progress is not None:
            progress(i + 1, len(rows))
    return out


# ----- the data file ----------------------------------------------------------------


def build(
    samples: int,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
    generator: str = "python -m bots.tables",
) -> dict:
    """Everything the data file holds, as a JSON-ready dict."""
    start = time.monotonic()
    mc = high_card_tables_monte_carlo(samples, seed)
    nil = generate_nil_tables(samples, seed, progress)
    return {
        "format": FORMAT,
        "version": VERSION,
        "generator": generator,
        "generated": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seed": seed,
        "samples": samples,
        "seconds": round(time.monotonic() - start, 1),
        "high_card": {
            "description": "P(every hand that may cut holds > 0/1/2 cards of the suit); "
            "rows: cards we hold (0..12); keys: number of hands that may cut",
            "exact": {str(k): high_card_table(k) for k in (1, 2, 3)},
            "monte_carlo": {str(k): v for k, v in mc.items()},
        },
        "nil": {
            "description": "P(not cnil(suit)): the nil is set in this suit; key "
            "kind/lowest ranks/cards held; spades with 4+ cards: 1, voids: 0",
            "samples_per_row": samples,
            "rows": nil,
        },
    }


class TablesError(RuntimeError):
    """The probability-table file is missing or not one this code can read."""


@dataclass(frozen=True)
class ProbabilityTables:
    """The loaded tables. ``high_card[cutters][n][j]``; ``nil`` by :func:`nil_key`."""

    high_card: dict[int, HighCardTable]
    nil: dict[str, float]
    seed: int
    samples: int
    generated: str

    def nil_set_probability(self, kind: str, suit_holding: int) -> float:
        """P(the nil is set in this suit) for a 13-bit holding (bit r = rank r)."""
        count = suit_holding.bit_count()
        if count == 0:
            return 0.0
        if kind == SPADE and count >= 4:
            return 1.0
        lowest = []
        h = suit_holding
        while h and len(lowest) < 3:
            low = h & -h
            lowest.append(low.bit_length() - 1)
            h ^= low
        return self.nil[nil_key(kind, tuple(lowest), count)]


def load_tables(path: str | Path | None = None) -> ProbabilityTables:
    """Read the data file (default ``bots/data/pt.json``); cached per path."""
    return _load(str(Path(path) if path is not None else DEFAULT_PATH))


@functools.lru_cache(maxsize=4)
def _load(path: str) -> ProbabilityTables:
    try:
        with open(path, encoding="utf-8") as f:
            data: dict[str, Any] = json.load(f)
    except FileNotFoundError:
        raise TablesError(
            f"{path} is missing: run `python manage.py build_tables --output {path}`"
        ) from None
    except json.JSONDecodeError as e:
        raise TablesError(f"{path} is not valid JSON: {e}") from None
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise TablesError(f"{path} is not a version {VERSION} {FORMAT} file: regenerate it")
    return ProbabilityTables(
        high_card={int(k): v for k, v in data["high_card"]["exact"].items()},
        nil=dict(data["nil"]["rows"]),
        seed=data["seed"],
        samples=data["samples"],
        generated=data["generated"],
    )


def write(data: dict, path: str | Path) -> None:
    """Write a :func:`build` result to ``path`` atomically and drop the cached copy."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    _load.cache_clear()


def compare_rows(data: dict, path: str | Path) -> dict[str, Any]:
    """How a :func:`build` result differs from the file at ``path`` (same seed: identical).

    Returns the number of nil rows compared, those that differ, the largest
    difference of a nil row and of a Monte Carlo high-card entry, and the
    file's seed and deals per row.
    """
    with open(path, encoding="utf-8") as f:
        old = json.load(f)
    new_rows, old_rows = data["nil"]["rows"], old["nil"]["rows"]
    keys = set(new_rows) | set(old_rows)
    differ = [k for k in keys if new_rows.get(k) != old_rows.get(k)]
    nil_max = max((abs(new_rows[k] - old_rows[k]) for k in keys
                   if k in new_rows and k in old_rows), default=0.0)  # fmt: skip
    mc_max = 0.0
    for cutters, table in data["high_card"]["monte_carlo"].items():
        other = old["high_card"]["monte_carlo"].get(cutters, [])
        for row, old_row in zip(table, other, strict=False):
            mc_max = max([mc_max, *(abs(a - b) for a, b in zip(row, old_row, strict=False))])
    return {"rows": len(keys), "differ": len(differ), "nil_max_diff": nil_max,
            "high_card_max_diff": mc_max, "seed": old.get("seed"),
            "samples": old.get("samples")}  # fmt: skip


def _progress_line(done: int, total: int) -> None:
    width = 30
    filled = width * done // total
    sys.stderr.write(f"\rnil tables [{'#' * filled}{'.' * (width - filled)}] {done}/{total} rows")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bots.tables", description="Generate the BIS probability tables."
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--samples", type=int, default=100_000, help="deals per row")
    parser.add_argument("--output", type=Path, default=DEFAULT_PATH)
    args = parser.parse_args(argv)
    if args.samples < 1:
        parser.error("--samples must be at least 1")
    start = time.monotonic()
    data = build(args.samples, args.seed, _progress_line)
    write(data, args.output)
    sys.stderr.write(
        f"wrote {args.output}: seed {args.seed}, {args.samples} deals per row, "
        f"{len(data['nil']['rows'])} nil rows, {time.monotonic() - start:.1f}s\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
