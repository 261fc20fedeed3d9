"""The study file: the worked example reads, and each refusal names its line."""

from __future__ import annotations

from decimal import Decimal

import pytest

from studies import definition
from studies.definition import StudyFileError, parse
from studies.file_lines import FileLines
from studies.study_types import PARTICIPANT, LikertItem, TextItem
from tests.studies.conftest import EXAMPLE, example_text, line_of


def problems_of(text: str) -> list[str]:
    with pytest.raises(StudyFileError) as caught:
        parse(text, "s.toml")
    return caught.value.problems


def test_the_worked_example_reads_in_full() -> None:
    study = definition.load(EXAMPLE)
    assert study.slug == "partner-trust-pilot" and study.pilot and study.seed == 20250611
    assert study.rules.winning_goal == 100 and study.rules.losing_goal == -100
    assert study.play.matches == 1 and study.play.rounds is None
    first, second = study.conditions
    assert first.seat_plan.seats == ("BIS+SRP", "RB+SRP", PARTICIPANT, "RB+SRP")
    assert first.seat_plan.participant_positions == (2,) and first.disclosure == "bots"
    assert second.seat_plan.participant_positions == (0, 2)
    assert second.seat_plan.bot_positions == (1, 3)
    assert second.disclosure == "names" and "computer programs" in second.debrief
    assert study.quiz is not None and study.quiz.attempts == 2
    assert [q.answer for q in study.quiz.questions] == [
        "The player across the table",
        "Spades",
        "50 points",
    ]
    assert study.questionnaire is not None
    kinds = [type(item) for item in study.questionnaire.items]
    assert kinds == [LikertItem, LikertItem, LikertItem, TextItem]
    assert study.recruitment.id_param == "PROLIFIC_PID"
    assert study.recruitment.session_param == "SESSION_ID"
    assert study.completion.code == "C7XK2P9Q"
    assert study.completion.redirect_url.startswith("https://")
    assert study.completion.no_consent_url.endswith("cc=NOCONSNT")
    assert study.quiz.failure_text.strip().endswith("return your submission on Prolific.")
    assert study.timeouts.waiting_seconds == 60 and study.timeouts.stand_in_bot == "BIS+SRP"
    assert study.timeouts.dropout_missed_turns == 3
    assert study.bonus is not None and study.bonus.per_point == Decimal("0.01")
    assert study.to_json()["bonus"] == {
        "per_point": "0.01",
        "currency": "GBP",
        "cap": "1.5",
        "partial_after_rounds": None,
    }


def test_an_unknown_bot_names_its_seat_plan_line() -> None:
    text = example_text().replace(
        'E = "RB+SRP", S = "participant"', 'E = "XYZ+SRP", S = "participant"'
    )
    line = line_of(text, "XYZ+SRP")
    assert problems_of(text) == [
        f"s.toml:{line}: seat E: 'XYZ+SRP' is neither 'participant' nor a known bot "
        "(BIDDER+PLAYER names of bots/registry.py, e.g. BIS+SRP, or ext:<name>, a "
        "registered external bot with a live token)"
    ]


def test_an_unknown_stand_in_bot_names_its_line() -> None:
    text = example_text().replace('stand_in_bot = "BIS+SRP"', 'stand_in_bot = "BIS+NOPE"')
    [problem] = problems_of(text)
    assert problem.startswith(f"s.toml:{line_of(text, 'BIS+NOPE')}: unknown bot 'BIS+NOPE'")


@pytest.mark.parametrize(
    ("seats", "says"),
    [
        ('{ N = "participant", E = "BIS+SRP", S = "participant" }', "missing W"),
        (
            '{ N = "participant", E = "BIS+SRP", S = "participant", W = "BIS+SRP", X = "RB+SRP" }',
            "unknown seat(s) X",
        ),
    ],
)
def test_a_seat_plan_that_does_not_fill_four_seats_names_its_line(seats: str, says: str) -> None:
    old = '{ N = "participant", E = "BIS+SRP", S = "participant", W = "BIS+SRP" }'
    text = example_text().replace(old, seats)
    [problem] = problems_of(text)
    line = line_of(text, "seats = ", after='name = "two-humans"')
    assert problem.startswith(f"s.toml:{line}: the seat plan must fill exactly the four seats")
    assert says in problem


def test_a_seat_plan_without_a_participant_is_refused() -> None:
    text = example_text().replace('S = "participant", W = "RB+SRP"', 'S = "MS+WRP", W = "RB+SRP"')
    [problem] = problems_of(text)
    assert problem == f"s.toml:{line_of(text, 'MS+WRP')}: the seat plan has no 'participant' seat"


def test_bots_under_players_names_without_a_debrief_are_refused_at_the_condition() -> None:
    text = example_text()
    start, end = text.index("debrief = "), text.index("[consent]")
    text = text[:start] + text[end:]
    [problem] = problems_of(text)
    line = line_of(text, 'disclosure = "names"')
    assert problem.startswith(f"s.toml:{line}: condition 'two-humans' shows its bots under")
    assert "needs a debrief" in problem


def test_a_quiz_answer_not_among_the_options_names_its_line() -> None:
    text = example_text().replace('answer = "Spades"', 'answer = "Clubs"')
    assert problems_of(text) == [
        f"s.toml:{line_of(text, 'Clubs')}: the answer 'Clubs' is not among the options"
    ]


@pytest.mark.parametrize("key", ["redirect_url", "no_consent_url"])
@pytest.mark.parametrize(
    "url", ["ftp://example.org/done", "javascript:alert(1)", "https://", "not a url"]
)
def test_a_redirect_that_is_not_a_web_url_names_its_line(key: str, url: str) -> None:
    text = example_text()
    old = text[text.index(f"{key} = ") : text.index("\n", text.index(f"{key} = "))]
    text = text.replace(old, f'{key} = "{url}"')
    [problem] = problems_of(text)
    assert problem.startswith(f"s.toml:{line_of(text, f'{key} = ')}: {key} ")
    assert "is not an http(s) URL" in problem


def test_every_problem_is_listed_at_once_with_its_own_line() -> None:
    text = (
        example_text()
        .replace('slug = "partner-trust-pilot"', 'slug = "Not A Slug"')
        .replace("winning_goal = 100", "winning_goal = -5")
        .replace("attempts = 2", "attempts = 0")
        .replace('kind = "text"', 'kind = "essay"')
        .replace("missed_turns = 3", "missed_turn = 3")
    )
    problems = problems_of(text)
    assert [p.split(":")[1] for p in problems] == [
        str(line_of(text, "slug = ")),
        str(line_of(text, "winning_goal = ")),
        str(line_of(text, "attempts = 0")),
        str(line_of(text, 'kind = "essay"')),
        str(line_of(text, "missed_turn = 3")),
    ]
    assert "rules: the winning goal must be between 1 and 10000" in problems[1]
    assert "unknown key 'missed_turn'" in problems[4]


def test_a_file_that_is_not_toml_names_the_parsers_line() -> None:
    [problem] = problems_of('slug = "a"\ntitle = \n')
    assert problem.startswith("s.toml:2: not valid TOML")


def test_lines_skip_multiline_strings_and_count_arrays_of_tables() -> None:
    text = 'a = """\nb = 1\n"""\n[[c]]\nx = 1\n[[c]]\nx = 2\n[c.d]\ny = 3\n'
    lines = FileLines.scan(text)
    assert ("b",) not in lines.lines
    assert lines.line_of(("c", 1, "x")) == 7
    assert lines.line_of(("c", 1, "d", "y")) == 9
    assert lines.line_of(("c", 0, "missing")) == 4


def test_a_study_of_rounds_plays_that_many_rounds_a_match_and_refuses_goals() -> None:
    text = example_text().replace("matches = 1 ", "rounds = 4 ")
    goals = [line_of(text, "winning_goal = 100"), line_of(text, "losing_goal = -100")]
    assert problems_of(text) == [
        f"s.toml:{goals[0]}: with [play] rounds = 4 a match is 4 rounds long: "
        "winning_goal does not apply (remove it)",
        f"s.toml:{goals[1]}: with [play] rounds = 4 a match is 4 rounds long: "
        "losing_goal does not apply (remove it)",
    ]
    text = text.replace("winning_goal = 100\n", "").replace("losing_goal = -100\n", "")
    study = parse(text, "s.toml")
    assert study.play.rounds == 4 and study.rules.round_limit == 4
    assert (study.rules.winning_goal, study.rules.losing_goal) == (10_000, -10_000)
    assert study.to_json()["rules"]["round_limit"] == 4


def test_the_round_limit_is_set_by_play_not_by_the_rules() -> None:
    text = example_text().replace("blind_nil = false", "blind_nil = false\nround_limit = 3")
    assert problems_of(text) == [
        f"s.toml:{line_of(text, 'round_limit = 3')}: set the rounds per match in [play] "
        "(rounds = N)"
    ]


def test_a_studys_tables_are_silent_unless_its_file_says_what_may_be_said() -> None:
    assert definition.load(EXAMPLE).play.talk == "off"
    text = example_text().replace("rated = true", 'rated = true\ntalk = "reactions"')
    assert parse(text, "s.toml").play.talk == "reactions"
    wrong = example_text().replace("rated = true", 'rated = true\ntalk = "shout"')
    line = line_of(wrong, 'talk = "shout"')
    assert any(p.startswith(f"s.toml:{line}:") and "talk must be one of" in p
               for p in problems_of(wrong))  # fmt: skip
