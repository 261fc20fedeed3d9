"""train_bidinfo and bidinfo_error: a card-location table learned and its error reported."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management import call_command


def test_commands_learn_a_table_and_report_its_error(tmp_path: Path, capsys) -> None:
    out = tmp_path / "bidinfo.json"
    call_command("train_bidinfo", "--deals", "12", "--seed", "7", "--output", str(out),
                 "--no-progress")  # fmt: skip
    content = json.loads(out.read_text())
    assert content["seed"] == 7 and content["deals"] == 12
    assert sum(map(sum, content["hands"])) + content["blind_bids_skipped"] == 48
    call_command("bidinfo_error", "--deals", "2", "--seed", "8", "--table", str(out),
                 "--no-progress")  # fmt: skip
    text = capsys.readouterr().out
    assert "held-out deals 2 (seed 8" in text
    assert "average error, uniform: 44.44%" in text and "average error, learned:" in text
