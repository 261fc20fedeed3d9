"""The success curves' data: resumable, deterministic self-play chunks
(lab/tournaments/selfplay.py) and train_success_curves from round records."""

from __future__ import annotations

import json
import random
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bots import success_curves as sc
from bots.base import Bot
from bots.srp import SRP
from game.engine.match import Match
from game.engine.record import record_of
from game.engine.rules import PAPER_RULES
from game.engine.state import Phase
from game.engine.view import view_for
from lab.tournaments.selfplay import (
    NoisyBIS,
    SelfPlayConfig,
    play_chunk,
    run_selfplay,
    samples_of_chunks,
)


def test_selfplay_chunks_resume_and_are_deterministic(tmp_path) -> None:
    config = SelfPlayConfig(seed="t", eps=0.5, floor=0.0, chunk_rounds=8)
    log = tmp_path / "s.samples.jsonl"
    first = run_selfplay(config, 16, log, workers=1)
    assert [c["chunk"] for c in first] == [0, 1] and all(c["rounds"] == 8 for c in first)
    more = run_selfplay(config, 24, log, workers=1)
    assert more[:2] == json.loads(json.dumps(first))
    assert more[2] == json.loads(json.dumps(play_chunk(config, 2)))
    assert len(log.read_text().splitlines()) == 4  # header + 3 chunks
    samples = samples_of_chunks(more)
    assert len(samples) == sum(len(c["samples"]) for c in more) > 0
    assert sum(c["explored"] for c in more) > 0
    with pytest.raises(ValueError):
        run_selfplay(SelfPlayConfig(seed="other", chunk_rounds=8), 8, log)


def test_command_from_records_and_from_db_error(tmp_path, monkeypatch) -> None:
    spy = NoisyBIS(1.0, 0.0)
    bot = Bot(spy, SRP())
    lines = []
    match = Match(PAPER_RULES, "cmd")
    rng = random.Random(0)
    while not match.is_over and len(lines) < 40:
        r = match.round
        match.apply(bot.act(view_for(match, r.to_act), rng))
        if r.phase is Phase.DONE:
            lines.append(json.dumps(record_of(r)))
        if match.is_over:
            match = Match(PAPER_RULES, f"cmd/{len(lines)}")
    path = tmp_path / "rounds.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "sc.npz"
    with open(tmp_path / "log.txt", "w") as log:
        call_command("train_success_curves", "--from-records", str(path), "--output", str(out),
                     "--min-samples", "1", stdout=log)  # fmt: skip
    loaded = sc.read(out)
    assert loaded.meta["source"]["kind"] == "records"
    assert loaded.meta["source"]["rounds"] == len(lines)
    assert sc.check_monotone(loaded.table)
    monkeypatch.setitem(sys.modules, "game.models", None)  # the model cannot be imported
    with pytest.raises(CommandError, match="from-db"):
        call_command("train_success_curves", "--from-db", "--output", str(out))
