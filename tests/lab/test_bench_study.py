"""``manage.py bench_study``: a handful of participants through the whole study on
the embedded stack (and, with the services, on the Redis stack), figures sane;
its parts (the study variant, the cookie jar, the export checks) on their own.
Registered in tests/test_commands.py."""

from __future__ import annotations

import asyncio
import csv
import json
import random
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from lab.bench import study_participant, study_stack
from lab.bench.study_http import Browser
from lab.bench.study_participant import Figures, Participant, Settings, StudyPlan, page_name
from studies import definition

# Quick: a decision every 0.05-0.15 s, bots without think time, the shortest
# waiting-room time-out a study file may have.
QUICK = ["--think", "0.05,0.15", "--bot-delay", "0", "--wait-timeout", "5"]
PAGES = ("consent", "consent POST", "quiz POST", "table page", "questionnaire POST", "completion")


def run(tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    figures = tmp_path / "study.json"
    out = StringIO()
    call_command("bench_study", *args, *QUICK, "--json", str(figures), stdout=out)
    return json.loads(figures.read_text()), out.getvalue()


def assert_sane(s: dict[str, Any], participants: int) -> None:
    assert s["started"] == participants
    assert s["completed"] == participants, s["participants_detail"]
    assert s["http_5xx"] == 0 and s["error_total"] == 0, s["errors"]
    for page in PAGES:
        timing = s["timings_ms"][page]
        assert timing["n"] >= participants and 0 < timing["p50"] <= timing["p99"], page
    assert s["timings_ms"]["act-to-state"]["n"] >= 13 * participants  # a bid, 13 cards each
    assert s["time_to_seat_s"]["n"] == participants
    assert s["export"]["ok"], s["export"]
    assert s["export"]["participant_rows"] == participants
    assert not s["exited"]
    assert all("deadlock detected" not in signs for signs in s["logs"].values())
    assert any(name.startswith("daphne") for name in s["cpu_seconds"])
    assert 0 <= s["analysis"]["rounds_analysed"] <= s["analysis"]["rounds_stored"]


def test_bench_study_takes_a_few_participants_through_the_embedded_stack(
    tmp_path: Path,
) -> None:
    data, text = run(
        tmp_path, "--stacks", "embedded", "--participants", "4", "--arrival-seconds", "2"
    )
    assert set(data) == {"embedded"}
    assert_sane(data["embedded"], 4)
    assert "4 completed of 4 started" in text and "act-to-state" in text
    assert "export: 4 participant rows for 4 consented" in text


@pytest.mark.stack
def test_bench_study_takes_a_few_participants_through_the_redis_stack(
    tmp_path: Path, redis_url: str, postgres_url: str
) -> None:
    data, _ = run(
        tmp_path, "--stacks", "redis", "--processes", "2", "--participants", "4",
        "--arrival-seconds", "2", "--redis-url", redis_url, "--postgres-url", postgres_url,
    )  # fmt: skip
    s = data["redis"]
    assert_sane(s, 4)
    assert {"daphne 1", "daphne 2", "worker bots", "nginx"} <= s["cpu_seconds"].keys()
    assert s["postgres_connections"]["peak"] >= 1
    assert s["postgres_log"] is None or s["postgres_log"]["deadlock detected"] == 0


def test_the_short_study_is_a_valid_study_file_with_the_examples_conditions() -> None:
    text = study_stack.short_study(rounds=1, wait_seconds=7, bot_delay=0.25)
    parsed = definition.parse(text, "short.toml").to_json()
    example = definition.parse(study_stack.EXAMPLE.read_text(), "study.toml").to_json()
    assert parsed["slug"] == study_stack.SLUG
    assert parsed["play"]["rounds"] == 1 and parsed["play"]["bot_delay"] == 0.25
    assert parsed["timeouts"]["waiting_seconds"] == 7
    assert parsed["conditions"] == example["conditions"]
    plan = study_stack.plan_of(text)
    questions = parsed["quiz"]["questions"]
    assert [q["options"][n] for q, n in zip(questions, plan["quiz_answers"], strict=True)] == [
        q["answer"] for q in questions
    ]
    assert [item["id"] for item in plan["items"]] == [
        "partner_trust", "partner_skill", "enjoyment", "comments",
    ]  # fmt: skip


def test_the_cookie_jar_keeps_and_deletes_as_a_browser_does() -> None:
    browser = Browser("http://127.0.0.1:1")
    browser.keep("csrftoken=abc; expires=Sat, 27 Nov 2027 16:00:00 GMT; Max-Age=31449600; Path=/")
    browser.keep("sessionid=s1; HttpOnly; Path=/; SameSite=Lax")
    assert browser.cookie_header() == "csrftoken=abc; sessionid=s1"
    browser.keep('sessionid=""; expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/')
    assert browser.cookies == {"csrftoken": "abc"}


def test_page_names() -> None:
    assert page_name("s", "/study/s/") == "consent"
    assert page_name("s", "/study/s/state/") == "poll"
    assert page_name("s", "/study/s/table/") == "to table"
    assert page_name("s", "/study/s/completed/") == "completion"
    assert page_name("s", "/t/Zg9Z2UE2/") == "table page"


def write(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_the_export_checks_find_a_second_table_and_a_missing_payment(tmp_path: Path) -> None:
    write(tmp_path / "participants.csv", [
        {"pseudonym": "pa", "stage": "completed"}, {"pseudonym": "pb", "stage": "completed"},
    ])  # fmt: skip
    write(tmp_path / "payments.csv", [
        {"pseudonym": "pa", "recruitment_id": "A", "completed": "true"},
        {"pseudonym": "pb", "recruitment_id": "B", "completed": "true"},
    ])  # fmt: skip
    actions = [
        {"table": "T1", "player_kind": "participant", "player": "pa"},
        {"table": "T2", "player_kind": "participant", "player": "pb"},
    ]
    write(tmp_path / "actions.csv", actions)
    assert study_stack.check_export(tmp_path, {"A", "B"}, 2, 2)["ok"]
    write(tmp_path / "actions.csv", [*actions, {**actions[0], "table": "T3"}])
    checks = study_stack.check_export(tmp_path, {"A", "B"}, 2, 2)
    assert checks["at_two_tables"] == ["pa"] and not checks["ok"]
    write(tmp_path / "actions.csv", actions)
    write(tmp_path / "payments.csv", [
        {"pseudonym": "pa", "recruitment_id": "A", "completed": "true"},
    ])  # fmt: skip
    checks = study_stack.check_export(tmp_path, {"A", "B"}, 2, 2)
    assert not checks["one_payment_row_each"] and not checks["ok"]


async def fake_site(answers: list[tuple[int, str]]) -> tuple[asyncio.Server, int, list[str]]:
    """A server that answers each request with the next (status, Location) of
    ``answers`` (the last one repeated); the request lines it saw."""
    seen: list[str] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append((await reader.readline()).decode().strip())
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
        status, location = answers[min(len(seen) - 1, len(answers) - 1)]
        head = f"HTTP/1.1 {status} X\r\nContent-Length: 2\r\nSet-Cookie: sessionid=k{len(seen)}"
        head += f"\r\nLocation: {location}" if location else ""
        writer.write(f"{head}\r\n\r\nok".encode())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], seen


async def one_participant(port: int, retries: int) -> Figures:
    figures = Figures()
    plan = StudyPlan("s", [1], [])
    settings = Settings(f"http://127.0.0.1:{port}", retries=retries)
    participant = Participant(0, "pid-0", plan, settings, figures, random.Random(1))
    await participant.run(0.0)
    return figures


async def test_a_participant_reloads_the_link_after_a_500_and_gives_up_after_its_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(study_participant, "RELOAD_SECONDS", 0.01)
    server, port, seen = await fake_site([(500, ""), (302, "/study/s/completed/"), (200, "")])
    async with server:
        figures = await one_participant(port, retries=3)
    assert figures.errors == {("consent", "HTTP 500"): 1} and figures.reloads == 1
    assert figures.endings == {"completed": 1}
    assert [line.split()[1].split("?")[0] for line in seen] == [
        "/study/s/", "/study/s/", "/study/s/completed/",
    ]  # fmt: skip
    assert "PROLIFIC_PID=pid-0" in seen[0]

    server, port, seen = await fake_site([(503, "")])
    async with server:
        figures = await one_participant(port, retries=2)
    assert figures.errors == {("consent", "HTTP 503"): 3} and figures.reloads == 2
    assert figures.endings == {"stranded at consent": 1}
