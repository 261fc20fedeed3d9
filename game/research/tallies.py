"""The tallies (``RoundTally``): the dashboard's counts, kept exact.

Stored tournaments (``game.research.storage``) and imports (``game.research.imports``) add to
the tallies in the transaction that stores their rows (:func:`add_rounds`,
:func:`add_matches`). A live move that finishes a match adds the match in its
own transaction (:func:`match_query`); a live round's end stores its round
row as not yet tallied, and ``game.research.tally_flush`` adds such rows in batches
after the move (:func:`add_round_values`), so that no move waits on the
tallies' rows. :func:`rebuild` (``manage.py rebuild_tallies``) recomputes them
all from the stored rows; :func:`scan` gives what they should hold once every
round is tallied, for tests and checks. A round's double-dummy analysis
(``game.replays``) comes after the round: its writer adds the round's card play
quality cells (``tally_keys.quality_cells``) in the transaction that stores it
(:func:`add_analysis`).

The statement is an upsert (``INSERT ... ON CONFLICT DO UPDATE`` adding the
sums, on PostgreSQL and SQLite alike), its rows sorted by key so that two
transactions that touch the same cells lock them in the same order.

Each cell is stored in up to :data:`SHARDS` rows (``shard``), summed by every
reader: a live match's end adds to its table's shard (the table's id modulo
:data:`SHARDS`), a process's flush to its own (its pid modulo :data:`SHARDS`),
the bulk paths to shard 0. Rounds of tables alike (same rules, make-up and
bots) share their cells, and a cell's row stays locked from the upsert to the
commit's flush: writers in different shards do not wait for each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import date, datetime
from functools import cache
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from game.models import MatchResult, RoundRecordRow, RoundTally
from game.replays.models import RoundAnalysis
from game.research.round_columns import side_bot
from game.research.tally_keys import (
    KEY,
    SUMS,
    Key,
    Sums,
    add,
    match_cells,
    quality_cells,
    round_cells,
)
from game.sql.connections import features
from game.sql.statements import Query, no_value

# The RoundRecordRow columns the tallies read.
ROUND_COLUMNS = (
    "finished_at", "rules_key", "stand_in_round", "makeup_ns", "makeup_ew", "bot_ns", "bot_ew",
    "points_ns", "points_ew", "made_ns", "made_ew", "nil_bids_ns", "nil_bids_ew", "nil_made_ns",
    "nil_made_ew", "nil_category", "bid_n", "bid_e", "bid_s", "bid_w", "tricks_n", "tricks_e",
    "tricks_s", "tricks_w", "round_type_n", "round_type_e", "round_type_s", "round_type_w",
    "seat_kinds", "bot_n", "bot_e", "bot_s", "bot_w", "dealer", "blind_nils",
    "study_condition", "pilot", "band_ns", "band_ew",
)  # fmt: skip
# ... and those the card play quality cells read besides (who really played each seat).
QUALITY_COLUMNS = (*ROUND_COLUMNS, "stand_in_n", "stand_in_e", "stand_in_s", "stand_in_w",
                   "stand_in_bids")  # fmt: skip
MATCH_COLUMNS = ("finished_at", "rules_key", "stand_in_rounds", "makeup_ns", "makeup_ew",
                 "winner", "bot_n", "bot_e", "bot_s", "bot_w", "round_types_ns",
                 "round_types_ew", "study_condition", "pilot", "band_ns", "band_ew")  # fmt: skip
CHUNK = 500  # cells per statement on the bulk paths
SHARDS = 16  # rows a cell may be spread over (see above)


def day_of(moment: datetime) -> date:
    """The day a round counts on: in the site's time zone, as the date filters read it."""
    return timezone.localdate(moment) if timezone.is_aware(moment) else moment.date()


def _round_values(row: RoundRecordRow | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(row, Mapping):
        return row
    return {c: getattr(row, c) for c in ROUND_COLUMNS}


def _match_values(m: MatchResult | Mapping[str, Any]) -> dict[str, Any]:
    values = dict(m) if isinstance(m, Mapping) else {c: getattr(m, c) for c in MATCH_COLUMNS}
    values["bot_ns"] = side_bot((values["bot_n"], values["bot_s"]))
    values["bot_ew"] = side_bot((values["bot_e"], values["bot_w"]))
    return values


def round_tallies(rows: Iterable[RoundRecordRow | Mapping[str, Any]]) -> dict[Key, Sums]:
    out: dict[Key, Sums] = {}
    for row in rows:
        r = _round_values(row)
        add(out, day_of(r["finished_at"]), round_cells(r))
    return out


Losses = Mapping[str, list[int]] | None  # RoundAnalysis.losses (None: not analysable)


def analysis_tallies(items: Iterable[tuple[Mapping[str, Any], Losses]]) -> dict[Key, Sums]:
    """The cells of analysed rounds, each given as (its ``QUALITY_COLUMNS``, its losses)."""
    out: dict[Key, Sums] = {}
    for r, losses in items:
        add(out, day_of(r["finished_at"]), quality_cells(r, losses))
    return out


def add_analysis(row: RoundRecordRow, losses: Losses) -> None:
    """Add a round's analysis to the tallies: call in the transaction that stores
    its ``RoundAnalysis`` (then it is added once: the row is written once). To the
    table's shard, as its match's end."""
    values = {c: getattr(row, c) for c in QUALITY_COLUMNS}
    _write(analysis_tallies([(values, losses)]), shard_of(row.table_id))


def add_analyses(items: Iterable[tuple[RoundRecordRow, Losses]]) -> None:
    """Add analyses stored in bulk (``bench_dashboard``), in the transaction that stores them."""
    values = (({c: getattr(row, c) for c in QUALITY_COLUMNS}, losses) for row, losses in items)
    _write(analysis_tallies(values))


def match_tallies(results: Iterable[MatchResult | Mapping[str, Any]]) -> dict[Key, Sums]:
    out: dict[Key, Sums] = {}
    for m in results:
        values = _match_values(m)
        add(out, day_of(values["finished_at"]), match_cells(values))
    return out


# ----- the upsert ---------------------------------------------------------------------------


@cache
def _upsert_sql(rows: int) -> str:
    q = connection.ops.quote_name
    table = q(RoundTally._meta.db_table)
    columns = ", ".join(q(c) for c in (*KEY, "shard", *SUMS))
    marks = "(" + ", ".join(["%s"] * (len(KEY) + 1 + len(SUMS))) + ")"
    sums = ", ".join(f"{q(c)} = {table}.{q(c)} + excluded.{q(c)}" for c in SUMS)
    return (
        f"INSERT INTO {table} ({columns}) VALUES {', '.join([marks] * rows)} "
        f"ON CONFLICT ({', '.join(q(c) for c in (*KEY, 'shard'))}) DO UPDATE SET {sums}"
    )


def upsert_query(cells: Mapping[Key, Sums], shard: int = 0) -> Query:
    """One statement adding ``cells`` (keys with their span) to the tallies' ``shard``."""
    params: list[Any] = []
    adapt = connection.ops.adapt_datefield_value
    for key in sorted(cells):
        params += [key[0], adapt(key[1]), *key[2:], shard, *cells[key]]
    return Query(_upsert_sql(len(cells)), params, no_value)  # goes with the COMMIT


def shard_of(table_id: int | None) -> int:
    """The shard a live table's rounds and match add to."""
    return (table_id or 0) % SHARDS


def match_query(result: MatchResult) -> Query:
    """The tallies of a match a move has just finished."""
    return upsert_query(match_tallies([result]), shard_of(result.table_id))


def cell_queries(cells: Mapping[Key, Sums], shard: int = 0) -> list[Query]:
    """The statements adding ``cells`` to the tallies' ``shard``, :data:`CHUNK` cells each."""
    keys = sorted(cells)
    return [
        upsert_query({k: cells[k] for k in keys[start : start + CHUNK]}, shard)
        for start in range(0, len(keys), CHUNK)
    ]


def run_queries(queries: Iterable[Query]) -> None:
    """Run statements of :func:`cell_queries` (in the caller's transaction)."""
    with connection.cursor() as cursor:
        for query in queries:
            cursor.execute(query.sql, query.params)


def _write(cells: Mapping[Key, Sums], shard: int = 0) -> None:
    run_queries(cell_queries(cells, shard))


def add_rounds(rows: Iterable[RoundRecordRow]) -> None:
    """Add stored rounds to the tallies (call in the transaction that stores them)."""
    _write(round_tallies(rows))


def add_cells_queries(cells: Mapping[Key, Sums], writer: int) -> list[Query]:
    """The statements adding cells (``round_tallies`` of live rounds,
    ``game.research.tally_flush``) to the shard of ``writer`` (a process id): flushes of
    different processes do not wait for each other's rows. Built before the
    flush's transaction, which then holds SQLite's write lock only to run them."""
    return cell_queries(cells, writer % SHARDS)


def add_matches(results: Iterable[MatchResult]) -> None:
    """Add stored match results to the tallies (in the transaction that stores them)."""
    _write(match_tallies(results))


# ----- rebuild and scan ---------------------------------------------------------------------


def _stream(model: Any, columns: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    last = 0
    while True:
        batch = list(model.objects.filter(pk__gt=last).order_by("pk").values("pk", *columns)[:5000])
        if not batch:
            return
        last = batch[-1]["pk"]
        yield from batch


def _analyses() -> Iterator[tuple[dict[str, Any], Losses]]:
    """Every stored analysis as (its round's ``QUALITY_COLUMNS``, its losses)."""
    joined = tuple(f"round__{c}" for c in QUALITY_COLUMNS)
    for a in _stream(RoundAnalysis, ("losses", *joined)):
        yield {c: a[j] for c, j in zip(QUALITY_COLUMNS, joined, strict=True)}, a["losses"]


def scan() -> dict[Key, Sums]:
    """What the tallies should hold, computed from every stored round, match and analysis."""
    cells = round_tallies(_stream(RoundRecordRow, ROUND_COLUMNS))
    # Match and analysis cells never share a key with a round cell (their figures).
    cells.update(match_tallies(_stream(MatchResult, MATCH_COLUMNS)))
    cells.update(analysis_tallies(_analyses()))
    return cells


def stored() -> dict[Key, Sums]:
    """The tallies as stored, each cell's shards summed (cells whose every sum is 0
    left out)."""
    out: dict[Key, Sums] = {}
    for t in RoundTally.objects.values_list(*KEY, *SUMS):
        key, sums = tuple(t[: len(KEY)]), list(t[len(KEY) :])
        if key in out:
            out[key] = [x + y for x, y in zip(out[key], sums, strict=True)]
        else:
            out[key] = sums
    return {key: sums for key, sums in out.items() if any(sums)}


COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_text(v: Any) -> str:
    if v is True or v is False:
        return "t" if v else "f"
    return v.translate(COPY_ESCAPES) if isinstance(v, str) else str(v)


_SPAN, _START, _FIGURE = KEY.index("span"), KEY.index("start"), KEY.index("figure")


def _locality(key: Key) -> tuple[str, date, str]:
    return key[_SPAN], key[_START], key[_FIGURE]


def _copy(cells: Mapping[Key, Sums]) -> None:
    """PostgreSQL: the cells in with one COPY (millions of rows in seconds), in shard 0
    as the other bulk paths."""
    q = connection.ops.quote_name
    columns = ", ".join(q(c) for c in (*KEY, "shard", *SUMS))
    # In (span, start, figure) order, as the live rows arrive (migration 0021): the
    # cells a dashboard query reads lie together. Grouped, not sorted: a few thousand
    # groups for millions of cells.
    groups: dict[tuple[str, date, str], list[Key]] = {}
    for key in cells:
        groups.setdefault(_locality(key), []).append(key)
    lines = []
    for group in sorted(groups):
        for key in groups[group]:
            values = [key[0], key[1].isoformat(), *key[2:], 0, *cells[key]]
            lines.append("\t".join(_copy_text(v) for v in values))
    with connection.cursor() as cursor:
        sql = f"COPY {q(RoundTally._meta.db_table)} ({columns}) FROM STDIN"
        with cursor.cursor.copy(sql) as copy:
            for start in range(0, len(lines), 100_000):
                copy.write("\n".join(lines[start : start + 100_000]) + "\n")


def rebuild() -> int:
    """Recompute every tally from the stored rows, in one transaction; returns the cells.

    Rounds, matches and analyses cannot be stored while it runs (their tables are
    locked against writes on PostgreSQL; SQLite's write lock is taken first),
    so every row is counted once: those scanned, pending ones included, are
    marked tallied in the same transaction."""
    q = connection.ops.quote_name
    with transaction.atomic():
        if features().copies_rows:
            with connection.cursor() as cursor:
                for model in (RoundRecordRow, MatchResult, RoundAnalysis):
                    cursor.execute(f"LOCK TABLE {q(model._meta.db_table)} IN SHARE MODE")
                cursor.execute(f"TRUNCATE {q(RoundTally._meta.db_table)}")
            cells = scan()
            _copy(cells)
            # The planner's statistics of the new rows now, not at autovacuum's next round.
            with connection.cursor() as cursor:
                cursor.execute(f"ANALYZE {q(RoundTally._meta.db_table)}")
        else:
            RoundTally.objects.all().delete()
            cells = scan()
            RoundTally.objects.bulk_create(
                (RoundTally(**dict(zip(KEY, k, strict=True)), **dict(zip(SUMS, v, strict=True)))
                 for k, v in cells.items()),
                batch_size=2000,
            )  # fmt: skip
        RoundRecordRow.objects.filter(tallied=False).update(tallied=True)
    return len(cells)
