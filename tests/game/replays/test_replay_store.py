"""Rounds analysed off the move path and stored once (game/replays/tasks.py), by
the schedulers after a round ends and by ``manage.py analyse_rounds``."""

from __future__ import annotations

import csv
import datetime
import importlib
import io
import json
import os
import signal
import threading
import time
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from game.driver.scheduling import CeleryScheduler, ThreadScheduler
from game.models import RoundRecordRow, Table
from game.replays import tasks
from game.replays.analysis import FORMAT, seat_losses
from game.replays.models import RoundAnalysis
from game.research import tallies
from game.research.analytics import Filters, card_play_quality
from game.research.storage import round_row_from_record
from spadesite.celery import app
from tests.support import ROOT
from tests.support.helpers import make_table, play_humans
from tests.support.replay_rounds import ENDING, FILLER, written_record

pytestmark = pytest.mark.django_db(transaction=True)
migration_losses = importlib.import_module(
    "game.replays.migrations.0002_round_analysis_losses"
).losses_of

# The round worked by hand: its 52 positions solve in about a second.
DOC = written_record([0, 3, 4, 3], f"{FILLER}  {ENDING}")


def stored_rounds(n: int, days_ago: int = 0) -> list[RoundRecordRow]:
    table = Table.objects.create(rules=DOC["rules"], status=Table.Status.FINISHED)
    finished = timezone.now() - datetime.timedelta(days=days_ago)
    rows = []
    for i in range(n):
        row = round_row_from_record(DOC, table=table, version=52 * (i + 1), kinds="BBBB",
                                    bot_names=["BIS+SRP"] * 4, finished_at=finished)  # fmt: skip
        row.round_number = i + 1
        row.save()
        rows.append(row)
    return rows


def test_the_task_is_routed_to_its_own_queue() -> None:
    assert app.amqp.router.route({}, tasks.ANALYSE_TASK)["queue"].name == tasks.QUEUE == "replays"


def test_a_round_is_analysed_once_with_its_alternatives() -> None:
    (row,) = stored_rounds(1)
    assert tasks.analyse_row(row) is True
    stored = RoundAnalysis.objects.get(round=row)
    assert stored.format == FORMAT and stored.error == "" and stored.seconds > 0
    assert [c["card"] for c in stored.result["cards"]][36:40] == ["JH", "5H", "2H", "KH"]
    assert stored.result["cards"][37]["points_lost"] == 79
    assert len(stored.alternatives) == 52
    assert {a["card"] for a in stored.alternatives[44]} == {"AH", "9D"}
    # its losses per seat, kept for the tallies, added to them in the same write
    assert stored.losses == seat_losses(stored.result) == migration_losses(stored.result)
    assert stored.losses["cards"] == [13] * 4 and stored.losses["dd_points_lost"][2] >= 79
    # (stored_rounds leaves the rounds' own tallies out: the analysis's figures only)
    quality = [{k: v for k, v in cells.items() if k[8] in "QD"} for cells in
               (tallies.stored(), tallies.scan())]  # fmt: skip
    assert quality[0] == quality[1] and quality[0]
    every_type = [r for r in card_play_quality(Filters())["rows"] if r["type"] == 0]
    assert [(r["actor"], r["seat_rounds"]) for r in every_type] == [("BIS+SRP", 4)]
    total = sum(stored.losses["dd_points_lost"])
    assert every_type[0]["points_per_card"]["mean"] == pytest.approx(total / 52)
    # a second writer's analysis of the same round is dropped, the first kept
    assert tasks.analyse_row(row, with_alternatives=False) is False
    assert RoundAnalysis.objects.count() == 1
    assert RoundAnalysis.objects.get(round=row).analysed_at == stored.analysed_at


def test_alternatives_past_their_budget_are_marked_and_not_tried_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from game.replays import rounds, views
    from game.replays.analysis import ALTERNATIVES_BUDGET_SECONDS, OverBudget

    assert ALTERNATIVES_BUDGET_SECONDS > 0
    (row,) = stored_rounds(1)
    with pytest.raises(OverBudget):  # the second pass has a budget of its own
        rounds.all_alternatives(DOC, budget=0.0)
    monkeypatch.setattr(tasks, "all_alternatives", lambda doc: rounds.all_alternatives(doc, 0.0))
    assert tasks.analyse_row(row) is True
    stored = RoundAnalysis.objects.get(round=row)
    assert stored.error == "" and len(stored.result["cards"]) == 52  # the play's analysis stands
    assert stored.alternatives == {"error": "not analysed within the budget (0 s of CPU)"}
    assert not tasks.to_analyse().exists()  # marked: not tried again
    assert tasks.add_alternatives(row) is False
    shown = views._analysis_of(row)
    assert shown["alternatives"] is None
    assert shown["alternatives_error"] == "not analysed within the budget (0 s of CPU)"


def test_a_round_that_does_not_replay_keeps_its_error_and_is_not_tried_again() -> None:
    (row,) = stored_rounds(1)
    RoundRecordRow.objects.filter(pk=row.pk).update(record={**DOC, "tricks": DOC["tricks"][:5]})
    row.refresh_from_db()
    assert tasks.analyse_row(row) is True
    stored = RoundAnalysis.objects.get(round=row)
    assert stored.result is None and "does not replay" in stored.error
    assert not tasks.unanalysed().exists()


def test_the_thread_scheduler_analyses_a_round_after_it_ends(live: Any) -> None:
    """The embedded default: a finished round's table handed to flush_soon (as
    after_commit does) has its round analysed on a thread, after the row is written."""
    table = play_humans(make_table("HHHH"), __import__("random").Random(7))
    assert table.status == Table.Status.FINISHED
    rounds = RoundRecordRow.objects.filter(table=table)
    # on a thread here: a child process would not see the tests' database
    scheduler = ThreadScheduler(lambda *a: "", workers=1, analyse=tasks.analyse_here)
    try:
        scheduler.flush_soon(table.pk)
        deadline = time.monotonic() + 120
        while RoundAnalysis.objects.filter(round__table=table).count() < rounds.count():
            assert time.monotonic() < deadline, "no analysis in time"
            time.sleep(0.2)
    finally:
        scheduler.shutdown()
    for a in RoundAnalysis.objects.filter(round__table=table):
        assert a.error == "" and len(a.result["cards"]) == 52


def test_the_celery_scheduler_sends_the_analysis_to_its_queue(monkeypatch: Any) -> None:
    sent: list[tuple[str, Any, str]] = []

    def send_task(name: str, args: Any = None, queue: str = "", **kw: Any) -> None:
        sent.append((name, args, queue))

    monkeypatch.setattr(tasks.current_app, "send_task", send_task)
    from game.research import tally_flush

    monkeypatch.setattr(tally_flush, "send_to_worker", lambda tables: None)
    scheduler = CeleryScheduler()
    scheduler.flush_soon(5)
    scheduler.flush_soon(3)
    deadline = time.monotonic() + 10
    while not sent:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert sent == [(tasks.ANALYSE_TASK, [[3, 5]], "replays")]
    assert not any(isinstance(x, tuple) and x[0] != tasks.ANALYSE_TASK for x in sent)
    off = CeleryScheduler(analyse=False)
    off.flush_soon(9)
    time.sleep(1.5)
    assert len(sent) == 1


def test_analyse_rounds_resumes_after_ctrl_c_and_never_analyses_a_round_twice(
    monkeypatch: Any,
) -> None:
    old = stored_rounds(2, days_ago=30)
    new = stored_rounds(3)
    calls: list[int] = []
    real = tasks.analyse_row

    def counted(row: RoundRecordRow, with_alternatives: bool = True) -> bool:
        calls.append(row.pk)
        if len(calls) == 3:
            raise KeyboardInterrupt  # Ctrl-C while the third round is analysed
        return real(row, with_alternatives)

    monkeypatch.setattr(tasks, "analyse_row", counted)
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit):
        call_command("analyse_rounds", "--no-alternatives", stdout=out, stderr=err)
    assert "stopped: 2 round(s) analysed" in out.getvalue()
    assert "analysing rounds [" in err.getvalue()
    assert RoundAnalysis.objects.count() == 2
    # --since: only the newer rounds; --limit: one of them
    call_command("analyse_rounds", "--no-alternatives", "--since",
                 (timezone.now() - datetime.timedelta(days=1)).date().isoformat(),
                 "--limit", "1", stdout=out, stderr=err)  # fmt: skip
    assert RoundAnalysis.objects.count() == 3
    call_command("analyse_rounds", "--no-alternatives", stdout=out, stderr=err)
    analysed = sorted(RoundAnalysis.objects.values_list("round_id", flat=True))
    assert analysed == sorted(r.pk for r in old + new)
    # each round analysed once, but the one Ctrl-C interrupted (nothing stored for it)
    assert sorted(calls) == sorted([*{*calls}, calls[2]])
    # without --no-alternatives: the second pass of the rounds analysed without it
    call_command("analyse_rounds", stdout=out, stderr=err)
    assert out.getvalue().splitlines()[-1].startswith(f"analysed {len(old + new)} round(s) in")
    assert not RoundAnalysis.objects.filter(alternatives__isnull=True).exists()
    call_command("analyse_rounds", stdout=out, stderr=err)
    assert out.getvalue().rstrip().endswith("no round to analyse")
    with pytest.raises(CommandError):
        call_command("analyse_rounds", "--since", "yesterday")


def test_sigterm_stops_analyse_rounds_as_ctrl_c_does(monkeypatch: Any) -> None:
    """A process manager's stop: what is stored stays, the run says so, and
    SIGTERM's own handler is back afterwards."""
    assert threading.current_thread() is threading.main_thread()  # else the kill ends pytest
    stored_rounds(3)
    calls: list[int] = []
    real = tasks.analyse_row

    def counted(row: RoundRecordRow, with_alternatives: bool = True) -> bool:
        calls.append(row.pk)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGTERM)  # handled between bytecodes: now
        return real(row, with_alternatives)

    monkeypatch.setattr(tasks, "analyse_row", counted)
    before = signal.getsignal(signal.SIGTERM)
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("analyse_rounds", "--no-alternatives", stdout=out, stderr=io.StringIO())
    assert "stopped: 1 round(s) analysed; run again to go on" in out.getvalue()
    assert RoundAnalysis.objects.count() == 1
    assert signal.getsignal(signal.SIGTERM) is before
    call_command("analyse_rounds", "--no-alternatives", stdout=out, stderr=io.StringIO())
    assert RoundAnalysis.objects.count() == 3


def test_since_takes_a_date_or_a_date_and_time() -> None:
    from game.replays.management.commands.analyse_rounds import parse_since

    utc = datetime.UTC
    assert parse_since("2026-11-27") == timezone.make_aware(datetime.datetime(2026, 11, 27))
    assert parse_since("2026-11-27T08:28:18.5+00:00") == datetime.datetime(
        2026, 11, 27, 8, 28, 18, 500000, tzinfo=utc
    )
    assert parse_since("2026-11-27T08:30") == timezone.make_aware(
        datetime.datetime(2026, 11, 27, 8, 30)
    )
    with pytest.raises(CommandError, match="date and time like"):
        parse_since("27/11/2026")


def test_the_exports_carry_the_analysis_per_card_and_per_seat() -> None:
    from game.research import exports
    from game.research.analytics import Filters

    done, waiting = stored_rounds(2)
    tasks.analyse_row(done, with_alternatives=False)
    head, *lines = csv.reader(io.StringIO("".join(exports.iter_csv(Filters()))))
    rows = {r[0]: dict(zip(head, r, strict=True)) for r in lines}
    result = RoundAnalysis.objects.get(round=done).result
    cards = result["cards"]
    for seat in "NESW":
        mine = [c for c in cards if c["seat"] == seat]
        assert rows[str(done.pk)][f"dd_points_lost_{seat.lower()}"] == str(
            sum(c["points_lost"] for c in mine)
        )
        assert rows[str(done.pk)][f"dd_tricks_lost_{seat.lower()}"] == str(
            sum(c["tricks_lost"] for c in mine)
        )
        assert rows[str(waiting.pk)][f"dd_points_lost_{seat.lower()}"] == ""
    assert rows[str(done.pk)]["dd_points_lost_s"] == str(79)  # the 5H; the 2S, AH, 9D lose 0
    items = {
        x["round_id"]: x
        for x in (json.loads(line) for line in "".join(exports.iter_jsonl(Filters())).splitlines())
    }
    assert items[waiting.pk]["analysis"] is None
    got = items[done.pk]["analysis"]
    assert [(c["card"], c["dd_points_lost"], c["dd_tricks_lost"]) for c in got["cards"]] == [
        (c["card"], c["points_lost"], c["tricks_lost"]) for c in cards
    ]
    assert got["dd_points_lost"][3] == 1 and got["makeable"] == result["makeable"]


CHILD_SCRIPT = """
import random, sys
import django
django.setup()
from game.models import RoundRecordRow
from game.replays import child
from game.replays.models import RoundAnalysis
from tests.support.helpers import make_table, play_humans

table = play_humans(make_table("HHHH"), random.Random(7), until_version=56)  # one round
child.analyse([table.pk])
rows = RoundRecordRow.objects.filter(table=table)
done = RoundAnalysis.objects.filter(round__in=rows, error="")
print(rows.count(), done.count(), len(done.first().result["cards"]))
"""


def test_the_embedded_default_analyses_in_a_child_process(tmp_path: Any) -> None:
    """The solver holds the GIL: the embedded server's analyses run in a spawned
    child (game.replays.child), which must find the server's own database."""
    import os
    import subprocess
    import sys

    root = ROOT
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "spadesite.settings",
        "SPADES_REPLAY_ANALYSIS": "0",  # the script calls the child itself
    }
    env.pop("REDIS_URL", None)
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v0"]
    subprocess.run(migrate, cwd=root, env=env, check=True, timeout=300)
    done = subprocess.run(
        [sys.executable, "-c", CHILD_SCRIPT], cwd=root, env=env, check=True, timeout=300,
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.stdout.split() == ["1", "1", "52"], done.stderr[-2000:]


def test_analyse_rounds_celery_needs_a_redis_broker_and_sane_batches() -> None:
    (row,) = stored_rounds(1)
    with pytest.raises(CommandError, match="a Redis URL"):
        call_command("analyse_rounds", "--celery", "--broker", "memory://")
    with pytest.raises(CommandError, match="--batch"):
        call_command("analyse_rounds", "--celery", "--broker", "redis://x:1/0", "--batch", "0")
    assert not RoundAnalysis.objects.exists()  # nothing sent, nothing changed
