"""build_tables: the BIS probability tables written with their records, and checked."""

from __future__ import annotations

import json

import pytest

from bots import tables as pt
from bots.tables import (
    load_tables,
)


def test_build_tables_command_writes_records_and_checks(tmp_path) -> None:
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    out = tmp_path / "pt.json"
    err = StringIO()
    call_command("build_tables", "--seed", "3", "--deals", "50", "--output", str(out),
                 stdout=StringIO(), stderr=err)  # fmt: skip
    assert "1469/1469 rows" in err.getvalue()
    data = json.loads(out.read_text())
    assert data["seed"] == 3 and data["samples"] == 50 and data["nil"]["samples_per_row"] == 50
    assert data["generator"] == "manage.py build_tables"
    t = load_tables(out)
    assert t.seed == 3 and t.samples == 50 and len(t.nil) == 1469
    # The same seed rebuilds the same rows (the command and python -m bots.tables agree).
    other = tmp_path / "pt2.json"
    assert pt.main(["--seed", "3", "--samples", "50", "--output", str(other)]) == 0
    assert json.loads(other.read_text())["nil"]["rows"] == data["nil"]["rows"]
    report = StringIO()
    call_command("build_tables", "--seed", "3", "--deals", "50", "--output", str(out), "--check",
                 "--no-progress", stdout=report)  # fmt: skip
    assert "0 of 1469 nil rows differ" in report.getvalue()
    report = StringIO()
    call_command("build_tables", "--seed", "4", "--deals", "50", "--output", str(out), "--check",
                 "--no-progress", stdout=report)  # fmt: skip
    assert "0 of 1469 nil rows differ" not in report.getvalue()
    assert json.loads(out.read_text())["seed"] == 3  # --check writes nothing
    with pytest.raises(CommandError, match="at least 1"):
        call_command("build_tables", "--deals", "0", "--output", str(out))
    with pytest.raises(CommandError, match="does not exist"):
        call_command("build_tables", "--deals", "5", "--output", str(tmp_path / "no" / "pt.json"))
