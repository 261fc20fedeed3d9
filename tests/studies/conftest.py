"""A study loaded from the worked example, and study files made from its text:
the example itself (``study``), its stand-in told apart from the seat plans'
bots (``own_stand_in_study``, which the tests of the tables take as their
``study``), and with bots that cost nothing (``cheap_study``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from studies.loading import load_study
from studies.models import Study
from tests.support.study_tables import CHEAP

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "study.toml"

THIRD_CONDITION = """
[[conditions]]
name = "all-bots-partner"
seats = { N = "RB+SRP", E = "BIS+SRP", S = "participant", W = "BIS+SRP" }
"""


def example_text() -> str:
    return EXAMPLE.read_text()


def line_of(text: str, fragment: str, after: str = "") -> int:
    """The line (from 1) of the first line holding ``fragment`` after ``after``."""
    start = text.index(after) if after else 0
    return text[: text.index(fragment, start)].count("\n") + 1


@pytest.fixture
def study_file(tmp_path: Path):
    """Writes a study file from text (the example by default) and gives its path."""

    def write(text: str | None = None, name: str = "study.toml") -> Path:
        path = tmp_path / name
        path.write_text(example_text() if text is None else text)
        return path

    return write


@pytest.fixture
def study(study_file) -> Study:
    return load_study(study_file())[0]


@pytest.fixture
def own_stand_in_study(study_file) -> Study:
    """The example, its stand-in told apart from the seat plans' bots."""
    text = example_text().replace('stand_in_bot = "BIS+SRP"', 'stand_in_bot = "RB+SRP"')
    return load_study(study_file(text))[0]


@pytest.fixture
def cheap_study(study_file) -> Study:
    """The example with bots that cost nothing to run, for matches played out."""
    text = example_text().replace("BIS+SRP", CHEAP).replace("RB+SRP", CHEAP)
    return load_study(study_file(text))[0]


@pytest.fixture
def three_conditions(study_file) -> Study:
    return load_study(study_file(example_text() + THIRD_CONDITION))[0]
