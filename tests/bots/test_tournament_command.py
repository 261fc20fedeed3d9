"""``manage.py tournament``: a readable summary, a JSON file, and clear errors."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("tournament", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_prints_a_summary_and_writes_json(tmp_path: Path) -> None:
    output = tmp_path / "results.json"
    out, err = run(
        "--ns", "RB+WRP", "--ew", "MS+WRP", "--games", "4", "--goal", "200", "--lose", "-100",
        "--seed", "1", "--workers", "1", "--duplicate", "--output", str(output),
    )  # fmt: skip
    assert "seed 1, 4 games" in out
    assert "RB+WRP" in out and "MS+WRP" in out and "95% CI" in out
    assert "points per round by round type" in out and "nil" in out
    assert "4/4 games" in err  # the progress bar
    data = json.loads(output.read_text())
    assert data["games"] == 4 and data["config"]["duplicate"] is True
    assert len((tmp_path / "results.games.jsonl").read_text().splitlines()) == 5
    # Started again: everything is resumed from the log.
    out, _ = run(
        "--ns", "RB+WRP", "--ew", "MS+WRP", "--games", "4", "--seed", "1", "--duplicate",
        "--output", str(output), "--no-progress",
    )  # fmt: skip
    assert "4 resumed from the log" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ns", "RB+WRP", "--ew", "XYZ+WRP"], r"bidders are .*RB.*MS.*IO"),
        (["--ns", "RB+WRP", "--ew", "MS+WRP", "--games", "0"], "at least 1"),
        (["--ns", "RB+WRP", "--ew", "MS+WRP", "--games", "3", "--duplicate"], "even"),
        (["--ns", "RB+WRP", "--ew", "MS+WRP", "--goal", "50", "--lose", "60"], "losing goal"),
        (["--ns", "RB+WRP", "--ew", "MS+WRP", "--workers", "0"], "workers"),
    ],
)
def test_bad_arguments_are_clear_errors(args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run(*args, "--no-progress")
