"""The study export's table talk (``chat.csv``, ``studies.export``): written
only when the study file lets participants chat (``[play] talk = "chat"``).
Quick reactions are not stored (they are of the moment), and a study's talk
is off by default. A line is named by the seat's pseudonym, never by the
first name the table showed."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from game.models import ChatLine, Table
from studies.export_files import TIME, ExportFile, col

SEATS = "NESW"

CHAT = ExportFile(
    "chat.csv",
    "Every chat line at the study's tables (the study file allowed free chat), oldest "
    "first. Free text: read it before sharing, it may hold what a participant typed "
    "about themselves.",
    (
        col("table", "text", "the game table (rounds.csv and actions.csv `table`)"),
        col("match", "integer", "the study table's match, from 1"),
        col("at", TIME, "when the line was sent"),
        col("seat", "text", "N, E, S or W; empty: a spectator (the researcher watching)"),
        col("player", "text", "the seat's participant pseudonym (or `withdrawn`); empty: "
            "not a participant"),  # fmt: skip
        col("text", "text", "the line as sent (at most 200 characters)"),
    ),
)


class TableOfStudy(Protocol):
    table: Table
    pseudonyms: Any  # Mapping[int, str]
    match: int


def allows_chat(definition: dict[str, Any]) -> bool:
    return (definition.get("play") or {}).get("talk") == "chat"


def chat_rows(tables: Iterable[TableOfStudy]) -> Iterator[dict[str, Any]]:
    for entry in tables:
        for line in ChatLine.objects.filter(table=entry.table).order_by("created_at", "pk"):
            yield {
                "table": entry.table.public_id,
                "match": entry.match,
                "at": line.created_at,
                "seat": SEATS[line.seat] if line.seat is not None else "",
                "player": entry.pseudonyms.get(line.seat, "") if line.seat is not None else "",
                "text": line.text,
            }
