"""``rounds.csv`` of a study's export: every finished round at the study's tables.

One row per round, from the round records the analyses use
(``game.models.RoundRecordRow``), with each seat named as in the rest of the
export: the participant's pseudonym, or the bot's registry name. The columns
are defined here once (:data:`ROUNDS`), for the writer and the codebook.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from game.engine.round_types import RoundType
from game.external_bots import protocol_of
from game.models import MatchResult, RoundRecordRow
from game.research import round_rows
from game.research.round_columns import NIL_CATEGORIES, actor
from studies.export_files import BOOL, TIME, ExportFile, col

SEATS = ("n", "e", "s", "w")
PARTNERSHIPS = ("ns", "ew")
ROUND_TYPES = ", ".join(f"{int(t)} {t.label}" for t in RoundType)

ROUNDS = ExportFile(
    "rounds.csv",
    "Every finished round at a table where an exported participant sat, in table and round "
    "order (the same rounds as the site's round export, seats named as in actions.csv).",
    (
        col("table", "text", "the table's public id (actions.csv `table`)"),
        col(
            "match",
            "integer",
            "the match of the participants' study table, from 1 (each match has its own table)",
        ),
        col("condition", "text", "the table's condition (conditions.csv `name`)"),
        col("round", "integer", "the round of the match, from 1"),
        col("finished_at", TIME, "when the round's last card was played"),
        col("dealer", "text", "the dealer's seat: N, E, S or W"),
        *(
            c
            for s in SEATS
            for c in (
                col(
                    f"player_kind_{s}",
                    "text",
                    f"seat {s.upper()}: participant, bot, or stand-in (a participant seat "
                    "the waiting room's stand-in bot took)",
                ),
                col(
                    f"player_{s}",
                    "text",
                    f"seat {s.upper()}: the participant's pseudonym (withdrawn: one who "
                    "withdrew) or the bot's registry name (ext:<name>: an external bot)",
                ),
                col(
                    f"protocol_{s}",
                    "text",
                    f"seat {s.upper()}: the bot protocol an external bot (ext:<name>) "
                    "played through, e.g. spades-bot/1; empty for the site's own bots "
                    "and for people",
                ),
                col(
                    f"actor_{s}",
                    "text",
                    f"who moved for seat {s.upper()} this round: bot, human, "
                    "human+stand-in (the stand-in made at least one of its moves), or "
                    "stand-in (the seat's player_kind is stand-in)",
                ),
                col(f"bid_{s}", "integer", f"seat {s.upper()}'s bid; 0 is nil", "tricks"),
                col(f"blind_{s}", BOOL, f"seat {s.upper()} bid blind nil"),
                col(f"tricks_{s}", "integer", f"tricks seat {s.upper()} took", "tricks"),
                col(f"round_type_{s}", "text", f"seat {s.upper()}'s round type: {ROUND_TYPES}"),
            )
        ),
        *(
            c
            for p in PARTNERSHIPS
            for c in (
                col(f"made_{p}", BOOL, f"{p.upper()} made its contract"),
                col(f"points_{p}", "integer", f"points {p.upper()} scored this round", "points"),
                col(f"score_{p}", "integer", f"{p.upper()}'s score after the round", "points"),
                col(f"bags_{p}", "integer", f"{p.upper()}'s bags after the round", "bags"),
            )
        ),
        col("nil_category", "text", "the round's nils: " + ", ".join(NIL_CATEGORIES)),
        col(
            "stand_in_fill",
            BOOL,
            "the table had a participant seat the waiting room's stand-in bot took",
        ),
        col(
            "stand_in_round",
            BOOL,
            "the analyses' flag (left out unless asked): a stand-in made a move that counts, "
            "or stand_in_fill",
        ),
        col("match_winner", "text", "NS or EW in the match's last round; empty otherwise"),
    ),
)


def round_rows_of(tables: Iterable[Any], conditions: dict[int, str]) -> Iterator[dict[str, Any]]:
    """``rounds.csv``'s rows for ``tables`` (``studies.export.StudyTableSeats``);
    ``conditions``: the condition's name by game table pk."""
    round_rows.record_pending()  # rounds that ended a moment ago: recorded now
    for entry in tables:
        table = entry.table
        bots = {s.position: s.bot_name for s in table.seats.filter(kind="bot")}
        result = MatchResult.objects.filter(table=table).first()
        for r in RoundRecordRow.objects.filter(table=table).order_by("round_number"):
            row: dict[str, Any] = {
                "table": table.public_id,
                "match": entry.match,
                "condition": conditions.get(table.pk, ""),
                "round": r.round_number,
                "finished_at": r.finished_at.isoformat(),
                "dealer": SEATS[r.dealer].upper(),
            }
            for p, s in enumerate(SEATS):
                pseudonym = entry.pseudonyms.get(p)
                plays = getattr(r, f"stand_in_{s}")
                filled = p in entry.stand_in
                kind = "participant" if pseudonym else "stand-in" if filled else "bot"
                row[f"player_kind_{s}"] = kind
                row[f"player_{s}"] = pseudonym or bots.get(p, "")
                row[f"protocol_{s}"] = "" if pseudonym else protocol_of(bots.get(p))
                moved = actor(r.seat_kinds[p], plays, r.stand_in_bids[p] == "1")
                row[f"actor_{s}"] = "stand-in" if filled else moved
                row[f"bid_{s}"] = getattr(r, f"bid_{s}")
                row[f"blind_{s}"] = r.blind_nils[p] == "1"
                row[f"tricks_{s}"] = getattr(r, f"tricks_{s}")
                kind = getattr(r, f"round_type_{s}")
                row[f"round_type_{s}"] = RoundType(kind).label if kind else ""
            for name in PARTNERSHIPS:
                row[f"made_{name}"] = getattr(r, f"made_{name}")
                row[f"points_{name}"] = getattr(r, f"points_{name}")
                row[f"score_{name}"] = getattr(r, f"score_{name}")
                row[f"bags_{name}"] = getattr(r, f"bags_{name}")
            row["nil_category"] = r.nil_category
            # A filled table's rounds are not what the design planned: flagged like
            # the stand-in's moves, so the analyses leave them out unless asked.
            row["stand_in_fill"] = bool(entry.stand_in)
            row["stand_in_round"] = r.stand_in_round or bool(entry.stand_in)
            last = result is not None and result.rounds == r.round_number
            row["match_winner"] = ("NS" if result.winner == 0 else "EW") if last else ""
            yield row
