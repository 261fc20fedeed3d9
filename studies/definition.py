"""A study file: the pre-registered definition of one study, in TOML.

The file is kept with the pre-registration (``docs/examples/study.toml`` is
the worked example) and is the study's only definition: ``load_study`` reads
it into the frozen dataclasses of ``studies.study_types`` (imported from
here too), and the pages read those. Everything is checked before anything
is stored, and every problem is reported at once with the line it refers to
(``FILE:LINE: message``): a researcher fixing a file wants the whole list,
not one error per run.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from pathlib import Path as FilePath

from bots.registry import DEFAULT_BOT
from game.engine.rules import Rules, RulesError
from studies.definition_endings import EndingsReader
from studies.file_lines import FileLines, Path
from studies.study_types import (
    DEFAULT_TEXT_MAX,
    PARTICIPANT,
    SEATS,
    Condition,
    LikertItem,
    Play,
    Question,
    Questionnaire,
    Quiz,
    Recruitment,
    Screening,
    ScreeningQuestion,
    SeatPlan,
    Study,
    TextItem,
    Timeouts,
)

# What participants may say at their table (Table.talk): off, quick reactions
# only, or chat (then exported: it is personal data).
TALK = ("off", "reactions", "chat")
# How a condition shows its bots: as bots (the default), or under a player's
# name, which deceives and so needs a debrief at the end.
DISCLOSURES = ("bots", "names")
SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?$")
ITEM_ID = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
PARAM = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")


class StudyFileError(ValueError):
    """Every problem of a study file, each ``FILE:LINE: message``."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def read(path: str | FilePath) -> str:
    """A study file's text; :class:`StudyFileError` if it cannot be read."""
    try:
        return FilePath(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise StudyFileError([f"{path}:1: cannot read the file: {error}"]) from None


def load(path: str | FilePath) -> Study:
    """The study in the file at ``path``; :class:`StudyFileError` if it has problems."""
    return parse(read(path), str(path))


def parse(text: str, name: str = "study.toml") -> Study:
    """The study a file's text defines; :class:`StudyFileError` lists every problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        where = re.search(r"line (\d+)", str(error))
        line = where.group(1) if where else "1"
        raise StudyFileError([f"{name}:{line}: not valid TOML: {error}"]) from None
    reader = _Reader(name, FileLines.scan(text))
    study = reader.study(data)
    if reader.problems or study is None:
        raise StudyFileError(reader.problems)
    return study


class _Reader(EndingsReader):
    """Reads the parsed file section by section, noting each problem with its line."""

    # ----- the sections --------------------------------------------------------------

    def study(self, data: dict) -> Study | None:
        self.only(
            data,
            (),
            {
                "slug",
                "title",
                "seed",
                "pilot",
                "rules",
                "play",
                "conditions",
                "consent",
                "instructions",
                "screening",
                "quiz",
                "questionnaire",
                "recruitment",
                "completion",
                "waiting_room",
                "dropout",
                "bonus",
            },
        )
        slug = self.text(data, (), "slug", SLUG, "a slug (a-z, 0-9 and '-', at most 50)")
        title = self.value(data, (), "title", str)
        seed = self.value(data, (), "seed", int)
        pilot = self.value(data, (), "pilot", bool, False)
        rules_data = self.section(data, "rules", required=False) or {}
        rules = self.rules(rules_data)
        play = self.play(self.section(data, "play") or {})
        if rules is not None:
            rules = self.rounds_rule(rules, rules_data, play)
        conditions = self.conditions(data)
        consent = self.value(self.section(data, "consent") or {}, ("consent",), "text", str)
        instructions_section = self.section(data, "instructions") or {}
        instructions = self.value(instructions_section, ("instructions",), "text", str)
        screening = self.screening(self.section(data, "screening", required=False))
        quiz = self.quiz(self.section(data, "quiz", required=False))
        questionnaire = self.questionnaire(self.section(data, "questionnaire", required=False))
        recruitment = self.recruitment(self.section(data, "recruitment", required=False) or {})
        completion = self.completion(self.section(data, "completion") or {})
        timeouts = self.timeouts(
            self.section(data, "waiting_room") or {},
            self.section(data, "dropout", required=False) or {},
        )
        bonus = self.bonus(self.section(data, "bonus", required=False))
        if self.problems or rules is None:
            return None
        return Study(
            slug,
            title,
            seed,
            pilot,
            rules,
            play,
            conditions,
            consent,
            instructions,
            quiz,
            questionnaire,
            recruitment,
            completion,
            timeouts,
            bonus,
            screening,
        )

    def rules(self, data: dict) -> Rules | None:
        """The engine's own validation (``Rules``) decides; its message names no key,
        so the line is that of the first key the message mentions."""
        try:
            return Rules.from_dict(data)
        except RulesError as error:
            message = str(error)
            named = [k for k in data if k in message or k.replace("_", " ") in message]
            self.problem(("rules", *named[:1]), f"rules: {message}")
            return None

    def rounds_rule(self, rules: Rules, given: dict, play: Play) -> Rules:
        """``rounds = N``: every match is N rounds long (one more while the scores
        are tied), so the goals are out of reach; a file that sets them, or the
        round limit itself, is refused."""
        if "round_limit" in given:
            where = ("rules", "round_limit")
            self.problem(where, "set the rounds per match in [play] (rounds = N)")
        if play.rounds is None:
            return rules
        for key in ("winning_goal", "losing_goal"):
            if key in given:
                self.problem(
                    ("rules", key),
                    f"with [play] rounds = {play.rounds} a match is {play.rounds} rounds long: "
                    f"{key} does not apply (remove it)",
                )
        return replace(rules, winning_goal=10_000, losing_goal=-10_000, round_limit=play.rounds)

    def play(self, data: dict) -> Play:
        path = ("play",)
        self.only(
            data, path, {"matches", "rounds", "turn_seconds", "bot_delay", "rated", "talk"}
        )
        matches = self.number(data, path, "matches", 1, 20, None)
        rounds = self.number(data, path, "rounds", 1, 100, None)
        if (matches is None) == (rounds is None):
            self.problem(path, "[play] needs exactly one of matches and rounds")
        turn_seconds = self.number(data, path, "turn_seconds", 5, 600, 30)
        delay = self.value(data, path, "bot_delay", float, None)
        if delay is not None and not 0 <= delay <= 30:
            self.problem((*path, "bot_delay"), f"bot_delay must be 0 to 30 seconds, not {delay}")
        talk = self.value(data, path, "talk", str, "off")
        if talk not in TALK:
            self.problem((*path, "talk"), f"talk must be one of {', '.join(TALK)}, not {talk!r}")
        rated = self.value(data, path, "rated", bool, True)
        return Play(matches, rounds, turn_seconds, delay, rated, talk)

    def conditions(self, study: dict) -> tuple[Condition, ...]:
        out, names = [], set()
        for path, data in self.tables(study, (), "conditions"):
            self.only(
                data,
                path,
                {"name", "seats", "disclosure", "debrief", "stand_in_debrief", "instructions",
                 "places"},
            )  # fmt: skip
            name = self.value(data, path, "name", str)
            if name in names:
                self.problem((*path, "name"), f"a second condition named {name!r}")
            names.add(name)
            plan = self.seat_plan(
                self.value(data, path, "seats", dict, None) or {}, (*path, "seats")
            )
            disclosure = self.value(data, path, "disclosure", str, "bots")
            if disclosure not in DISCLOSURES:
                self.problem(
                    (*path, "disclosure"), f"disclosure must be one of {', '.join(DISCLOSURES)}"
                )
            debrief = self.value(data, path, "debrief", str, "")
            if disclosure == "names" and not debrief.strip():
                self.problem(
                    (*path, "disclosure"),
                    f"condition {name!r} shows its bots under "
                    "players' names: it needs a debrief text (debrief = ...)",
                )
            stand_in_debrief = self.stand_in_debrief(data, path, name, disclosure, plan)
            instructions = self.value(data, path, "instructions", str, "")
            places = self.number(data, path, "places", 1, 100_000, None)
            out.append(
                Condition(name, plan, disclosure, debrief, stand_in_debrief, instructions, places)
            )
        return tuple(out)

    def stand_in_debrief(
        self, data: dict, path: Path, name: str, disclosure: str, plan: SeatPlan
    ) -> str:
        """The debrief of one seated with the stand-in: only where it can happen
        (two or more participant seats) and deceives (bots under names)."""
        text = self.value(data, path, "stand_in_debrief", str, "")
        if not text:
            return ""
        where = (*path, "stand_in_debrief")
        if disclosure != "names":
            self.problem(
                where,
                f"condition {name!r} shows its bots as bots, so the stand-in is shown as a "
                "bot too: stand_in_debrief does not apply (remove it)",
            )
        elif len(plan.participant_positions) < 2:
            self.problem(
                where,
                f"condition {name!r} has one participant seat, which the stand-in never "
                "takes: stand_in_debrief does not apply (remove it)",
            )
        return text

    def seat_plan(self, data: dict, path: Path) -> SeatPlan:
        missing = [s for s in SEATS if s not in data]
        unknown = sorted(set(data) - set(SEATS))
        if missing or unknown:
            extra = f"; unknown seat(s) {', '.join(unknown)}" if unknown else ""
            gap = f"; missing {', '.join(missing)}" if missing else ""
            self.problem(
                path, f"the seat plan must fill exactly the four seats N E S W{gap}{extra}"
            )
        seats = []
        for seat in SEATS:
            who = data.get(seat, PARTICIPANT)
            if not isinstance(who, str) or (
                who != PARTICIPANT and not self.is_bot(who, external=True)
            ):
                self.problem(
                    path,
                    f"seat {seat}: {who!r} is neither {PARTICIPANT!r} nor a known "
                    "bot (BIDDER+PLAYER names of bots/registry.py, e.g. BIS+SRP, or "
                    "ext:<name>, a registered external bot with a live token)",
                )
            seats.append(who)
        if PARTICIPANT not in seats and not missing:
            self.problem(path, f"the seat plan has no {PARTICIPANT!r} seat")
        return SeatPlan((seats[0], seats[1], seats[2], seats[3]))

    def screening(self, data: dict | None) -> Screening | None:
        if data is None:
            return None
        self.only(data, ("screening",), {"questions", "failure_text"})
        failure_text = self.value(data, ("screening",), "failure_text", str, "")
        questions = []
        for path, question in self.tables(data, ("screening",), "questions"):
            self.only(question, path, {"text", "options", "eligible"})
            text = self.value(question, path, "text", str)
            options = self.value(question, path, "options", list) or []
            if len(options) < 2 or not all(isinstance(o, str) and o.strip() for o in options):
                self.problem((*path, "options"), "options must be two or more non-empty texts")
            eligible = self.value(question, path, "eligible", list) or []
            if not eligible or any(e not in options for e in eligible):
                self.problem(
                    (*path, "eligible"), "eligible must list one or more of the options"
                )
            questions.append(ScreeningQuestion(text, tuple(options), tuple(eligible)))
        if not questions:
            self.problem(("screening",), "screening needs at least one [[screening.questions]]")
        return Screening(tuple(questions), failure_text)

    def quiz(self, data: dict | None) -> Quiz | None:
        if data is None:
            return None
        self.only(data, ("quiz",), {"attempts", "questions", "failure_text"})
        attempts = self.number(data, ("quiz",), "attempts", 1, 10, 1)
        failure_text = self.value(data, ("quiz",), "failure_text", str, "")
        questions = []
        for path, question in self.tables(data, ("quiz",), "questions"):
            self.only(question, path, {"text", "options", "answer"})
            text = self.value(question, path, "text", str)
            options = self.value(question, path, "options", list) or []
            if len(options) < 2 or not all(isinstance(o, str) and o.strip() for o in options):
                self.problem((*path, "options"), "options must be two or more non-empty texts")
            answer = self.value(question, path, "answer", str)
            if answer is not None and answer not in options:
                self.problem((*path, "answer"), f"the answer {answer!r} is not among the options")
            questions.append(Question(text, tuple(options), answer))
        return Quiz(tuple(questions), attempts, failure_text)

    def questionnaire(self, data: dict | None) -> Questionnaire | None:
        if data is None:
            return None
        self.only(data, ("questionnaire",), {"items"})
        items: list[LikertItem | TextItem] = []
        ids = set()
        for path, item in self.tables(data, ("questionnaire",), "items"):
            self.only(item, path, {"id", "kind", "text", "scale", "max_length", "required"})
            item_id = self.text(item, path, "id", ITEM_ID, "an id (a-z, 0-9, _)")
            if item_id in ids:
                self.problem((*path, "id"), f"a second item with id {item_id!r}")
            ids.add(item_id)
            kind, text = self.value(item, path, "kind", str), self.value(item, path, "text", str)
            required = self.value(item, path, "required", bool, True)
            if kind == "likert":
                scale = self.value(item, path, "scale", list) or []
                if len(scale) < 2 or not all(isinstance(s, str) and s.strip() for s in scale):
                    self.problem((*path, "scale"), "a Likert scale needs two or more labels")
                items.append(LikertItem(item_id, text, tuple(scale), required))
            elif kind == "text":
                limit = self.number(item, path, "max_length", 1, 10_000, DEFAULT_TEXT_MAX)
                items.append(TextItem(item_id, text, limit, required))
            else:
                self.problem((*path, "kind"), f"kind must be likert or text, not {kind!r}")
        return Questionnaire(tuple(items))

    def recruitment(self, data: dict) -> Recruitment:
        path, default = ("recruitment",), Recruitment()
        self.only(data, path, {"id_param", "study_param", "session_param"})
        names = [
            self.text(data, path, key, PARAM, "a query parameter name", getattr(default, key))
            for key in ("id_param", "study_param", "session_param")
        ]
        return Recruitment(*names)

    def timeouts(self, waiting: dict, dropout: dict) -> Timeouts:
        self.only(waiting, ("waiting_room",), {"timeout_seconds", "stand_in_bot"})
        self.only(dropout, ("dropout",), {"missed_turns", "absent_seconds"})
        seconds = self.number(waiting, ("waiting_room",), "timeout_seconds", 5, 3600, None)
        bot = self.bot(waiting, ("waiting_room",), "stand_in_bot", DEFAULT_BOT)
        missed = self.number(dropout, ("dropout",), "missed_turns", 1, 100, 3)
        # Above a minute: Chrome wakes a page hidden for five minutes once a minute.
        absent = self.number(dropout, ("dropout",), "absent_seconds", 90, 3600, 120)
        return Timeouts(seconds, bot, missed, absent)
