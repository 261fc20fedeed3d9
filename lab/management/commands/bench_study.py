"""``manage.py bench_study``: a study's launch, simulated (issue 56, item 4).

``--participants`` participants arrive evenly over ``--arrival-seconds``,
each with a cookie jar and a recruitment ID of their own, and go the whole
way as a browser does (``lab.bench.study_participant``): consent,
instructions, quiz, waiting room and its poll, a match over the table's
websocket (a decision every ``--think`` seconds), questionnaire, debrief,
completion. The study is a short variant of ``docs/examples/study.toml``
(``lab.bench.study_stack.short_study``: ``--rounds`` rounds per match, a
waiting-room time-out of ``--wait-timeout`` seconds, the same conditions),
loaded with ``load_study`` into each stack (``--stacks``: the embedded
default; the Redis stack with ``--processes`` Daphne processes behind nginx,
Celery workers and beat on a fresh PostgreSQL database).

Reports, per stack: completed of started, errors by kind and page, time to
seat, p50/p95/p99 of every page, of the poll and of act-to-state (``act``
sent to the ``state`` frame with a newer version on that socket), CPU
seconds of each process over the run, the servers' logs scanned for
``deadlock detected`` and ``too many clients``, and ``export_study``'s files
checked (one row per participant, nobody at two tables, one payment row
each). Everything it starts or makes is removed at the end unless ``--keep``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.bench import study_stack
from lab.bench.bench_figures import percentile
from lab.bench.study_participant import Figures, Participant, Settings, StudyPlan
from lab.stack import stackprocs

STACKS = ("embedded", "redis")
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test"
# The pages in the order a participant meets them (others, e.g. a problem page, after).
PAGE_ORDER = (
    "consent", "consent POST", "instructions", "instructions POST", "quiz", "quiz POST",
    "waiting", "poll", "to table", "table page", "questionnaire", "questionnaire POST",
    "debrief", "debrief POST", "completion",
)  # fmt: skip
# After the last participant: the servers' work left over (a round's analysis,
# the tallies) still counts to the run's CPU.
SETTLE_SECONDS = 3.0


def _pair(text: str) -> tuple[float, float]:
    low, _, high = text.partition(",")
    values = (float(low), float(high or low))
    if not 0 <= values[0] <= values[1]:
        raise ValueError(text)
    return values


class Command(BaseCommand):
    help = (
        "A study's launch simulated: participants arriving evenly, each through consent, "
        "quiz, waiting room, a match over the websocket, questionnaire and completion; "
        "pages, poll and act-to-state percentiles, errors, CPU, log scan and export checks."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--stacks", default=",".join(STACKS), help="embedded, redis")
        parser.add_argument(
            "--processes", type=int, default=2, help="Daphne processes of the redis stack"
        )
        parser.add_argument("--participants", type=int, default=60)
        parser.add_argument(
            "--arrival-seconds", type=float, default=60.0, help="arrivals spread evenly over it"
        )
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--think", default="0.5,1.5", help="MIN,MAX seconds before each decision at the table"
        )
        parser.add_argument("--rounds", type=int, default=1, help="rounds per match")
        parser.add_argument(
            "--wait-timeout", type=int, default=10,
            help="the waiting room's time-out (seconds, at least 5): a stand-in then",
        )  # fmt: skip
        parser.add_argument(
            "--bot-delay", type=float, default=None,
            help="the bots' think time in seconds (default: the example's)",
        )  # fmt: skip
        parser.add_argument(
            "--retries", type=int, default=3,
            help="a participant's reloads of the link after failures before giving up",
        )  # fmt: skip
        parser.add_argument(
            "--seat-timeout", type=float, default=300.0, help="longest wait for a seat (s)"
        )
        parser.add_argument("--match-timeout", type=float, default=900.0, help="longest match (s)")
        parser.add_argument(
            "--redis-url", default=os.environ.get("TEST_REDIS_URL") or DEFAULT_REDIS_URL
        )
        parser.add_argument(
            "--postgres-url", default=os.environ.get("TEST_DATABASE_URL") or DEFAULT_POSTGRES_URL
        )
        parser.add_argument(
            "--keep", action="store_true",
            help="keep each stack's scratch folder (logs, export) and PostgreSQL database",
        )  # fmt: skip
        parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        stacks = [s.strip() for s in opts["stacks"].split(",") if s.strip()]
        unknown = set(stacks) - set(STACKS)
        if unknown or not stacks:
            raise CommandError(f"unknown stack(s) {sorted(unknown)}: use {', '.join(STACKS)}")
        try:
            think = _pair(opts["think"])
        except ValueError as e:
            raise CommandError("--think is MIN,MAX seconds, 0 <= MIN <= MAX") from e
        if opts["participants"] < 1 or opts["arrival_seconds"] < 0 or opts["processes"] < 1:
            raise CommandError("--participants and --processes at least 1, --arrival-seconds >= 0")
        if opts["wait_timeout"] < 5 or opts["rounds"] < 1:
            raise CommandError("--wait-timeout at least 5 (a study file's minimum), --rounds >= 1")
        text = study_stack.short_study(opts["rounds"], opts["wait_timeout"], opts["bot_delay"])
        self.stdout.write(
            f"bench_study: {opts['participants']} participants arriving evenly over "
            f"{opts['arrival_seconds']:g} s, seed {opts['seed']}, a decision every "
            f"{think[0]:g}-{think[1]:g} s, {opts['rounds']} round(s) per match, waiting-room "
            f"time-out {opts['wait_timeout']} s, {os.cpu_count()} CPUs"
        )
        results = {}
        for stack in stacks:
            results[stack] = self.run_stack(stack, text, think, opts)
            self.report(stack, results[stack])
        if len(results) > 1:
            self.stdout.write("\n" + "\n".join(comparison(results)))
        if opts["json"]:
            Path(opts["json"]).write_text(json.dumps(results, indent=2))

    # ----- one stack -----------------------------------------------------------------

    def run_stack(
        self, name: str, text: str, think: tuple[float, float], opts: dict[str, Any]
    ) -> dict[str, Any]:
        processes = 1 if name == "embedded" else opts["processes"]
        stack = study_stack.Stack(name, processes, opts["redis_url"], opts["postgres_url"])
        try:
            self.stdout.write(f"\n[{name}] starting {processes} Daphne process(es) ...")
            started = time.monotonic()
            stack.start()
            study_file = stack.tmp / "study.toml"
            study_file.write_text(text)
            stack.manage("load_study", str(study_file))
            up = time.monotonic() - started
            plan = StudyPlan(**study_stack.plan_of(text))
            settings = Settings(
                origin=f"http://127.0.0.1:{stack.port}",
                think=think,
                retries=opts["retries"],
                seat_timeout=opts["seat_timeout"],
                match_timeout=opts["match_timeout"],
            )
            self.stdout.write(f"[{name}] up in {up:.0f} s; participants arriving ...")
            pg_log = stack.postgres_log_sizes()
            cpu_before = stack.cpu()
            sampler = study_stack.ConnectionSampler(stack)
            if name == "redis":
                sampler.start()
            wall = time.monotonic()
            figures, raw_ids = asyncio.run(
                run_participants(plan, settings, opts["participants"],
                                 opts["arrival_seconds"], opts["seed"])
            )  # fmt: skip
            run_seconds = time.monotonic() - wall
            time.sleep(SETTLE_SECONDS)
            cpu_after = stack.cpu()
            wall = time.monotonic() - wall
            connections = sampler.stop() if sampler.is_alive() else None
            analysis = stack.analysis_progress()
            out = stack.tmp / "export"
            export: dict[str, Any]
            try:
                stack.manage(
                    "export_study", plan.slug, "--out", str(out), "--with-payments",
                    "--include-pilot",
                )  # fmt: skip
                consented = sum(o["consented"] for o in figures.outcomes)
                export = study_stack.check_export(
                    out, set(raw_ids), consented, figures.endings.get("completed", 0)
                )
            except stackprocs.StackError as e:
                export = {"ok": False, "failed": str(e)[-500:]}
            summary = summarise(figures, opts["participants"])
            summary.update(
                stack=name,
                processes=processes,
                participants=opts["participants"],
                arrival_seconds=opts["arrival_seconds"],
                seed=opts["seed"],
                stack_up_seconds=round(up, 1),
                run_seconds=round(run_seconds, 1),
                cpu_seconds={
                    k: round(cpu_after.get(k, 0.0) - cpu_before.get(k, 0.0), 2)
                    for k in sorted(cpu_before.keys() | cpu_after.keys())
                },
                cpu_wall_seconds=round(wall, 1),
                analysis=analysis,
                postgres_connections=connections,
                logs=stack.scan_logs(),
                postgres_log=stack.scan_postgres_log(pg_log),
                exited=stack.exited(),
                export=export,
            )
            if opts["keep"]:
                summary["kept"] = str(stack.tmp) + (
                    f" (database {stack.database_name})" if stack.database_name else ""
                )
            return summary
        except stackprocs.StackError as e:
            raise CommandError(f"[{name}] {e}") from e
        finally:
            stack.close(keep=opts["keep"])

    # ----- output --------------------------------------------------------------------

    def report(self, name: str, s: dict[str, Any]) -> None:
        w = self.stdout.write
        label = (
            "embedded (SQLite, one Daphne)"
            if name == "embedded"
            else (f"redis (PostgreSQL + Redis, {s['processes']} Daphne behind nginx, Celery)")
        )
        endings = ", ".join(f"{n} {k}" for k, n in sorted(s["endings"].items()))
        w(
            f"\n{label}: {s['completed']} completed of {s['started']} started "
            f"({endings}); {s['participants']} arrivals over {s['arrival_seconds']:g} s, "
            f"run {s['run_seconds']:.0f} s"
        )
        w(
            f"  HTTP 5xx: {s['http_5xx']}; errors: {s['error_total']}; reloads after an error: "
            f"{s['reloads']}; acts sent {s['acts']}; resyncs {s['resyncs']}"
        )
        for line in s["errors"]:
            w(f"    {line['count']:>5}  {line['kind']} at {line['stage']}")
        seat = s["time_to_seat_s"]
        w(
            f"  time to seat (quiz sent to table page): n {seat['n']}  p50 {_f(seat['p50'])} s"
            f"  p95 {_f(seat['p95'])} s  p99 {_f(seat['p99'])} s  max {_f(seat['max'])} s"
        )
        w(f"  {'ms':<22}{'n':>6}{'p50':>9}{'p95':>9}{'p99':>9}{'max':>9}")
        for page, t in s["timings_ms"].items():
            w(
                f"  {page:<22}{t['n']:>6}{_f(t['p50']):>9}{_f(t['p95']):>9}"
                f"{_f(t['p99']):>9}{_f(t['max']):>9}"
            )
        cpu = ", ".join(f"{k} {v:.1f}" for k, v in s["cpu_seconds"].items())
        w(f"  CPU seconds over the run ({s['cpu_wall_seconds']:.0f} s): {cpu}")
        a = s["analysis"]
        w(
            f"  replay analysis at the end: {a['rounds_analysed']} of {a['rounds_stored']} "
            "stored rounds analysed"
        )
        logs = s["logs"]
        found = "; ".join(
            f"{proc}: " + ", ".join(f"{k} {v}" for k, v in signs.items())
            for proc, signs in logs.items()
        )
        w(f"  logs (lines): {found or 'nothing of note'}")
        pg = s["postgres_log"]
        if pg is not None:
            w(
                "  PostgreSQL's log over the run (whole server): "
                + ", ".join(f"{k} {v}" for k, v in pg.items())
            )
        conns = s["postgres_connections"]
        if conns is not None:
            w(
                f"  PostgreSQL backends of the study's database (sampled each second): "
                f"peak {conns['peak']} connections, {conns['last']} at the end, "
                f"{conns['backends_seen']} seen, their CPU {conns['backend_cpu_seconds']:.1f} s"
            )
        if s["exited"]:
            w(f"  processes that exited during the run: {s['exited']}")
        e = s["export"]
        if "failed" in e:
            w(f"  export_study FAILED: {e['failed']}")
        else:
            w(
                f"  export: {e['participant_rows']} participant rows for "
                f"{e['participants_consented']} consented "
                f"(one each: {_yes(e['one_row_per_participant'])}), "
                f"{len(e['at_two_tables'])} at two tables, {e['payment_rows']} payment rows "
                f"(one each: {_yes(e['one_payment_row_each'])}), {e['completed_rows']} completed "
                f"rows for {e['completed_by_clients']} completions seen: "
                f"{'OK' if e['ok'] else 'FAILED'}"
            )
        if "kept" in s:
            w(f"  kept: {s['kept']}")


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"


def stats(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50": _round(percentile(values, 50)),
        "p95": _round(percentile(values, 95)),
        "p99": _round(percentile(values, 99)),
        "max": _round(max(values) if values else None),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def summarise(figures: Figures, started: int) -> dict[str, Any]:
    order = [p for p in PAGE_ORDER if p in figures.pages]
    order += sorted(set(figures.pages) - set(order))
    timings = {page: stats(figures.pages[page]) for page in order}
    timings["act-to-state"] = stats(figures.act_to_state)
    errors = [
        {"stage": stage, "kind": kind, "count": n}
        for (stage, kind), n in sorted(figures.errors.items(), key=lambda kv: -kv[1])
    ]
    return {
        "started": started,
        "completed": figures.endings.get("completed", 0),
        "endings": dict(figures.endings),
        "http_5xx": sum(e["count"] for e in errors if e["kind"].startswith("HTTP 5")),
        "error_total": sum(e["count"] for e in errors),
        "errors": errors,
        "reloads": figures.reloads,
        "acts": figures.acts,
        "resyncs": figures.resyncs,
        "time_to_seat_s": stats(figures.seat_seconds),
        "timings_ms": timings,
        "participants_detail": sorted(figures.outcomes, key=lambda o: o["participant"]),
    }


def comparison(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        f"{'stack':<10}{'completed':>12}{'5xx':>6}{'errors':>8}{'seat p95 s':>12}"
        f"{'page p99 ms':>13}{'poll p99 ms':>13}{'act p99 ms':>12}"
    ]
    for name, s in results.items():
        pages = [
            t["p99"] for p, t in s["timings_ms"].items()
            if p not in ("poll", "act-to-state") and t["p99"] is not None
        ]  # fmt: skip
        lines.append(
            f"{name:<10}{s['completed']:>6} of {s['started']:<4}{s['http_5xx']:>6}"
            f"{s['error_total']:>8}{_f(s['time_to_seat_s']['p95']):>12}"
            f"{_f(max(pages) if pages else None):>13}"
            f"{_f(s['timings_ms'].get('poll', {}).get('p99')):>13}"
            f"{_f(s['timings_ms']['act-to-state']['p99']):>12}"
        )
    return lines


async def run_participants(
    plan: StudyPlan, settings: Settings, count: int, arrival_seconds: float, seed: int
) -> tuple[Figures, list[str]]:
    """Every participant arriving evenly over ``arrival_seconds``, each with an
    RNG of their own from ``seed``; the figures and the recruitment IDs used."""
    figures = Figures()
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.5
    master = random.Random(seed)
    step = arrival_seconds / count if count > 1 else 0.0
    people = [
        Participant(
            n, f"bench-{seed}-{n:04d}-{master.getrandbits(32):08x}", plan, settings, figures,
            random.Random(master.getrandbits(64)),
        )
        for n in range(count)
    ]  # fmt: skip
    await asyncio.gather(*(p.run(start + n * step) for n, p in enumerate(people)))
    return figures, [p.raw_id for p in people]
