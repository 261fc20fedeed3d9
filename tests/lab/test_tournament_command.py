"""``manage.py tournament``: a readable summary, a JSON file, and clear errors."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
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


def _children(pid: int) -> set[int]:
    kids: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids |= {int(p) for p in (task / "children").read_text().split()}
    return kids


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")  # a zombie has stopped; only its exit status is left


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
def test_sigterm_stops_the_workers_and_keeps_the_log(tmp_path: Path) -> None:
    output = tmp_path / "results.json"
    log = tmp_path / "results.games.jsonl"
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "tournament", "--ns", "BIS+SRP", "--ew", "RB+SRP",
         "--games", "100000", "--seed", "1", "--workers", "2", "--duplicate",
         "--output", str(output), "--no-progress"],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and len(log.read_text().splitlines()) > 3):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run logged no game in 60 s"
            time.sleep(0.1)
        workers = _children(proc.pid)
        assert len(workers) >= 2
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 10
    while any(_running(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_running(w) for w in workers), "the pool's workers outlived the run"
    lines = log.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "header"
    games = [json.loads(line) for line in lines[1:]]  # every line whole
    assert games and all("winner" in g for g in games)
