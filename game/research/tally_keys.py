"""What a stored round or match adds to the tallies (pure: no Django, no models).

A *tally* is a count with a few sums, for one cell of one figure, for one
measured partnership, in one span of time. Every figure of the dashboard is a
sum of tallies, so the dashboard reads a few thousand tally rows instead of
millions of rounds (``game.research.tallies`` writes them, ``game.research.analytics*`` reads).

The key of a tally (:data:`KEY`) is its span (``d`` a day, ``w`` a week from
Monday, ``m`` a month, ``a`` all time, with the span's first day: a date range
reads whole months, then whole weeks, then the days at its ends), the rule set, whether the round is
a stand-in round, the *measured partnership* — its make-up, its bot key (see
``game.research.round_columns.side_bot``), the opponents' make-up, and whether the
opponents have the same bot key — the figure's cell (``figure``, ``who``,
``a``, ``b``), and last the study: the study condition of the table the round
or match was played at (``Table.study_condition``, 0 for no study) and whether
it is pilot data (``Table.pilot``), so that the dashboard filters by study and
condition and leaves pilot data out without reading a round; and the rating
bands of the measured partnership and of its opponents as the match started
(``band_ns``/``band_ew`` of the row, ``game.ratings.bands``; 0: no rated human),
so that it filters human seats by rating band. A round adds to
the cells of both of its partnerships; figures that count rounds rather than
partnership-rounds correct for rounds whose two partnerships are both measured
(``game.research.analytics_filters``).

The figures and their cells:

=======  ==================  =============================  ==============================
figure   who                 a                              b
=======  ==================  =============================  ==============================
``T``    ''                  a round type seen by either    0
                             seat of the partnership (once)
``N``    ''                  the round's nil category       0
                             (index in NIL_CATEGORIES)
``B``    ''                  the sum of the four bids       1 if the round had no nil
``P``    ''                  the partnership's points,      its nil bids (0-2)
                             bin of POINTS_BIN (lower edge)
``A``    'human' or the      a non-nil bid's tricks minus   0
         seat's bot name     the bid
``S``    'human' or the      the seat's bidding position    0 for a non-nil bid, else
         seat's bot name     (1 bids first, 4 the dealer)   its NIL_* code
``M``    the opponents'      1 if the partnership won       0
         bot key             the match
``W``    ''                  a round type the partnership   0
                             held in the match (once)
``Q``    the seat's actor    the seat's round type          0
         (seat_actor)
``D``    ''                  1 if the round's double-dummy  0
                             analysis is stored, 0 if it
                             could not be analysed
=======  ==================  =============================  ==============================

Sums (:data:`SUMS`): ``n`` (partnership-rounds, seat-rounds or partnership-matches),
``won`` (rounds in which the partnership outscored its opponents), ``made``
(contracts made), ``points``, ``nil_bids``, ``nil_made``.

The card play quality figures (``Q``, ``D``) come from a round's double-dummy
analysis (``game.replays``), which is stored after the round: they are added
when the analysis is written (``game.research.tallies.add_analysis``), not with the
round. ``Q`` counts seat-rounds and reads the six sums as :data:`QUALITY_SUMS`
(the points and tricks the seat's cards gave away against double-dummy play,
their squares for the intervals, and the cards); ``D`` counts partnership-rounds
(its other sums 0), so that the dashboard says how many rounds are analysed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import date, timedelta
from typing import Any

from game.research.round_columns import NIL_CATEGORIES, SEATS, actor

KEY = ("span", "start", "rules_key", "stand_in", "makeup", "bot", "opp_makeup", "same_bot",
       "figure", "who", "a", "b", "study_condition", "pilot", "band", "opp_band")  # fmt: skip
SUMS = ("n", "won", "made", "points", "nil_bids", "nil_made")

ROUND_TYPE, NIL_POSITION, BID_SUM, POINTS, SEAT, MATCH = "T", "N", "B", "P", "S", "M"
ACCURACY, MATCH_BY_TYPE = "A", "W"
QUALITY, ANALYSED = "Q", "D"
# What figure Q's sums hold, column by column of SUMS (per seat-round: its sums over its cards).
QUALITY_SUMS = ("n", "cards", "tricks_lost", "points_lost", "points_lost_sq", "tricks_lost_sq")
POINTS_BIN = 10  # points per bar of Figure 2
# A seat's outcome in the seat figure, for a nil: besides tricks minus bid for other bids.
NIL_MADE, NIL_SET, BLIND_NIL_MADE, BLIND_NIL_SET = 100, 101, 102, 103
ALL_TIME = date(1970, 1, 1)
HUMAN = "human"

Key = tuple[Any, ...]
Sums = list[int]
SIDES = ((0, "ns", "ew"), (1, "ew", "ns"))


def spans(day: date) -> tuple[tuple[str, date], ...]:
    """The spans a day's rounds count in: the day, its week, its month, all time."""
    monday = day - timedelta(days=day.weekday())
    return (("d", day), ("w", monday), ("m", day.replace(day=1)), ("a", ALL_TIME))


def nil_outcome(bid: int, tricks: int, blind: bool) -> int:
    """0 for a non-nil bid, else NIL_MADE, NIL_SET, BLIND_NIL_MADE or BLIND_NIL_SET."""
    if bid != 0:
        return 0
    if blind:
        return BLIND_NIL_MADE if tricks == 0 else BLIND_NIL_SET
    return NIL_MADE if tricks == 0 else NIL_SET


def _study(r: Mapping[str, Any]) -> tuple[int, bool]:
    """The key's last columns: study condition (0: none) and pilot (absent: neither)."""
    return int(r.get("study_condition") or 0), bool(r.get("pilot"))


def round_cells(r: Mapping[str, Any]) -> Iterator[tuple[Key, Sums]]:
    """The cells (key without the span) a stored round adds to, with its sums.

    ``r`` holds the round's columns (``RoundRecordRow``'s names).
    """
    study = _study(r)
    for side, key, sums in _round_cells(r):
        yield (*key, *study, *_bands(r, side)), sums


def _bands(r: Mapping[str, Any], side: str) -> tuple[int, int]:
    """The key's band and opp_band for ``side`` (absent: 0, no rated human)."""
    opp = "ew" if side == "ns" else "ns"
    return int(r.get(f"band_{side}") or 0), int(r.get(f"band_{opp}") or 0)


def _head(r: Mapping[str, Any], side: str, opp: str) -> Key:
    """A round cell's key from the rules to ``same_bot``, for partnership ``side``."""
    return (r["rules_key"], r["stand_in_round"], r[f"makeup_{side}"], r[f"bot_{side}"],
            r[f"makeup_{opp}"], r[f"bot_{side}"] == r[f"bot_{opp}"])  # fmt: skip


def _round_cells(r: Mapping[str, Any]) -> Iterator[tuple[str, Key, Sums]]:
    bids = [r[f"bid_{s}"] for s in SEATS]
    tricks = [r[f"tricks_{s}"] for s in SEATS]
    bid_sum = sum(b for b in bids if b > 0)
    category = NIL_CATEGORIES.index(r["nil_category"])
    for p, side, opp in SIDES:
        seats = (p, p + 2)
        head = _head(r, side, opp)
        points = r[f"points_{side}"]
        won = int(points > r[f"points_{opp}"])
        made = int(r[f"made_{side}"])
        nil_bids, nil_made = r[f"nil_bids_{side}"], r[f"nil_made_{side}"]
        for t in sorted({r[f"round_type_{SEATS[s]}"] for s in seats}):
            yield side, (*head, ROUND_TYPE, "", t, 0), [1, won, made, points, nil_bids, nil_made]
        yield (
            side,
            (*head, NIL_POSITION, "", category, 0),
            [1, won, made, points, nil_bids, nil_made],
        )
        yield side, (*head, BID_SUM, "", bid_sum, int(r["nil_category"] == NIL_CATEGORIES[-1])), [
            1, won, made, points, 0, 0]  # fmt: skip
        edge = (points // POINTS_BIN) * POINTS_BIN
        yield side, (*head, POINTS, "", edge, nil_bids), [1, won, made, points, nil_bids, nil_made]
        for s in seats:
            who = HUMAN if r["seat_kinds"][s] == "H" else (r[f"bot_{SEATS[s]}"] or "bot")
            position = (s - r["dealer"] - 1) % 4 + 1
            nil = nil_outcome(bids[s], tricks[s], r["blind_nils"][s] == "1")
            yield side, (*head, SEAT, who, position, nil), [1, 0, 0, 0, 0, 0]
            if bids[s] > 0:
                yield side, (*head, ACCURACY, who, tricks[s] - bids[s], 0), [1, 0, 0, 0, 0, 0]


def quality_cells(
    r: Mapping[str, Any], losses: Mapping[str, list[int]] | None
) -> Iterator[tuple[Key, Sums]]:
    """The card play quality cells of an analysed round: ``r`` its columns
    (``RoundRecordRow``'s names, the seats' stand-in moves among them), ``losses``
    its analysis's sums per seat N, E, S, W (``cards``, ``dd_points_lost``,
    ``dd_tricks_lost``: ``game.replays.analysis.seat_sums``), None for a round that
    could not be analysed (it adds to ``D`` only)."""
    study = _study(r)
    for p, side, opp in SIDES:
        head = _head(r, side, opp)
        bands = _bands(r, side)
        yield (*head, ANALYSED, "", int(losses is not None), 0, *study, *bands), [1, 0, 0, 0, 0, 0]
        if losses is None:
            continue
        for s in (p, p + 2):
            points, tricks = losses["dd_points_lost"][s], losses["dd_tricks_lost"][s]
            sums = [1, losses["cards"][s], tricks, points, points * points, tricks * tricks]
            t = r[f"round_type_{SEATS[s]}"]
            yield (*head, QUALITY, seat_actor(r, s), t, 0, *study, *bands), sums


def seat_actor(r: Mapping[str, Any], s: int) -> str:
    """Who played seat ``s`` for the quality figure: 'human', 'human+stand-in' (a
    stand-in made one of its moves: kept apart) or the bot's name."""
    kind = r["seat_kinds"][s]
    if kind != "H":
        return r[f"bot_{SEATS[s]}"] or "bot"
    return actor(kind, r[f"stand_in_{SEATS[s]}"], r["stand_in_bids"][s] == "1")


def match_cells(m: Mapping[str, Any]) -> Iterator[tuple[Key, Sums]]:
    """The cells a stored match result adds to (``MatchResult``'s columns, with the
    partnerships' bot keys as ``bot_ns``/``bot_ew``)."""
    study = _study(m)
    for side, key, sums in _match_cells(m):
        yield (*key, *study, *_bands(m, side)), sums


def _match_cells(m: Mapping[str, Any]) -> Iterator[tuple[str, Key, Sums]]:
    for p, side, opp in SIDES:
        head = (m["rules_key"], m["stand_in_rounds"] > 0, m[f"makeup_{side}"], m[f"bot_{side}"],
                m[f"makeup_{opp}"], m[f"bot_{side}"] == m[f"bot_{opp}"])  # fmt: skip
        won = int(m["winner"] == p)
        yield side, (*head, MATCH, m[f"bot_{opp}"], won, 0), [1, won, 0, 0, 0, 0]
        for t, held in enumerate(m[f"round_types_{side}"], start=1):
            if held == "1":
                yield side, (*head, MATCH_BY_TYPE, "", t, 0), [1, won, 0, 0, 0, 0]


def add(into: dict[Key, Sums], day: date, cells: Iterator[tuple[Key, Sums]]) -> None:
    """Add ``cells`` of something finished on ``day`` to ``into``, in each of its spans."""
    for key, sums in cells:
        for span, start in spans(day):
            full = (span, start, *key)
            have = into.get(full)
            if have is None:
                into[full] = list(sums)
            else:
                for i, v in enumerate(sums):
                    have[i] += v


def seat_sums(result: dict[str, Any]) -> dict[str, list[int]]:
    """Per seat (N, E, S, W): the points and the tricks its cards gave away in a
    round's double-dummy analysis (``game.replays.analysis``)."""
    points, tricks = [0, 0, 0, 0], [0, 0, 0, 0]
    for c in result["cards"]:
        s = "NESW".index(c["seat"])
        points[s] += c["points_lost"]
        tricks[s] += c["tricks_lost"]
    return {"dd_points_lost": points, "dd_tricks_lost": tricks}
