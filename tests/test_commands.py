"""Every management command of the project runs in CI once, at a tiny size.

:data:`SMOKE_RUNS` names, for each command, the test that runs it; a command
with a PostgreSQL path (a branch on the database vendor, a COPY, a stack of
its own) is also run on PostgreSQL, by the test :data:`POSTGRES_RUNS` names.
A test is named ``FILE::TEST``, FILE being the test file's path under
``tests/`` or any ending of it that names one file (``test_exports.py``), so
that a move between test folders keeps the entries. The project's commands
are read from Django (``get_commands()``), those of every app whose code sits
in this repository: a new command, or a new app's, fails here until a test
runs it.
"""

from __future__ import annotations

import ast
import inspect
import re
from functools import cache
from importlib import import_module
from pathlib import Path

from django.apps import apps
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"

SMOKE_RUNS = {
    # the server's commands
    "close_abandoned_tables": "test_abandoned.py::test_the_command_closes_them",
    "export_rounds": "test_exports.py::test_export_and_import_commands",
    "import_rounds": "test_exports.py::test_export_and_import_commands",
    "rebuild_tallies": "test_tallies.py::test_tallies_give_the_scans_figures_on_random_data",
    "sweep_overdue_turns": "test_sweeper.py::test_the_command_and_celery_beat_sweep",
    "train_success_curves":
        "test_success_curves_db.py::test_the_curves_are_fitted_on_the_humans_or_the_bis_seats",
    # the benchmarks
    "bench_bots": "test_bench_bots.py::test_prints_every_figure_and_writes_json",
    "bench_dashboard":
        "test_bench_commands.py::test_bench_dashboard_fills_times_and_removes_its_rows_on_sqlite",
    "bench_engine": "test_bench_commands.py::test_bench_engine_times_a_few_rounds",
    "bench_server": "test_bench_commands.py::test_bench_server_runs_both_stacks_for_a_moment",
    "bench_solver": "test_bench_solver.py::test_prints_each_k_and_writes_json",
    "bench_workers":
        "test_bench_commands.py::test_bench_workers_counts_a_workers_moves_for_a_second",
    # the studies: tournaments, the league, tables and calibrations
    "bid_stats": "test_learned.py::"
        "test_the_shipped_learned_bots_play_a_duplicate_pair_and_bid_stats_reads_its_log",
    "bidinfo_error": "test_bidinfo.py::test_commands_learn_a_table_and_report_its_error",
    "build_tables": "test_tables.py::test_build_tables_command_writes_records_and_checks",
    "calibrate_uct": "test_calibrate_uct.py::test_prints_and_writes_the_figures",
    "league": "test_league.py::test_the_command_writes_the_page_and_the_table",
    "nil_sets": "test_study_commands.py::test_nil_sets_counts_the_nils_of_two_short_games",
    "search_regret": "test_calibrate_uct.py::test_search_regret_prints_and_writes_the_figures",
    "sim_cost": "test_sim.py::"
        "test_the_cost_command_reports_each_deal_count_and_k_s_zero_never_changes_a_bid",
    "tournament": "test_tournament_command.py::test_prints_a_summary_and_writes_json",
    # training
    "nnb_curve": "test_study_commands.py::test_nnb_curve_two_tiny_points",
    "train_bidinfo": "test_bidinfo.py::test_commands_learn_a_table_and_report_its_error",
    "train_nnb": "test_learned.py::"
        "test_train_nnb_lowers_the_loss_resumes_and_reloads_with_identical_bids",
    "train_qp": "test_learned.py::"
        "test_train_qp_lowers_the_loss_in_each_iteration_and_reloads_with_identical_plays",
    "train_spb": "test_study_commands.py::test_train_spb_one_iteration_of_four_rounds",
}  # fmt: skip

DASHBOARD_ON_POSTGRES = (
    "test_bench_commands.py::test_bench_dashboard_and_rebuild_tallies_on_postgres"
)
POSTGRES_RUNS = {
    # its COPY filler; the tallies rebuilt with COPY (game.tallies.rebuild)
    "bench_dashboard": DASHBOARD_ON_POSTGRES,
    "rebuild_tallies": DASHBOARD_ON_POSTGRES,
    # their stacks: a scratch PostgreSQL database each
    "bench_server": "test_bench_commands.py::test_bench_server_runs_both_stacks_for_a_moment",
    "bench_workers":
        "test_bench_commands.py::test_bench_workers_counts_a_workers_moves_for_a_second",
}  # fmt: skip

# What in a command's own source shows a PostgreSQL path.
POSTGRES_SIGNS = re.compile(r"postgres|\.vendor\b|\bCOPY\b", re.I)


def in_repository(path: str | Path) -> bool:
    """Code of this repository (an installed package inside it, as CI's .venv, is not)."""
    try:
        parts = Path(path).resolve().relative_to(ROOT).parts
    except ValueError:
        return False
    return not {"site-packages", "dist-packages"} & set(parts)


def project_commands() -> dict[str, str]:
    """The project's commands: name -> app (apps whose code is in this repository)."""
    ours = {c.name for c in apps.get_app_configs() if in_repository(c.path)}
    return {name: app for name, app in get_commands().items() if app in ours}


@cache
def files_of_tests() -> list[str]:
    return sorted(p.relative_to(TESTS).as_posix() for p in TESTS.rglob("test_*.py"))


def problems_of(node_id: str, command: str) -> str | None:
    """What is wrong with a registry entry: None when ``FILE::TEST`` names one test
    file, a test of that name in it, and a file that names the command."""
    file, _, test = node_id.partition("::")
    found = [f for f in files_of_tests() if f == file or f.endswith("/" + file)]
    if len(found) != 1:
        return f"{node_id}: {len(found)} test files named {file!r} under tests/ ({found})"
    path = TESTS / found[0]
    tree = ast.parse(path.read_text(), str(path))
    scope: list[ast.stmt] = tree.body
    *classes, name = test.split("::")
    for cls in classes:
        scope = next((n.body for n in scope if isinstance(n, ast.ClassDef) and n.name == cls), [])
    if not any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
               for n in scope):  # fmt: skip
        return f"{node_id}: no test {test} in tests/{found[0]}"
    texts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
             and isinstance(n.value, str)]  # fmt: skip
    if not any(t == command or command in t.split() for t in texts):
        return f"{node_id}: tests/{found[0]} never names the command {command!r}"
    return None


def test_the_project_commands_are_found() -> None:
    commands = project_commands()
    assert {"tournament", "export_rounds", "bench_dashboard"} <= commands.keys()
    assert "migrate" not in commands and "runserver" not in commands  # Django's, daphne's


def test_every_project_command_has_a_smoke_run() -> None:
    missing = sorted(set(project_commands()) - SMOKE_RUNS.keys())
    assert missing == [], f"commands no test runs (add a smoke run to SMOKE_RUNS): {missing}"


def test_every_command_with_a_postgres_path_runs_on_postgres() -> None:
    signs = []
    for name, app in project_commands().items():
        source = inspect.getsource(import_module(f"{app}.management.commands.{name}"))
        if POSTGRES_SIGNS.search(source):
            signs.append(name)
    missing = sorted(set(signs) - POSTGRES_RUNS.keys())
    assert missing == [], f"commands with a PostgreSQL path not run on PostgreSQL: {missing}"


def test_every_entry_names_a_command_and_a_test_that_runs_it() -> None:
    commands = project_commands()
    stale = sorted((SMOKE_RUNS.keys() | POSTGRES_RUNS.keys()) - commands.keys())
    assert stale == [], f"entries for commands the project no longer has: {stale}"
    wrong = [problem for registry in (SMOKE_RUNS, POSTGRES_RUNS)
             for command, node_id in sorted(registry.items())
             if (problem := problems_of(node_id, command))]  # fmt: skip
    assert wrong == []


def test_the_checks_find_a_missing_test_and_an_ambiguous_file() -> None:
    assert problems_of("test_commands.py::test_the_project_commands_are_found", "migrate") is None
    assert "no test" in (problems_of("test_commands.py::test_nothing", "migrate") or "")
    assert "2 test files" in (problems_of("test_dashboard.py::test_x", "x") or "")
    unnamed = "-".join(["no", "such", "command"])
    assert "never names" in (problems_of("test_commands.py::in_repository", unnamed) or "")
    assert not in_repository(ROOT / ".venv/lib/python3.11/site-packages/daphne")
    assert in_repository(ROOT / "game")
