"""The JSON Lines import: a round-log export (``game.research.exports``) read back into the
database, all or nothing. Every line is parsed, checked and its round record
replayed before anything is written; a bad line names itself in the error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils.dateparse import parse_datetime

from game.engine import RecordError, replay
from game.engine.cards import SEAT_LETTERS
from game.models import RoundRecordRow, Seat, Table
from game.research import tallies
from game.research.exports import BATCH, EXPORT_FORMAT, IMPORTED_PREFIX
from game.research.round_columns import (
    CARDS_PER_SEAT,
    ROUND_TYPE_BY_LABEL,
    held_round_types,
    is_stand_in_round,
)
from game.research.storage import result_row, round_row_from_record

SEAT_FIELDS = ("seat", "kind", "bot", "player")  # who sat there (the same in every round)


def _who_sat(seats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: s.get(k) for k in SEAT_FIELDS} for s in seats]


def _stand_ins(item: dict[str, Any]) -> tuple[list[int], str]:
    """Each seat's stand-in plays and whether its bid was the stand-in's (0 if not given)."""
    seats = item["seats"]
    plays = [s.get("stand_in_plays", 0) for s in seats]
    return plays, "".join("1" if s.get("stand_in_bid") else "0" for s in seats)


class ImportFailed(ValueError):
    """The file was not imported (nothing was written); ``errors`` names each bad line."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__(
            "; ".join(errors[:20]) + (f" (and {len(errors) - 20} more)" if len(errors) > 20 else "")
        )
        self.errors = errors


@dataclass
class _TableInfo:
    """What the import keeps per table between its two passes (no round records)."""

    line: int  # the first line of the table
    seats: list[dict[str, Any]]
    rules: dict[str, Any]
    first_finished: datetime
    last_finished: datetime
    rounds: int = 0
    stand_in_rounds: int = 0
    round_types: list[list[int]] = field(default_factory=list)  # per round, N E S W
    match_result: dict[str, Any] | None = None


def _check_item(item: Any, replay_record: bool = True) -> tuple[dict[str, Any], datetime]:
    if not isinstance(item, dict):
        raise ValueError("a line must be a JSON object")
    if item.get("format") != EXPORT_FORMAT:
        raise ValueError(f"unknown format {item.get('format')!r} (expected {EXPORT_FORMAT})")
    table = item.get("table")
    if not isinstance(table, str) or not 1 <= len(table) <= 16:
        raise ValueError("'table' must be a table id of 1 to 16 characters")
    seats = item.get("seats")
    if not isinstance(seats, list) or len(seats) != 4:
        raise ValueError("'seats' must list the four seats N, E, S, W")
    for p, s in enumerate(seats):
        if not isinstance(s, dict) or s.get("seat") != SEAT_LETTERS[p]:
            raise ValueError(f"seat {p + 1} must be the object of seat {SEAT_LETTERS[p]}")
        if s.get("kind") == "bot":
            if not isinstance(s.get("bot"), str) or not 1 <= len(s["bot"]) <= 40:
                raise ValueError(f"seat {SEAT_LETTERS[p]} is a bot without a bot name")
        elif s.get("kind") == "human":
            if s.get("player") is not None and not (
                isinstance(s["player"], str) and len(s["player"]) <= 40
            ):
                raise ValueError(f"seat {SEAT_LETTERS[p]}: 'player' must be a short text")
        else:
            raise ValueError(f"seat {SEAT_LETTERS[p]}: 'kind' must be 'human' or 'bot'")
        plays = s.get("stand_in_plays", 0)
        if type(plays) is not int or not 0 <= plays <= CARDS_PER_SEAT:
            raise ValueError(f"seat {SEAT_LETTERS[p]}: 'stand_in_plays' must be 0 to 13")
        if type(s.get("stand_in_bid", False)) is not bool:
            raise ValueError(f"seat {SEAT_LETTERS[p]}: 'stand_in_bid' must be true or false")
    finished = parse_datetime(str(item.get("finished_at")))
    if finished is None:
        raise ValueError("'finished_at' must be an ISO 8601 date and time")
    stand_ins = item.get("stand_in_moves", 0)
    if isinstance(stand_ins, bool) or not isinstance(stand_ins, int) or stand_ins < 0:
        raise ValueError("'stand_in_moves' must be a whole number")
    m = item.get("match_result")
    if m is not None:
        if not isinstance(m, dict) or m.get("winner") not in ("NS", "EW"):
            raise ValueError("'match_result' must be null or have 'winner' NS or EW")
        for key in ("scores", "bags"):
            v = m.get(key)
            if not (isinstance(v, list) and len(v) == 2 and all(type(x) is int for x in v)):
                raise ValueError(f"match_result '{key}' must be two whole numbers")
    if not replay_record:
        return item, finished
    try:
        replay(item.get("record"))  # type: ignore[arg-type]
    except RecordError as e:
        raise ValueError(f"the round record does not replay: {e}") from None
    return item, finished


def _parse_line(
    raw: str | bytes, replay_record: bool = True
) -> tuple[dict[str, Any], datetime] | None:
    text = raw.decode() if isinstance(raw, bytes) else raw
    if not text.strip():
        return None
    try:
        return _check_item(json.loads(text), replay_record)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e})") from None


def read_jsonl(lines: Iterable[str | bytes]) -> tuple[dict[str, _TableInfo], int, list[str]]:
    """First pass: every line parsed and replayed, keeping only what each table needs.

    Returns (tables by public id, number of rounds, errors naming the bad lines).
    """
    tables: dict[str, _TableInfo] = {}
    errors: list[str] = []
    seen: dict[tuple[str, int], int] = {}
    rounds = 0
    for n, raw in enumerate(lines, start=1):
        try:
            parsed = _parse_line(raw)
        except ValueError as e:
            errors.append(f"line {n}: {e}")
            continue
        if parsed is None:
            continue
        item, finished = parsed
        key = (item["table"], item["record"]["round_number"])
        if key in seen:
            errors.append(f"line {n}: round {key[1]} of table {key[0]} is also on line "
                          f"{seen[key]}")  # fmt: skip
            continue
        seen[key] = n
        rounds += 1
        info = tables.get(item["table"])
        if info is None:
            info = tables[item["table"]] = _TableInfo(
                n, _who_sat(item["seats"]), item["record"]["rules"], finished, finished
            )
        elif _who_sat(item["seats"]) != info.seats or item["record"]["rules"] != info.rules:
            errors.append(f"line {n}: the seats or rules differ from line {info.line} "
                          "of the same table")  # fmt: skip
        info.rounds += 1
        info.stand_in_rounds += is_stand_in_round(*_stand_ins(item))
        info.round_types.append([ROUND_TYPE_BY_LABEL[t] for t in item["record"]["round_types"]])
        info.first_finished = min(info.first_finished, finished)
        info.last_finished = max(info.last_finished, finished)
        if item.get("match_result"):
            info.match_result = item["match_result"]
    names = list(tables)
    for start in range(0, len(names), 1000):
        for public_id in Table.objects.filter(
            public_id__in=names[start : start + 1000]
        ).values_list("public_id", flat=True):
            errors.append(f"line {tables[public_id].line}: table {public_id} is already stored")
    return tables, rounds, errors


def import_jsonl(lines: Iterable[str | bytes]) -> dict[str, int]:
    """Import an export; all or nothing. Raises :class:`ImportFailed` naming bad lines.

    Two passes over ``lines`` (a file is rewound; anything else is read into a
    list first): the first checks and replays every line and keeps only
    per-table facts, the second writes the rows in batches, in one
    transaction. Memory grows with the number of tables, not of rounds.
    """
    if hasattr(lines, "seek"):
        source: Any = lines
        start_at = source.tell()
    else:
        source = list(lines)
        start_at = None
    tables, n_rounds, errors = read_jsonl(source)
    if errors:
        raise ImportFailed(errors)
    if start_at is not None:
        source.seek(start_at)
    results = 0
    with transaction.atomic():
        stored: dict[str, tuple[Table, str, list[str | None]]] = {}
        for public_id, info in tables.items():
            table = Table.objects.create(
                public_id=public_id,
                rules=info.rules,
                status=Table.Status.FINISHED,
                started_at=info.first_finished,
                finished_at=info.last_finished,
                stand_in_bots=False,
            )
            seats = {}
            for p, s in enumerate(info.seats):
                if s["kind"] == "bot":
                    seats[p] = Seat(table=table, position=p, kind=Seat.Kind.BOT,
                                    bot_name=s["bot"])  # fmt: skip
                else:
                    player = s.get("player") or f"unknown-{public_id}-{p}"
                    seats[p] = Seat(table=table, position=p, kind=Seat.Kind.HUMAN,
                                    guest_id=IMPORTED_PREFIX + player,
                                    guest_name=player[:40])  # fmt: skip
            Seat.objects.bulk_create(seats.values())
            kinds = "".join("B" if s["kind"] == "bot" else "H" for s in info.seats)
            names = [s["bot"] if s["kind"] == "bot" else None for s in info.seats]
            stored[public_id] = (table, kinds, names)
            m = info.match_result
            if m is not None:
                result = result_row(
                    table,
                    winner=0 if m["winner"] == "NS" else 1,
                    scores=m["scores"],
                    bags=m["bags"],
                    rounds=int(m.get("rounds") or info.rounds),
                    version=0,
                    seats=seats,
                    finished_at=parse_datetime(str(m.get("finished_at"))) or info.last_finished,
                    round_types=held_round_types(info.round_types),
                )
                result.stand_in_rounds = info.stand_in_rounds
                result.save()
                tallies.add_matches([result])
                results += 1
        rows: list[RoundRecordRow] = []
        for raw in source:
            parsed = _parse_line(raw, replay_record=False)  # replayed in the first pass
            if parsed is None:
                continue
            item, finished = parsed
            table, kinds, names = stored[item["table"]]
            plays, bids = _stand_ins(item)
            rows.append(
                round_row_from_record(
                    item["record"],
                    table=table,
                    version=0,  # imported rounds have no action log
                    kinds=kinds,
                    bot_names=names,
                    stand_in_moves=item.get("stand_in_moves", 0),
                    stand_in_plays=plays,
                    stand_in_bids=bids,
                    finished_at=finished,
                )
            )
            if len(rows) >= BATCH:
                RoundRecordRow.objects.bulk_create(rows)
                tallies.add_rounds(rows)
                rows = []
        RoundRecordRow.objects.bulk_create(rows)
        tallies.add_rounds(rows)
    return {"rounds": n_rounds, "tables": len(tables), "match_results": results}
