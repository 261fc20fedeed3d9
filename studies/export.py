"""A study's data for analysis: ``manage.py export_study <slug> --out DIR``.

Writes, into DIR, one CSV per table below and ``codebook.md``, which is
generated from the same column definitions the writers use (:data:`FILES`),
so the codebook cannot disagree with the files:

- ``participants.csv``: one row per participant, with each stage's entry time;
- ``answers.csv``: every quiz attempt's and the questionnaire's answers;
- ``conditions.csv``: the study's conditions, their seat plans and disclosure;
- ``rounds.csv``: every finished round at those tables (``studies.export_rounds``);
- ``actions.csv``: every action at every table a participant sat at;
- ``chat.csv`` (only when the study file allows free chat): the table talk
  (``studies.export_talk``);
- ``audit.csv``: the researcher's hand on the study (the audit log: intake
  opened, paused or closed, participants seated, dropped, excluded or
  withdrawn, pilot resets), with each reason;
- ``study.toml``: the study file's text as loaded, byte for byte, so that its
  SHA-256 (in the codebook) can be checked against the pre-registered file;
- ``payments.csv`` and ``bulk_bonus.csv`` (only with ``--with-payments``): the
  only files that hold the raw recruitment ID, needed to pay people (each
  outcome and its code, the bonus of the paid outcomes; Prolific's bulk-bonus
  lines); keep them apart from the rest.

Participants are named by their pseudonym everywhere else. Pilot
participants (and tables where only pilots sat) are left out unless
``include_pilot``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from game.models import Action, Table
from studies import export_talk, outcomes, stand_in
from studies.export_audit import AUDIT, audit_rows
from studies.export_files import BOOL, PSEUDONYM, TIME, ExportFile, col, write_csv
from studies.export_payments import BULK_BONUS, PAYMENTS, bulk_bonus_rows, payment_rows
from studies.export_rounds import ROUNDS, round_rows_of
from studies.models import (
    Answer,
    Assignment,
    DroppedWhy,
    Participant,
    Study,
    StudyMatch,
    StudySeat,
    StudyTable,
)

Stage = Participant.Stage
# Kept here too: callers and tests know them as the export's.
points_won, bonus_for = outcomes.points_won, outcomes.bonus_for
SEAT_LETTERS = ("N", "E", "S", "W")


PARTICIPANTS = ExportFile(
    "participants.csv",
    "One row per participant who consented.",
    (
        PSEUDONYM,
        col("condition", "text", "the condition assigned (conditions.csv `name`)"),
        col(
            "assignment_sequence",
            "integer",
            "the study's nth assignment to a condition, from 0 (consent order)",
        ),
        col("assignment_block", "integer", "the assignment's block of shuffled conditions, from 0"),
        col(
            "position_in_block",
            "integer",
            "their slot in that block, from 0 (the block's shuffle gives its condition)",
        ),
        col(
            "assignment_seed",
            "text",
            "the block's shuffle seed (from the study's `seed`): replays the assignment",
        ),
        col("pilot", BOOL, "a pilot participant"),
        col(
            "excluded",
            BOOL,
            "left out of the analyses by the researcher (the reason: audit.csv); their data "
            "stay in every file",
        ),
        col("stage", "text", "the last stage reached: " + ", ".join(Stage.values)),
        col(
            "outcome",
            "text",
            "how their study ended: completed, screened_out, failed_quiz or dropped; empty: "
            "under way",
        ),
        col("outcome_at", TIME, "when they reached the outcome; empty: under way"),
        col(
            "dropped_why",
            "text",
            "why a dropped participant's session ended: "
            + ", ".join(f"{w.value} ({w.label.lower()})" for w in DroppedWhy),
        ),
        *(
            col(f"entered_{stage}", TIME, f"when the stage {stage} was entered; empty: never")
            for stage in Stage.values
        ),
        col("quiz_attempts", "integer", "comprehension quiz attempts used", "attempts"),
        col(
            "stand_in_seats",
            "text",
            "the seats of their study table meant for participants that the waiting room's "
            "stand-in bot took (e.g. N); empty: none, or never seated",
        ),
    ),
)
ANSWERS = ExportFile(
    "answers.csv",
    "Every answer: the screening questions', each quiz attempt's and the exit "
    "questionnaire's.",
    (
        PSEUDONYM,
        col("kind", "text", "screening, quiz or questionnaire"),
        col("item_id", "text", "the screening (s1...) or quiz question (q1...), or the "
            "questionnaire item's id"),  # fmt: skip
        col("attempt", "integer", "the quiz attempt, from 1; empty for the questionnaire"),
        col(
            "value",
            "text",
            "quiz: the chosen option's text; Likert item: the choice's number, from 1 "
            "(the scale's lowest label) to the number of labels; text item: the text",
        ),
    ),
)
CONDITIONS = ExportFile(
    "conditions.csv",
    "The study's conditions, as in the study file.",
    (
        col("name", "text", "the condition's name"),
        *(
            col(f"seat_{s.lower()}", "text", f"seat {s}: participant, or a bot's registry name")
            for s in SEAT_LETTERS
        ),
        col("disclosure", "text", "bots: bots shown as bots; names: bots shown with names"),
    ),
)
ACTIONS = ExportFile(
    "actions.csv",
    "Every action at every table where an exported participant sat, in table order.",
    (
        col("table", "text", "the table's public id"),
        col("match", "integer", "the match of the participants' study table, from 1"),
        col("version", "integer", "the table's version after the action (its order)"),
        col("round", "integer", "the round of the match, from 1"),
        col("seat", "text", "the seat that acted: N, E, S or W"),
        col(
            "player_kind",
            "text",
            "participant, bot, or stand-in (a participant seat the waiting room's stand-in "
            "bot took; its actions are the bot's)",
        ),
        col(
            "player",
            "text",
            "the participant's pseudonym (withdrawn: one who withdrew; their think times are "
            "removed), or the bot's registry name",
        ),
        col("action", "JSON", "the engine's action (game.engine action_to_dict)"),
        col("by_stand_in", BOOL, "made by the stand-in bot for an absent participant"),
        col(
            "stand_in_fill",
            BOOL,
            "the table had a participant seat the stand-in took (left out of the analyses "
            "unless asked)",
        ),
        col("think_ms", "integer", "a participant's think time as the page measured it", "ms"),
        col("think_bound_ms", "integer", "the server's upper bound of think_ms", "ms"),
    ),
)
FILES = (PARTICIPANTS, ANSWERS, CONDITIONS, ROUNDS, ACTIONS, AUDIT, PAYMENTS, BULK_BONUS)


# ----- where the tables come from ------------------------------------------------------


@dataclass(frozen=True)
class StudyTableSeats:
    """A game table of the study, with the participant's pseudonym at each of
    their seats (by position, 0-3); the other seats are bots."""

    table: Table
    pseudonyms: Mapping[int, str] = field(default_factory=dict)
    # Participant seats the waiting room's stand-in took (studies.stand_in).
    stand_in: frozenset[int] = frozenset()
    match: int = 1  # StudyMatch.number: the study table's nth match, from 1


WITHDRAWN = "withdrawn"
STUDY_FILE = "study.toml"


def _named(participant: Participant) -> str:
    """A seat's participant as the export names them: a withdrawn one's moves stay
    (the table's record, which others' data need) under no pseudonym."""
    return WITHDRAWN if participant.withdrawn else participant.pseudonym


def study_tables(study: Study) -> list[StudyTableSeats]:
    """The study's game tables, one per match (``studies.waiting_room`` formed
    each study table, ``studies.playing`` its next matches), the pseudonym
    at each participant's seat and the seats the stand-in filled, in the order
    they were formed."""
    found = (
        StudyTable.objects.filter(study=study)
        .select_related("condition")
        .prefetch_related("seats__participant", "matches__table")
        .order_by("pk")
    )
    return [
        StudyTableSeats(
            m.table,
            {s.position: _named(s.participant) for s in t.seats.all()},
            frozenset(stand_in.fill_positions(t)),
            m.number,
        )
        for t in found
        for m in t.matches.all()
    ]


# ----- the rows ------------------------------------------------------------------------


def participants_of(study: Study, include_pilot: bool) -> list[Participant]:
    # Withdrawn participants are never exported (studies.withdrawal).
    found = study.participants.filter(withdrawn=False).select_related("condition")
    found = found.order_by("created_at", "pk")
    return list(found if include_pilot else found.filter(pilot=False))


def stand_in_seats(people: Iterable[Participant]) -> dict[int, str]:
    """The seat letters the stand-in took at each participant's study table."""
    seats = StudySeat.objects.filter(participant__in=list(people)).select_related(
        "study_table__condition"
    )
    return {
        s.participant_id: "".join(SEAT_LETTERS[p] for p in stand_in.fill_positions(s.study_table))
        for s in seats.prefetch_related("study_table__seats")
    }


def participant_rows(people: list[Participant]) -> Iterator[dict[str, Any]]:
    filled = stand_in_seats(people)
    assigned = {a.participant_id: a for a in Assignment.objects.filter(participant__in=people)}
    for p in people:
        times = {f"entered_{s}": p.stage_times.get(s) for s in Stage.values}
        slot = assigned.get(p.pk)  # none only for a participant made by hand (the admin)
        yield {
            "pseudonym": p.pseudonym,
            "condition": p.condition.name,
            "assignment_sequence": slot.sequence if slot else None,
            "assignment_block": slot.block if slot else None,
            "position_in_block": slot.position_in_block if slot else None,
            "assignment_seed": slot.seed if slot else None,
            "pilot": p.pilot,
            "excluded": p.excluded,
            "stage": p.stage,
            "outcome": outcomes.outcome_of(p),
            "outcome_at": outcomes.outcome_at(p),
            "dropped_why": p.dropped_why,
            **times,
            "quiz_attempts": p.quiz_attempts,
            "stand_in_seats": filled.get(p.pk, ""),
        }


def answer_rows(people: list[Participant]) -> Iterator[dict[str, Any]]:
    answers = Answer.objects.filter(participant__in=people).select_related("participant")
    for a in answers.order_by("participant__created_at", "participant_id", "kind", "attempt", "pk"):
        row = {"pseudonym": a.participant.pseudonym, "kind": a.kind, "item_id": a.item_id}
        yield {**row, "attempt": a.attempt, "value": a.value}


def condition_rows(study: Study) -> Iterator[dict[str, Any]]:
    for c in study.conditions.order_by("position"):
        seats = {f"seat_{s.lower()}": who for s, who in zip(SEAT_LETTERS, c.seat_plan, strict=True)}
        yield {"name": c.name, **seats, "disclosure": c.disclosure}


def conditions_by_table(study: Study) -> dict[int, str]:
    """The condition's name of each of the study's game tables (by table pk)."""
    found = StudyMatch.objects.filter(study_table__study=study).values_list(
        "table_id", "study_table__condition__name"
    )
    return dict(found)


def player_kind(entry: StudyTableSeats, position: int) -> str:
    """participant, bot, or stand-in: a participant seat the stand-in took."""
    if position in entry.pseudonyms:
        return "participant"
    return "stand-in" if position in entry.stand_in else "bot"


def action_rows(tables: Iterable[StudyTableSeats]) -> Iterator[dict[str, Any]]:
    for entry in tables:
        bots = {s.position: s.bot_name for s in entry.table.seats.filter(kind="bot")}
        for a in Action.objects.filter(table=entry.table).order_by("version"):
            pseudonym = entry.pseudonyms.get(a.seat)
            yield {
                "table": entry.table.public_id,
                "match": entry.match,
                "version": a.version,
                "round": a.round_number,
                "seat": SEAT_LETTERS[a.seat],
                "player_kind": player_kind(entry, a.seat),
                "player": pseudonym or bots.get(a.seat, ""),
                "action": json.dumps(a.action, sort_keys=True, separators=(",", ":")),
                "by_stand_in": a.by_stand_in,
                "stand_in_fill": bool(entry.stand_in),
                "think_ms": a.think_ms,
                "think_bound_ms": a.think_bound_ms,
            }


# ----- writing -------------------------------------------------------------------------


def codebook(study: Study, files: Iterable[ExportFile], include_pilot: bool) -> str:
    lines = [
        f"# Codebook: {study.slug}",
        "",
        f"{study.title}. Study file `{study.source_name}`, SHA-256 `{study.definition_hash}`: "
        f"`{STUDY_FILE}` in this folder is its text as loaded, byte for byte "
        f"(`sha256sum {STUDY_FILE}` gives that hash).",
        "Pilot participants are "
        + ("included (see `pilot`)." if include_pilot else "left out.")
        + " Withdrawn participants are left out (a seat of theirs at a table shared with "
        "another participant is named `withdrawn`). Empty cells are missing values.",
    ]
    for spec in files:
        lines += ["", f"## {spec.name}", "", spec.about, ""]
        lines += ["| column | type | unit | meaning |", "| --- | --- | --- | --- |"]
        lines += [f"| `{c.name}` | {c.type} | {c.unit} | {c.meaning} |" for c in spec.columns]
    return "\n".join(lines) + "\n"


def export_study(
    study: Study, out: Path, *, with_payments: bool = False, include_pilot: bool = False
) -> list[Path]:
    """Write the study's files into ``out`` (created if need be); their paths."""
    out.mkdir(parents=True, exist_ok=True)
    people = participants_of(study, include_pilot)
    shown = {p.pseudonym for p in people}
    tables = [t for t in study_tables(study) if shown & set(t.pseudonyms.values())]
    written = [
        (PARTICIPANTS, participant_rows(people)),
        (ANSWERS, answer_rows(people)),
        (CONDITIONS, condition_rows(study)),
        (ROUNDS, round_rows_of(tables, conditions_by_table(study))),
        (ACTIONS, action_rows(tables)),
        (AUDIT, audit_rows(study)),
    ]
    if export_talk.allows_chat(study.definition):
        written.append((export_talk.CHAT, export_talk.chat_rows(tables)))
    if with_payments:
        payments = list(payment_rows(study, people))
        written += [(PAYMENTS, payments), (BULK_BONUS, bulk_bonus_rows(payments))]
    paths = []
    for spec, rows in written:
        write_csv(out / spec.name, spec, rows)
        paths.append(out / spec.name)
    # Bytes, not text: no newline translation, so the file hashes to definition_hash.
    source = out / STUDY_FILE
    source.write_bytes(study.source.encode())
    paths.append(source)
    book = out / "codebook.md"
    book.write_text(codebook(study, [spec for spec, _ in written], include_pilot))
    return [*paths, book]
